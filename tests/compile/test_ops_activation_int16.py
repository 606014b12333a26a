"""16x8 activations (mtk/ops/activation_int16.py, softmax.py's int16 path): RELU, RELU6, LEAKY_RELU,
LOGISTIC, TANH and SOFTMAX on int16, bit-exact with tflite-micro's int16 reference kernels on the host.

Each element-wise op runs over all 65536 int16 inputs for hypothesis-drawn quantizations (power-of-two
scales, which LOGISTIC/TANH treat apart, and any others); SOFTMAX over drawn shapes, scales and betas
with random, constant and one-hot rows; TFLM's rejected configurations are ModelErrors naming the op;
the C builds for Cortex-M4 with warnings as errors and needs nothing from libm or libgcc (the chain of all
six in QEMU: tests/target/test_ops_activation_int16_qemu.py).
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mtk.tflite_builder import ModelBuilder
from harness import HYPOTHESIS, assert_bit_exact, compile_error, undefined_symbols

pytestmark = pytest.mark.slow   # compiles models with TVM

ALL_INT16 = np.arange(-32768, 32768, dtype=np.int16).reshape(4, 1, 16384)
Q15 = 2.0 ** -15


def unary_model(op: str, shape, in_quant: tuple[float, int], out_quant: tuple[float, int], **options) -> bytes:
    b = ModelBuilder(description=f"{op} int16")
    x = b.tensor("x", shape, "int16", scale=in_quant[0], zero_point=in_quant[1])
    y = b.tensor("y", shape, "int16", scale=out_quant[0], zero_point=out_quant[1])
    b.op(op, [x], [y], **options)
    b.inputs([x])
    b.outputs([y])
    return b.build()


def scales(low: int = -16, high: int = -4) -> st.SearchStrategy[float]:
    """float32 scales: powers of two or anything between 2^low and 2^high."""
    return st.one_of(st.integers(low, high).map(lambda e: 2.0 ** e),
                     st.floats(2.0 ** low, 2.0 ** high).map(lambda v: float(np.float32(v))))


@st.composite
def element_wise_case(draw, op: str) -> tuple[bytes, str]:
    """A model of `op` over all 65536 int16 inputs, with the quantization TFLM accepts for it."""
    in_scale = draw(scales())
    if op in ("LOGISTIC", "TANH"):
        return unary_model(op, (1, 16384), (in_scale, 0), (Q15, 0)), op
    out = (draw(scales()), 0)
    if op == "RELU6":   # TFLM ignores the output's quantization and keeps a nonzero input zero point
        return unary_model(op, (1, 16384), (in_scale, draw(st.integers(-300, 300))), out), op
    if op == "LEAKY_RELU":
        alpha = float(np.float32(draw(st.one_of(st.floats(0, 1), st.floats(-2, 3)))))
        return unary_model(op, (1, 16384), (in_scale, draw(st.integers(-50, 50))), (out[0], draw(st.integers(-50, 50))),
                           alpha=alpha), op
    return unary_model(op, (1, 16384), (in_scale, 0), out), op


@pytest.mark.parametrize("op", ["RELU", "RELU6", "LEAKY_RELU", "LOGISTIC", "TANH"])
def test_element_wise_all_inputs(op):
    @settings(HYPOTHESIS, max_examples=4)
    @given(case=element_wise_case(op))
    def check(case):
        assert_bit_exact(case[0], inputs=[[part] for part in ALL_INT16])
    check()


@pytest.mark.parametrize("op,in_scale", [("LOGISTIC", 2.0 ** -12), ("TANH", 2.0 ** -12), ("TANH", 2.0 ** -13),
                                         ("TANH", 0.00031), ("LOGISTIC", 2.0 ** -24), ("TANH", 2.5)])
def test_sigmoid_scales_tflm_treats_apart(op, in_scale):
    """The power-of-two scales Eval substitutes a multiplier for, a tiny scale (left shift 31), a large one."""
    assert_bit_exact(unary_model(op, (1, 16384), (in_scale, 0), (Q15, 0)), inputs=[[part] for part in ALL_INT16])


@st.composite
def softmax_case(draw) -> tuple[bytes, list[list[np.ndarray]]]:
    rank = draw(st.integers(1, 4))
    shape = tuple(draw(st.integers(1, 3)) for _ in range(rank - 1)) + (draw(st.integers(1, 300)),)
    beta = float(np.float32(draw(st.sampled_from([1.0, 0.5, 2.0, 0.3]))))
    model = unary_model("SOFTMAX", shape, (draw(scales(-15, -7)), 0), (Q15, 0), beta=beta)
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    one_hot = np.full(shape, -32768, np.int16)
    one_hot[..., rng.integers(0, shape[-1])] = 32767
    inputs = [[rng.integers(-32768, 32768, size=shape).astype(np.int16)],
              [rng.integers(-2000, 2000, size=shape).astype(np.int16)],
              [np.full(shape, rng.integers(-32768, 32768), np.int16)], [one_hot]]
    return model, inputs


@settings(HYPOTHESIS, max_examples=8)
@given(case=softmax_case())
def test_softmax_random(case):
    assert_bit_exact(case[0], inputs=case[1])


def test_softmax_every_difference_and_many_classes():
    """Row i holds -32768 .. -32768 + 256·i in steps of 256 (differences to every row max), and a 4000-class row."""
    x = np.array([np.minimum(np.arange(256) * 256 - 32768, i * 256 - 32768) for i in range(256)], np.int16)
    assert_bit_exact(unary_model("SOFTMAX", (256, 256), (1 / 4096, 0), (Q15, 0), beta=1.0), inputs=[[x]])
    rng = np.random.default_rng(4)
    wide = [[rng.integers(-32768, 32768, size=(1, 4000)).astype(np.int16)], [np.zeros((1, 4000), np.int16)]]
    assert_bit_exact(unary_model("SOFTMAX", (1, 4000), (0.0005, 0), (Q15, 0)), inputs=wide)


@pytest.mark.parametrize("classes", [200, 600])
def test_softmax_int8_to_int16(classes):
    """reference_ops::Softmax<int8_t, int16_t>: the int8 kernel's math with 16 output bits; 600 classes: each row's
    outputs of the 250 exp table entries computed once and looked up."""
    shape = (3, classes)
    b = ModelBuilder(description="softmax int8 -> int16")
    x = b.tensor("x", shape, "int8", scale=0.07, zero_point=-4)
    y = b.tensor("y", shape, "int16", scale=1 / 65536, zero_point=-32768)
    b.op("SOFTMAX", [x], [y], beta=1.0)
    b.inputs([x])
    b.outputs([y])
    rng = np.random.default_rng(6)
    one_hot = np.full(shape, -128, np.int8)
    one_hot[:, 7] = 127
    assert_bit_exact(b.build(), inputs=[[rng.integers(-128, 128, size=shape).astype(np.int8)], [one_hot],
                                        [np.zeros(shape, np.int8)]])


@pytest.mark.parametrize("op,in_quant,out_quant,message", [
    ("RELU", (0.01, 3), (0.01, 0), "zero point 3; TFLM requires 0"),
    ("LOGISTIC", (0.001, 0), (1 / 256, 0), "must be 2\\^-15"),
    ("TANH", (0.001, 0), (Q15, 5), "zero point 5"),
    ("TANH", (3.0, 0), (Q15, 0), "too large"),
    ("SOFTMAX", (0.001, 0), (1 / 256, 0), "scale 1/32768"),
    ("SOFTMAX", (0.001, 2), (Q15, 0), "zero points must be 0"),
    ("HARD_SWISH", (0.001, 0), (0.001, 0), "int16 -> int16; TFLM has no int16 HARD_SWISH kernel"),
])
def test_configurations_tflm_rejects(op, in_quant, out_quant, message):
    error = compile_error(unary_model(op, (1, 8), in_quant, out_quant))
    assert f"({op})" in error and re.search(message, error), error


def activation_chain() -> bytes:
    """Every int16 activation in one model: RELU, LEAKY_RELU, TANH, LOGISTIC, SOFTMAX and a RELU6 side output."""
    b = ModelBuilder(description="int16 activations")
    x = b.tensor("x", (2, 40), "int16", scale=0.0004, zero_point=0)
    r = b.tensor("r", (2, 40), "int16", scale=0.0003, zero_point=0)
    six = b.tensor("six", (2, 40), "int16", scale=0.0004, zero_point=0)
    l = b.tensor("l", (2, 40), "int16", scale=0.0003, zero_point=0)
    t = b.tensor("t", (2, 40), "int16", scale=Q15, zero_point=0)
    s = b.tensor("s", (2, 40), "int16", scale=Q15, zero_point=0)
    y = b.tensor("y", (2, 40), "int16", scale=Q15, zero_point=0)
    b.op("RELU", [x], [r])
    b.op("RELU6", [x], [six])
    b.op("LEAKY_RELU", [r], [l], alpha=0.1)
    b.op("TANH", [l], [t])
    b.op("LOGISTIC", [t], [s])
    b.op("SOFTMAX", [s], [y], beta=1.0)
    b.inputs([x])
    b.outputs([y, six])
    return b.build()


def chain_inputs(count: int) -> list[list[np.ndarray]]:
    rng = np.random.default_rng(9)
    return [[rng.integers(-32768, 32768, size=(2, 40)).astype(np.int16)] for _ in range(count)]


def test_c_needs_no_library_functions(tmp_path):
    """The chain bit-exact on the host; built for Cortex-M4 and the M0+ (no long multiply) it needs nothing."""
    model = activation_chain()
    assert_bit_exact(model, inputs=chain_inputs(3))
    for cpu in ("cortex-m4", "cortex-m0plus"):
        assert undefined_symbols(model, cpu, tmp_path / cpu) == set()


