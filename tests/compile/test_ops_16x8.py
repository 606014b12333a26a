"""16x8 CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED, TRANSPOSE_CONV (mtk/ops/int16x8.py, transpose_conv.py) and
ADD/SUB on int16 (elementwise.py): bit-exact with tflite-micro on the host over random models (tests/modelgen16x8.py:
int64, int32 and int16 biases, both accumulators, per-tensor and per-channel weights, fused activations, int16 zero
points for ADD/SUB), an int16 encoder-decoder and a mixed int8/int16 model; the C builds for Cortex-M4 (in QEMU:
tests/target/test_ops_16x8_qemu.py)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given

import modelgen
import modelgen16x8
from modelgen import Draw
from mtk.compiled import CompiledModel
from mtk.errors import ModelError
from mtk.compiler import compile_model
from mtk.reader import read_model
from mtk.reference import run_reference_batch
from mtk.tflite_builder import ModelBuilder
from harness import (RANDOM, assert_bit_exact, assert_bit_exact_on_c_paths, assert_builds_for_cortex_m4)

pytestmark = pytest.mark.slow   # compiles models with TVM


def _samples(model: bytes, count: int = 2) -> list[list[np.ndarray]]:
    return [modelgen.random_inputs(model, seed) for seed in range(count)]


@pytest.mark.parametrize("op", list(modelgen16x8.FAMILIES))
def test_random_models_are_bit_exact(op, tmp_path_factory):
    @RANDOM
    @given(model=modelgen16x8.strategies[op])
    def check(model):
        work = tmp_path_factory.mktemp(op.lower())
        assert_builds_for_cortex_m4(assert_bit_exact(model, work, _samples(model)), work)
    check()


@pytest.mark.parametrize("cpu", ["cortex-m4", "cortex-m55"])
@pytest.mark.parametrize("op", ["CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "TRANSPOSE_CONV"])
def test_dsp_formulation_is_bit_exact(op, cpu, tmp_path):
    """mtk_dot_2x2_s16 (c/mtk_dot_s16.h) as Cortex-M4/M7/M33 run it (SMLAD on int16 pairs, emulated on the host)
    and in plain C, and the Helium cores' weight rows (mtk_dot_2x2_rows_s16) in plain C: odd depths, odd channel and
    row counts, gathered and direct rows, transpose phases."""
    for seed in range(4):
        work = tmp_path / str(seed)
        work.mkdir()
        assert_bit_exact_on_c_paths(modelgen16x8.generate(op, Draw(np.random.default_rng([seed, 11]))), work, cpu)


def wide_sums_at_the_edge(tmp_path) -> tuple[bytes, list[list[np.ndarray]]]:
    """modelgen16x8.wide_sums and inputs that drive its first channel's chunk sums to their extremes (every row of
    the FULLY_CONNECTED, the CONV_2D's window at pixel (2, 2)): 512 values x·w ≥ 0 at full scale (32767 against
    127, −32768 against −127: up to 2,130,706,432, int32 holds 2,147,483,647), 512 ≤ 0 after them. The
    FULLY_CONNECTED's 512-value blocks go ≥ 0, ≥ 0, ≤ 0, random, ≤ 0, random: its sum stays in range, and chunks of
    1024 values would leave int32 once (wrapped sums of chunks that cancel would still add up right); and a random
    sample."""
    model = modelgen16x8.wide_sums(0)
    (tmp_path / "wide.tflite").write_bytes(model)
    graph = read_model(tmp_path / "wide.tflite")
    samples = [modelgen.random_inputs(model, seed) for seed in range(2)]
    for x, op in zip(samples[0][:2], graph.ops[:2]):   # FULLY_CONNECTED, CONV_2D
        w = graph.tensors[op.inputs[1]].data[0].reshape(-1)
        window = x.reshape(len(x), -1) if op.type == "FULLY_CONNECTED" else x[0, :5, :5].reshape(1, -1)
        signs = np.repeat((1, 1, -1, 0, -1, 0) if op.type == "FULLY_CONNECTED" else (1, -1), 512)
        edge = signs * w[:len(signs)]
        window[:, :len(edge)] = np.where(signs == 0, window[:, :len(edge)], np.where(edge > 0, 32767, -32768))
        if op.type != "FULLY_CONNECTED":
            x[0, :5, :5] = window.reshape(5, 5, -1)
    return model, samples


@pytest.mark.parametrize("cpu", ["cortex-m4", "cortex-m55"])
def test_sums_in_chunks_are_bit_exact(cpu, tmp_path):
    """FULLY_CONNECTED, CONV_2D and TRANSPOSE_CONV whose sums need TFLM's int64 accumulator: the 16x8 GEMM's int32
    sums of chunks of 512 values added in int64 (int16x8.chunk_len), in plain C and as the DSP cores run it."""
    model, samples = wide_sums_at_the_edge(tmp_path)
    assert_bit_exact(model, tmp_path, samples, cpu=cpu, plain_too=True)


@pytest.mark.parametrize("seed", [1, 2])
def test_encoder_decoder_is_bit_exact(seed, tmp_path):
    """CONV/DEPTHWISE down, TRANSPOSE_CONV up, skip ADDs: every op 16x8, each compiled to its int16 kernel."""
    model = modelgen16x8.encoder_decoder(seed)
    samples = _samples(model, 3)
    assert len(np.unique(run_reference_batch(model, samples[:1])[0][0])) > 10   # not a saturated model
    folder = assert_bit_exact(model, tmp_path, samples)
    ops = CompiledModel.load(folder).ops
    assert {op.type for op in ops} == {"CONV_2D", "DEPTHWISE_CONV_2D", "TRANSPOSE_CONV", "ADD"}
    assert all("_s16_" in op.kernel for op in ops if op.type != "ADD")


def test_depthwise_chain_is_bit_exact(tmp_path):
    """Depth multipliers 1, 2, 3, 4 (mtk_depthwise_s16's lane modes, a padded one), odd channels, stride, dilation,
    a requantization shifting right by more than 32: the C built as the host runs it and as DSP cores do."""
    model = modelgen16x8.depthwise_chain(3)
    folder = assert_bit_exact(model, tmp_path, _samples(model, 3), plain_too=True)
    assert all("depthwise_conv_2d_s16" in op.kernel for op in CompiledModel.load(folder).ops)


def test_mixed_int8_int16_model_is_bit_exact(tmp_path):
    model = modelgen16x8.mixed_int8_int16(0)
    assert_builds_for_cortex_m4(assert_bit_exact(model, tmp_path, _samples(model, 3)), tmp_path)


@pytest.mark.parametrize("op", ["ADD", "SUB"])
@pytest.mark.parametrize("scales", [(0.0003, 0.0002, 0.0004), (0.0001, 0.00025, 0.0003)], ids=["first-larger", "second-larger"])
def test_every_int16_value(op, scales, tmp_path):
    """Every int16 value of the first input against random ones, zero points at the range's edges (TFLM's int16
    ADD/SUB read them), a fused RELU within int16."""
    b = ModelBuilder(description=f"{op} int16")
    s1, s2, so = scales
    x1 = b.tensor("x1", (256, 256), "int16", scale=s1, zero_point=-32000)
    x2 = b.tensor("x2", (256, 256), "int16", scale=s2, zero_point=1234)
    y = b.tensor("y", (256, 256), "int16", scale=so, zero_point=-100)
    b.op(op, [x1, x2], [y], fused_activation_function="RELU")
    b.inputs([x1, x2])
    b.outputs([y])
    rng = np.random.default_rng(4)
    every = np.arange(-32768, 32768, dtype=np.int16).reshape(256, 256)
    assert_bit_exact(b.build(), tmp_path, [[every, rng.integers(-32768, 32768, (256, 256)).astype(np.int16)]])


@pytest.mark.parametrize("dtype, in_scale, out_scale, bias", [
    ("int8", 0.024790890514850616, 0.36449846625328064, -88337),
    ("int16", 0.024790890514850616 / 256, 0.36449846625328064 / 256, -24055304),
])
def test_per_tensor_fully_connected_multiplier(dtype, in_scale, out_scale, bias, tmp_path):
    """A per-tensor FULLY_CONNECTED whose multiplier differs in the last bits with s_in·s_w taken in float32
    (what fully_connected_common.cc's source does) or in double (what the tflite-micro interpreter does: the
    scales of the AD model's last layer, the bias putting one output on the rounding edge)."""
    b = ModelBuilder(description="per-tensor fc")
    x = b.tensor("x", (256, 1), dtype, scale=in_scale, zero_point=0)
    w = b.const("w", np.ones((1, 1), np.int8), scale=0.0195566825568676, zero_point=0)
    bias_t = b.const("b", np.array([bias], np.int32), scale=np.float32(in_scale) * np.float32(0.0195566825568676),
                     zero_point=0)
    y = b.tensor("y", (256, 1), dtype, scale=out_scale, zero_point=0)
    b.op("FULLY_CONNECTED", [x, w, bias_t], [y])
    b.inputs([x])
    b.outputs([y])
    assert_bit_exact(b.build(), tmp_path, [[np.arange(-128, 128).astype(dtype).reshape(256, 1)]])


def _long_fully_connected(bias_dtype: str) -> bytes:
    """1000 weights of ±127 against inputs of ±32768: sums up to 4.2e9, beyond int32 (the int64 accumulator)."""
    rng = np.random.default_rng(3)
    b = ModelBuilder(description="long 16x8 fc")
    x = b.tensor("x", (2, 1000), "int16", scale=2.0 ** -12, zero_point=0)
    w = b.const("w", np.where(rng.random((3, 1000)) < 0.5, -127, 127).astype(np.int8), scale=2.0 ** -7, zero_point=0)
    bias = b.const("b", np.array([-5, 1 << 32, -(1 << 32)], bias_dtype), scale=2.0 ** -19, zero_point=0)
    y = b.tensor("y", (2, 3), "int16", scale=1.0, zero_point=0)
    b.op("FULLY_CONNECTED", [x, w, bias], [y])
    b.inputs([x])
    b.outputs([y])
    return b.build()


def test_sums_beyond_int32_are_bit_exact(tmp_path):
    model = _long_fully_connected("int64")
    rng = np.random.default_rng(0)
    samples = [[np.where(rng.random((2, 1000)) < 0.5, -32768, 32767).astype(np.int16)],
               [rng.integers(-32768, 32768, (2, 1000)).astype(np.int16)]]
    assert_bit_exact(model, tmp_path, samples)


def _conv16(x_zp: int = 0, bias_dtype: str = "int64", op: str = "CONV_2D") -> bytes:
    b = ModelBuilder(description="16x8 conv")
    x = b.tensor("x", (1, 4, 4, 2), "int16", scale=0.001, zero_point=x_zp)
    shape = (1, 3, 3, 2) if op == "DEPTHWISE_CONV_2D" else (2, 3, 3, 2)
    w = b.const("w", np.ones(shape, np.int8), scale=0.01, zero_point=0)
    bias = b.const("b", np.zeros(2, bias_dtype), scale=0.00001, zero_point=0)
    y = b.tensor("y", (1, 4, 4, 2), "int16", scale=0.002, zero_point=0)
    b.op(op, [x, w, bias], [y], padding="SAME")
    b.inputs([x])
    b.outputs([y])
    return b.build()


@pytest.mark.parametrize("model, message", [
    (lambda: _conv16(x_zp=3), "op 0 (CONV_2D): int16 tensor 'x' has zero point 3; 16x8 quantization needs 0"),
    (lambda: _conv16(bias_dtype="int32", op="DEPTHWISE_CONV_2D"), "bias must be constant int64 with int16 input"),
    (lambda: _conv16(bias_dtype="int16"), "bias must be constant int32 or int64 with int16 input (got int16)"),
], ids=["zero-point", "depthwise-int32-bias", "conv-int16-bias"])
def test_what_tflm_rejects_is_refused(model, message, tmp_path):
    (tmp_path / "m.tflite").write_bytes(model())
    with pytest.raises(ModelError, match=message.replace("(", r"\(").replace(")", r"\)")):
        compile_model(tmp_path / "m.tflite", tmp_path / "lib")


