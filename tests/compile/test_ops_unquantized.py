"""Arithmetic without quantization (mtk/ops/unquantized.py): int32 ADD, MUL, DIV, MINIMUM, MAXIMUM (wrapping,
truncating, broadcasting, the activation range where TFLM applies one), float32 MUL (inf clamped to FLT_MAX as
TFLM's activation range does), CAST between TFLM's types, int32 STRIDED_SLICE and CONCATENATION: bit-exact with
tflite-micro on the host."""

from __future__ import annotations

import numpy as np
import pytest

from harness import assert_bit_exact, compile_error
from mtk.tflite_builder import ModelBuilder


def binary_model(op: str, dtype: str, a_shape, b, y_shape, **options) -> bytes:
    """x (a model input) op b (a constant array, or the shape of a second model input) -> y, unquantized."""
    builder = ModelBuilder(description=f"mtk test {op} {dtype}")
    x = builder.tensor("x", a_shape, dtype)
    other = builder.const("b", b) if isinstance(b, np.ndarray) else builder.tensor("b", b, dtype)
    y = builder.tensor("y", y_shape, dtype)
    builder.op(op, [x, other], [y], **options)
    builder.inputs([x] if isinstance(b, np.ndarray) else [x, other])
    builder.outputs([y])
    return builder.build()


INT32_CASES = {
    "add-overflows": lambda: binary_model("ADD", "int32", (3, 5), (3, 5), (3, 5)),
    "add-relu-is-ignored": lambda: binary_model("ADD", "int32", (2, 4), (1, 4), (2, 4), fused_activation_function="RELU"),
    "mul-overflows-broadcast": lambda: binary_model("MUL", "int32", (2, 3, 4), (3, 1), (2, 3, 4)),
    "mul-relu6": lambda: binary_model("MUL", "int32", (8,), np.array(3, np.int32), (8,),
                                      fused_activation_function="RELU6"),
    "div-truncates": lambda: binary_model("DIV", "int32", (2, 6), np.array([7, -3, 100000, -2, 5, 1], np.int32), (2, 6)),
    "div-scalar-relu-n1": lambda: binary_model("DIV", "int32", (9,), np.array(-26, np.int32), (9,),
                                               fused_activation_function="RELU_N1_TO_1"),
    "minimum": lambda: binary_model("MINIMUM", "int32", (4, 3), (1, 3), (4, 3)),
    "maximum-scalar": lambda: binary_model("MAXIMUM", "int32", (7,), np.array(-5, np.int32), (7,)),
    "float-mul-broadcast": lambda: binary_model("MUL", "float32", (3, 4), np.linspace(-2, 2, 4).astype(np.float32),
                                                (3, 4)),
    "float-mul-overflow-clamps": lambda: binary_model("MUL", "float32", (6,), np.array(1e38, np.float32), (6,)),
    "float-mul-relu": lambda: binary_model("MUL", "float32", (2, 5), (2, 5), (2, 5), fused_activation_function="RELU"),
}


@pytest.mark.slow   # these compile with TVM
@pytest.mark.parametrize("case", sorted(INT32_CASES))
def test_unquantized_arithmetic_is_bit_exact(case, tmp_path):
    assert_bit_exact(INT32_CASES[case](), tmp_path, samples=3)


def cast_model(source: str, target: str) -> bytes:
    builder = ModelBuilder(description=f"mtk test CAST {source} -> {target}")
    x, y = builder.tensor("x", (4, 6), source), builder.tensor("y", (4, 6), target)
    builder.op("CAST", [x], [y])
    builder.inputs([x])
    builder.outputs([y])
    return builder.build()


@pytest.mark.slow
@pytest.mark.parametrize("source", ["int8", "int16", "int32", "uint32", "float32"])
@pytest.mark.parametrize("target", ["int8", "int16", "int32", "uint32", "float32"])
def test_cast_is_bit_exact(source, target, tmp_path):
    rng = np.random.default_rng(3)
    if source == "float32":   # in the target's range: C leaves a float beyond it undefined, as C++ does
        x = rng.uniform(0 if target == "uint32" else -120, 120, (4, 6)).astype(np.float32)
    else:
        info = np.iinfo(source)
        x = rng.integers(info.min, info.max, (4, 6), dtype=source, endpoint=True)
    assert_bit_exact(cast_model(source, target), tmp_path, inputs=[[x]])


@pytest.mark.slow
def test_cast_from_bool_is_bit_exact(tmp_path):
    x = np.random.default_rng(0).integers(0, 2, (4, 6)).astype(bool)
    assert_bit_exact(cast_model("bool", "int32"), tmp_path, inputs=[[x]])


def slice_and_concatenate() -> bytes:
    """int32 [12] -> STRIDED_SLICE [2:10:3] -> CONCATENATION with a constant [5] -> [8]"""
    builder = ModelBuilder(description="mtk test int32 movement")
    x, part, y = builder.tensor("x", (12,), "int32"), builder.tensor("part", (3,), "int32"), builder.tensor("y", (8,), "int32")
    begin, end, strides = (builder.const(name, np.array([v], np.int32)) for name, v in
                           (("begin", 2), ("end", 10), ("strides", 3)))
    builder.op("STRIDED_SLICE", [x, begin, end, strides], [part])
    builder.op("CONCATENATION", [builder.const("zeros", np.arange(5, dtype=np.int32)), part], [y], axis=0)
    builder.inputs([x])
    builder.outputs([y])
    return builder.build()


@pytest.mark.slow
def test_int32_slice_and_concatenation_are_bit_exact(tmp_path):
    assert_bit_exact(slice_and_concatenate(), tmp_path)


def test_a_zero_divisor_is_refused():
    message = compile_error(binary_model("DIV", "int32", (3,), np.array([1, 0, 2], np.int32), (3,)))
    assert "divisor 'b' holds 0 (TFLM's integer division traps)" in message, message


def test_div_of_int8_names_what_mtk_computes():
    builder = ModelBuilder(description="mtk test DIV int8")
    x, z, y = (builder.tensor(n, (4,), "int8", scale=0.1, zero_point=0) for n in "xzy")
    builder.op("DIV", [x, z], [y])
    builder.inputs([x, z])
    builder.outputs([y])
    message = compile_error(builder.build())
    assert "DIV of int8; mtk computes it for int32" in message, message
