"""SVDF streams (an int16-state SVDF, the keyword spotter) bit-exact in QEMU, state carried."""

from __future__ import annotations

import numpy as np
import pytest

import modelgen
from mtk.boards import get_board
from mtk.pipeline import run_model
from mtk.runoptions import RunOptions
from mtk.reference import run_reference_sequence
from harness import STEPS
from test_ops_svdf import keyword_frames, keyword_spotter, keyword_svdf  # noqa: F401 (fixtures)


@pytest.mark.qemu
@pytest.mark.parametrize("board", ["mps2/an386", "mps3/corstone300/an547"])
def test_svdf_stream_bit_exact_on_target(board, keyword_svdf, tmp_path):
    """The firmware runs the samples in order, one inference each: the state carries as in TFLM."""
    model, _ = keyword_svdf
    path = tmp_path / "model.tflite"
    path.write_bytes(model)
    samples = [modelgen.random_inputs(model, s) for s in range(STEPS)]
    result = run_model(path, RunOptions(board=get_board(board), runs=1), samples)
    for step, (got, want) in enumerate(zip(result.outputs, run_reference_sequence(model, samples))):
        assert np.array_equal(np.asarray(got[0]).reshape(-1), want[0].reshape(-1)), f"step {step}"


@pytest.mark.qemu
def test_keyword_spotter_stream_bit_exact_on_target(keyword_spotter, tmp_path):
    model, _ = keyword_spotter
    path = tmp_path / "model.tflite"
    path.write_bytes(model)
    frames = keyword_frames(4)
    result = run_model(path, RunOptions(board=get_board("mps2/an386"), runs=1), frames)
    for step, (got, want) in enumerate(zip(result.outputs, run_reference_sequence(model, frames))):
        assert np.array_equal(np.asarray(got[0]).reshape(-1), want[0].reshape(-1)), f"step {step}"
