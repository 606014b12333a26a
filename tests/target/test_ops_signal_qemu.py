"""TFLM's signal-library ops on QEMU: the front-end chain of tests/compile/test_ops_signal.py and micro_speech's
audio_preprocessor models (the int8 one on the an386, the float one on the micro:bit's Cortex-M0), streams
bit-exact with tflite-micro, the noise estimate carried from frame to frame."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import modelgen
import signalgen
from harness import STEPS, mismatches
from mtk.boards import get_board
from mtk.pipeline import RunOptions, run_model
from mtk.reference import run_reference_sequence
from test_ops_signal import AUDIO_PREPROCESSOR, audio_frames, tflite_micro_file


def assert_stream_bit_exact_on(board: str, model: bytes, samples: list[list[np.ndarray]], workdir: Path) -> None:
    """The firmware runs the samples in order, one inference each: the state carries as in TFLM's stream."""
    path = workdir / "model.tflite"
    path.write_bytes(model)
    result = run_model(path, RunOptions(board=get_board(board), runs=1), samples)
    for step, (got, want) in enumerate(zip(result.outputs, run_reference_sequence(model, samples))):
        assert mismatches(np.asarray(got[0]).reshape(want[0].shape), want[0]) == 0, f"step {step}"


@pytest.mark.qemu
def test_front_end_stream_is_bit_exact_on_the_an386(tmp_path):
    model = signalgen.front_end()
    assert_stream_bit_exact_on("mps2/an386", model, [modelgen.random_inputs(model, s) for s in range(STEPS)], tmp_path)


@pytest.mark.qemu
@pytest.mark.parametrize("kind, board", [("int8", "mps2/an386"),
                                         ("float", "microbit")])   # ARMv6-M: 64-bit products and floats in libgcc
def test_audio_preprocessor_stream_is_bit_exact_on_target(kind, board, tmp_path):
    assert_stream_bit_exact_on(board, tflite_micro_file(AUDIO_PREPROCESSOR.format(kind)), audio_frames(seed=6),
                               tmp_path)
