"""QUANTIZE and DEQUANTIZE (mtk/ops/quantization.py): bit-exact with tflite-micro.

float32 -> int8 (with exact halves, where std::round's half-away-from-zero matters, and
saturation), int8 -> int8 requantization, int8 -> float32 (identical float32 values), and a
float-I/O model (QUANTIZE -> int8 data movement -> DEQUANTIZE) that passes the compiler's
model checks. On Cortex-M4F the float kernels need nothing from libgcc; on the soft-float M3
they need only its single-precision helpers.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import modelgen
from mtk.tflite_builder import ModelBuilder
from harness import HYPOTHESIS, assert_bit_exact, random_models_test, undefined_symbols

pytestmark = pytest.mark.slow   # compiles models with TVM

# libgcc's soft-float single-precision routines (ARM run-time ABI names)
SOFT_FLOAT = re.compile(r"__aeabi_(f\w+|i2f|ui2f|l2f|ul2f)$")


test_quantize_float_random = random_models_test("QUANTIZE")
test_requantize_int8_random = random_models_test("QUANTIZE_INT8")
test_dequantize_random = random_models_test("DEQUANTIZE")


def _quantize_model(n: int, scale: float, zero_point: int) -> bytes:
    b = ModelBuilder(description="quantize")
    x = b.tensor("x", (n,), "float32")
    y = b.tensor("y", (n,), "int8", scale=scale, zero_point=zero_point)
    b.op("QUANTIZE", [x], [y])
    b.inputs([x])
    b.outputs([y])
    return b.build()


@pytest.mark.parametrize("scale, zero_point", [(0.0625, 0), (0.25, -17), (2.0 ** -7, 100), (0.1, 5), (0.037, -128)])
def test_quantize_rounds_halves_away_from_zero_and_saturates(scale, zero_point):
    """x / scale exactly k + 0.5 (power-of-two scales), its float neighbours, zeros and far-out values."""
    halves = (np.arange(-300, 300, dtype=np.float32) + np.float32(0.5)) * np.float32(scale)
    values = np.concatenate([
        halves, np.nextafter(halves, np.float32(np.inf)), np.nextafter(halves, np.float32(-np.inf)),
        np.float32([0.0, -0.0, 1e-30, -1e-30, 1e6, -1e6, 3.4e4, -3.4e4]),
    ]).astype(np.float32)
    assert_bit_exact(_quantize_model(values.size, scale, zero_point), inputs=[[values]])


def test_dequantize_every_int8_value():
    for scale, zero_point in [(0.1, 0), (3.3e-5, -128), (0.0078125, 127), (17.77, 3)]:
        b = ModelBuilder(description="dequantize")
        x = b.tensor("x", (256,), "int8", scale=scale, zero_point=zero_point)
        y = b.tensor("y", (256,), "float32")
        b.op("DEQUANTIZE", [x], [y])
        b.inputs([x])
        b.outputs([y])
        assert_bit_exact(b.build(), inputs=[[np.arange(-128, 128).astype(np.int8)]])


def float_io_model() -> bytes:
    """float input -> QUANTIZE -> PAD -> CONCATENATION (with a constant) -> TRANSPOSE -> DEQUANTIZE -> float output."""
    rng = np.random.default_rng(5)
    q = dict(scale=0.05, zero_point=-3)
    b = ModelBuilder(description="float io")
    x = b.tensor("x", (1, 4, 5, 3), "float32")
    xq = b.tensor("xq", (1, 4, 5, 3), "int8", **q)
    b.op("QUANTIZE", [x], [xq])
    padded = b.tensor("padded", (1, 6, 5, 3), "int8", **q)
    b.op("PAD", [xq, b.const("paddings", np.array([[0, 0], [1, 1], [0, 0], [0, 0]], np.int32))], [padded])
    c = b.const("c", rng.integers(-128, 128, size=(1, 6, 5, 2)).astype(np.int8), **q)
    joined = b.tensor("joined", (1, 6, 5, 5), "int8", **q)
    b.op("CONCATENATION", [padded, c], [joined], axis=3)
    moved = b.tensor("moved", (1, 5, 6, 5), "int8", **q)
    b.op("TRANSPOSE", [joined, b.const("perm", np.array([0, 3, 1, 2], np.int32))], [moved])
    y = b.tensor("y", (1, 5, 6, 5), "float32")
    b.op("DEQUANTIZE", [moved], [y])
    b.inputs([x])
    b.outputs([y])
    return b.build()


def test_float_io_model_is_bit_exact():
    assert_bit_exact(float_io_model())


@st.composite
def float_io_chains(draw) -> bytes:
    """float -> QUANTIZE -> one random int8 data-movement op -> DEQUANTIZE -> float."""
    d = modelgen.HypothesisDraw(draw)
    net = modelgen.Net("float io chain")
    x = modelgen.quantize(net, d, net.model_input(modelgen.any_shape(d), None))
    layer = d.choice((modelgen.concatenation, modelgen.pad, modelgen.strided_slice, modelgen.transpose))
    return net.build(modelgen.dequantize(net, d, layer(net, d, x)))


@settings(HYPOTHESIS, max_examples=8)
@given(model=float_io_chains())
def test_float_io_chain_random(model):
    assert_bit_exact(model)


def test_float_io_builds_for_cortex_m(tmp_path):
    """M4F: the float kernels use the FPU, nothing undefined; M3 (no FPU): only libgcc's soft-float helpers."""
    model = float_io_model()
    assert not undefined_symbols(model, "cortex-m4", tmp_path)
    m3 = undefined_symbols(model, "cortex-m3", tmp_path)
    assert m3 and all(SOFT_FLOAT.match(s) for s in m3), sorted(m3)
    assert not undefined_symbols(modelgen.example_models(seed=3)["QUANTIZE_INT8"], "cortex-m3", tmp_path / "int8")


_RANGES = {"int8": (-128, 128), "int16": (-32768, 32768), "int32": (-2**31, 2**31)}


@pytest.mark.parametrize("src, dst", [("int8", "int16"), ("int16", "int8"), ("int16", "int16"), ("int16", "int32"),
                                      ("int8", "int32"), ("int32", "int8"), ("int32", "int16"), ("float32", "int16"),
                                      ("int16", "float32")])
def test_16x8_edges(src, dst):
    """QUANTIZE between int8, int16 and int32 (Requantize, clamped to the output type), float32 -> int16
    (AffineQuantize), DEQUANTIZE int16 -> float32: what joins 16x8 and int8 parts of a model."""
    quant = {"int8": dict(scale=0.02, zero_point=-5), "int16": dict(scale=0.0007, zero_point=0),
             "int32": dict(scale=0.00001, zero_point=0), "float32": {}}
    b = ModelBuilder(description=f"{src} -> {dst}")
    x = b.tensor("x", (3, 50), src, **quant[src])
    y = b.tensor("y", (3, 50), dst, **quant[dst])
    b.op("DEQUANTIZE" if dst == "float32" else "QUANTIZE", [x], [y])
    b.inputs([x])
    b.outputs([y])
    rng = np.random.default_rng(1)
    if src == "float32":
        samples = [[rng.uniform(-30, 30, size=(3, 50)).astype(np.float32)]]
    else:
        low, high = _RANGES[src] if src != "int32" else (-2**22, 2**22)   # int32: values a 16x8 model carries
        samples = [[rng.integers(low, high, size=(3, 50)).astype(src)] for _ in range(2)]
    assert_bit_exact(b.build(), inputs=samples)
