"""TFLM's signal-library ops (mtk/ops/signal.py, c/mtk_signal.h): each op alone and the audio front end's chain,
bit-exact with tflite-micro's interpreter (which registers them) on the host; spectral
subtraction's noise estimate kept in the state region; what TFLM's kernels cannot run refused in one line.
(On QEMU: tests/target/test_ops_signal_qemu.py.)"""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

import flatbuffers
import numpy as np
import pytest
from ai_edge_litert import schema_py_generated as schema
from flatbuffers import flexbuffers

import signalgen
from checkout import TFLITE_MICRO
from harness import (STEPS, assert_bit_exact, assert_state_carries_and_reset_restarts, assert_stream_bit_exact,
                     compile_error, host_model, mismatches)
from mtk.boards import get_board
from mtk.budget import arena_room
from mtk.compiler import check_supported, compile_model, lower_ops, state_region_bytes
from mtk.reader import read_model
from mtk.reference import run_reference_sequence
from mtk.tflite_builder import ModelBuilder
from mtk.tuning import Tuning

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


@pytest.mark.slow
@pytest.mark.parametrize("fft_length", [4, 6, 10, 30, 60, 100, 512])
def test_every_kissfft_butterfly_is_bit_exact(fft_length, tmp_path):
    """Radix 4 and 2 (lengths 2^k), 3 and 5: every stage kissfft takes."""
    model = signalgen.single("SignalRfft", [((2, fft_length - 1), "int16")], [((2, fft_length + 2), "int16")],
                             T=7, fft_length=fft_length)
    assert_bit_exact(model, tmp_path, samples=3)


def test_square_roots_at_the_edges_are_bit_exact(tmp_path):
    """Sqrt32's path below 2^32 (its rounding stops at 0xFFFF), Sqrt64's above."""
    values = [0, 1, 2, 3, 4, 65535**2, 65535**2 + 65535, 2**32 - 1, 2**32, 2**32 + 1, 2**40 + 12345, 2**64 - 1]
    model = signalgen.single("SignalFilterBankSquareRoot", [((len(values),), "uint64"), np.array(0, np.int32)],
                             [((len(values),), "uint32")])
    assert_bit_exact(model, tmp_path, inputs=[[np.array(values, np.uint64)]])


def test_unsigned_constants_beyond_int64_are_bit_exact(tmp_path):
    """A uint64 constant from 2^63 up is written as an unsigned literal (a plain one does not build with -Werror)."""
    b = ModelBuilder(description="mtk test uint64 constants")
    unused, roots = b.tensor("unused", (1,), "uint32"), b.tensor("roots", (3,), "uint32")
    b.custom_op("SignalFilterBankSquareRoot", [b.const("wide", np.array([2**64 - 1, 2**63, 5], np.uint64)),
                                               b.const("bits", np.array(1, np.int32))], [roots])
    b.inputs([unused])
    b.outputs([roots])
    assert_bit_exact(b.build(), tmp_path, samples=1)


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
    graph = read_model(compiled.path.parent / "model.tflite")
    steps, _ = lower_ops(check_supported(graph), Tuning())
    assert state_region_bytes(graph, steps) == 32   # what the board's RAM budget reserves for it
    on_board = compile_model(compiled.path.parent / "model.tflite", compiled.path.parent / "an386", board="mps2/an386")
    assert on_board.memory.arena_limit_bytes == arena_room(get_board("mps2/an386"), 32)
    header = (compiled.path / "include" / f"tvmgen_{compiled.module}.h").read_text()
    assert f"void tvmgen_{compiled.module}_reset(void);" in header
    assert [op["impl"] for op in compiled.to_json()["ops"]] == ["c"] * 9


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


@pytest.mark.parametrize("options, words", [
    (b"\xff\xff\xff", "the options of CUSTOM:SignalWindow are not a readable flexbuffer"),
    (bytes(flexbuffers.Dumps(12)), "the options of CUSTOM:SignalWindow are a flexbuffer int, not a map"),
])
def test_options_that_are_no_flexbuffer_map_are_refused(options, words):
    model = schema.ModelT.InitFromPackedBuf(
        signalgen.single("SignalWindow", [((8,), "int16"), np.ones(8, np.int16)], [((8,), "int16")], shift=1), 0)
    model.subgraphs[0].operators[0].customOptions = list(options)
    builder = flatbuffers.Builder(1024)
    builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
    message = compile_error(bytes(builder.Output()))
    assert words in message and "\n" not in message, message


# ---- micro_speech's audio_preprocessor models, when a tflite-micro checkout or mirror is at hand ----

AUDIO_PREPROCESSOR = "tensorflow/lite/micro/examples/micro_speech/models/audio_preprocessor_{}.tflite"


def tflite_micro_file(path: str) -> bytes:
    """A file of tflite-micro: from a checkout, or HEAD of a bare git mirror; skips the test without either."""
    if (TFLITE_MICRO / path).is_file():
        return (TFLITE_MICRO / path).read_bytes()
    result = subprocess.run(["git", f"--git-dir={TFLITE_MICRO}", "show", f"HEAD:{path}"], capture_output=True)
    if result.returncode != 0:
        pytest.skip(f"no tflite-micro at {TFLITE_MICRO} (MTK_TFLITE_MICRO: a checkout or a git mirror)")
    return result.stdout


def audio_frames(seed: int) -> list[list[np.ndarray]]:
    """STEPS frames of 480 int16 samples: silence, then noise from quiet to clipping."""
    rng = np.random.default_rng(seed)
    levels = [0, 1, 30, 300, 1000, 3000, 10000, 30000, 1e6, 100][:STEPS]
    return [[np.clip(rng.normal(0, level, (1, 480)), -32768, 32767).astype(np.int16)] for level in levels]


@pytest.mark.slow   # compiles CAST, MUL, ... with TVM
@pytest.mark.parametrize("kind", ["int8", "float"])
def test_audio_preprocessor_streams_are_bit_exact(kind, tmp_path):
    """The front end's models as tflite-micro ships them: a stream of frames (the noise estimate carried),
    every output equal to tflite-micro's, float32 ones bit for bit."""
    model = tflite_micro_file(AUDIO_PREPROCESSOR.format(kind))
    host = host_model(model, tmp_path)
    frames = audio_frames(seed=5)
    host.reset()
    for step, (frame, want) in enumerate(zip(frames, run_reference_sequence(model, frames))):
        got = host.run(frame)[0]
        assert mismatches(got, want[0]) == 0, f"step {step}"

