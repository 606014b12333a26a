"""LSTM streams (the classifier over 28 time steps, a 16x8 LSTM) bit-exact in QEMU, states carried."""

from __future__ import annotations

import numpy as np
import pytest

import modelgen
from mtk.boards import get_board
from mtk.pipeline import run_model
from mtk.runoptions import RunOptions
from mtk.reference import run_reference_sequence

from test_ops_lstm import lstm_16x8, lstm_classifier

TARGET_MODELS = {"classifier": lstm_classifier, "16x8": lambda: lstm_16x8(modelgen.Draw(np.random.default_rng(16)))}


@pytest.mark.qemu
@pytest.mark.parametrize("board", ["mps2/an386", "mps3/corstone300/an547"])
@pytest.mark.parametrize("kind", list(TARGET_MODELS))
def test_lstm_streams_bit_exact_on_target(kind, board, tmp_path):
    """The firmware runs the samples in order, one inference each: both states carry as in TFLM."""
    model = TARGET_MODELS[kind]()
    path = tmp_path / "model.tflite"
    path.write_bytes(model)
    samples = [modelgen.random_inputs(model, s) for s in range(3)]
    result = run_model(path, RunOptions(board=get_board(board), runs=1), samples)
    for step, (got, want) in enumerate(zip(result.outputs, run_reference_sequence(model, samples))):
        assert np.array_equal(np.asarray(got[0]).reshape(-1), want[0].reshape(-1)), f"step {step}"
