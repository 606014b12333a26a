"""TFLM's signal-library ops (mtk/ops/signal.py, c/mtk_signal.h): each op alone and the audio front end's chain,
bit-exact with tflite-micro's interpreter (which registers them) on the host, the chain on QEMU; spectral
subtraction's noise estimate kept in the state region; what TFLM's kernels cannot run refused in one line."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pytest

import modelgen
import signalgen
from harness import (STEPS, assert_bit_exact, assert_state_carries_and_reset_restarts, assert_stream_bit_exact,
                     compile_error, host_model)
from mtk.boards import get_board
from mtk.pipeline import RunOptions, run_model
from mtk.reference import run_reference_sequence

STATEFUL = {"SignalFilterBankSpectralSubtraction"}


def assert_op_bit_exact(op: str, seed: int) -> None:
    model = signalgen.SINGLE_OPS[op](np.random.default_rng(seed))
    with tempfile.TemporaryDirectory() as tmp:
        if op in STATEFUL:
            assert_stream_bit_exact(model, host_model(model, Path(tmp)), seed)
        else:
            assert_bit_exact(model, Path(tmp), samples=3)


@pytest.mark.parametrize("op", sorted(signalgen.SINGLE_OPS))
def test_each_signal_op_is_bit_exact(op):
    assert_op_bit_exact(op, seed=0)


@pytest.mark.slow
@pytest.mark.parametrize("op", sorted(signalgen.SINGLE_OPS))
@pytest.mark.parametrize("seed", range(1, 7))
def test_random_signal_ops_are_bit_exact(op, seed):
    assert_op_bit_exact(op, seed)


@pytest.mark.parametrize("fft_length", [4, 6, 10, 30, 60, 100, 512])
def test_every_kissfft_butterfly_is_bit_exact(fft_length, tmp_path):
    """Radix 4 and 2 (lengths 2^k), 3 and 5: every stage kissfft takes."""
    model = signalgen.single("SignalRfft", [((2, fft_length - 1), "int16")], [((2, fft_length + 2), "int16")],
                             T=7, fft_length=fft_length)
    assert_bit_exact(model, tmp_path, samples=3)


@pytest.fixture(scope="module")
def front_end(tmp_path_factory):
    model = signalgen.front_end()
    return model, host_model(model, tmp_path_factory.mktemp("front_end"))


def test_front_end_stream_is_bit_exact_and_reset_restarts_it(front_end):
    assert_state_carries_and_reset_restarts(*front_end)


def test_noise_estimate_is_state_outside_the_arena(front_end):
    _, host = front_end
    compiled = host.compiled
    (state,) = compiled.state
    assert (state.name, state.dtype, state.shape) == ("op6_noise_estimate", "uint32", (8,))
    assert compiled.memory.state_bytes == 32
    header = (compiled.path / "include" / f"tvmgen_{compiled.module}.h").read_text()
    assert f"void tvmgen_{compiled.module}_reset(void);" in header
    assert [op["impl"] for op in compiled.to_json()["ops"]] == ["c"] * 9


@pytest.mark.slow
@pytest.mark.qemu
def test_front_end_stream_is_bit_exact_on_the_an386(tmp_path):
    model = signalgen.front_end()
    path = tmp_path / "model.tflite"
    path.write_bytes(model)
    samples = [modelgen.random_inputs(model, s) for s in range(STEPS)]
    result = run_model(path, RunOptions(board=get_board("mps2/an386"), runs=1), samples)
    for step, (got, want) in enumerate(zip(result.outputs, run_reference_sequence(model, samples))):
        assert np.array_equal(np.asarray(got[0]).reshape(-1), want[0].reshape(-1)), f"step {step}"


@pytest.mark.parametrize("model, words", [
    (lambda: signalgen.single("SignalRfft", [((16,), "int32")], [((18,), "int32")], T=2, fft_length=16),
     "an FFT of int32; mtk computes TFLM's int16 FFT only"),
    (lambda: signalgen.single("SignalRfft", [((14,), "int16")], [((16,), "int16")], T=7, fft_length=14),
     "fft_length 14 = 2 x 7; TFLM's kissfft computes lengths of factors 2, 3 and 5 only"),
    (lambda: signalgen.single("SignalWindow", [((8,), "int16"), np.ones(8, np.int16)], [((8,), "int16")]),
     "options []; TFLM reads ['shift'] by their position in the map"),
    (lambda: signalgen.single("SignalWindow", [((8,), "int16"), np.ones(8, np.int16)], [((8,), "int16")], shift=40),
     "option shift is 40; it must be in [0, 31]"),
    (lambda: signalgen.single("SignalEnergy", [((8,), "int16")], [((4,), "uint32")], end_index=5, start_index=0),
     "bins [0, 5) of 4 complex inputs and 4 outputs"),
    (lambda: signalgen.single("SignalPCAN", [((4,), "uint32"), ((4,), "uint32"), np.ones(100, np.int16)],
                              [((4,), "uint32")], snr_shift=6),
     "gain table 'c2' has 100 values; TFLM reads up to 125"),
    (lambda: signalgen.single("SignalFilterBankLog", [((4,), "int32")], [((4,), "int16")],
                              input_correction_bits=3, output_scale=64),
     "input 0 'in0' is int32; TFLM's kernel takes uint32"),
])
def test_what_tflm_cannot_run_is_refused_in_one_line(model, words):
    message = compile_error(model())
    assert words in message and "\n" not in message, message
