"""Arithmetic on tensors without quantization, as TFLM's reference kernels do it: ADD, MUL, DIV, MINIMUM and
MAXIMUM of int32, MUL of float32, and CAST between integer, bool and float32 tensors (how micro_speech's
audio front end turns its int16 features into int8 or float32 outputs).

References (tensorflow/tflite-micro): micro/kernels/add.cc (EvalAdd: int32 sums with the activation range
ignored, int32 min to max), mul_common.cc (WrappingMul, then CalculateActivationRange), div.cc with
reference/div.h (C's truncating division, then the activation range), maximum_minimum.cc, cast.cc (static_cast
element by element). Broadcasting follows numpy's rules, as the reference's NdArrayDesc does.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from tvm import te, tirx

from ..graph import Graph, Op
from .base import Const, Kernel, Lowered, OpData, OpDef, io
from .common import op_error
from .elementwise import broadcast_read

MAX_BROADCAST_RANK = {"ADD": 6, "MUL": 4, "DIV": 5, "MINIMUM": 5, "MAXIMUM": 5}
INT32_LIMITS = (-2**31, 2**31 - 1)
FLOAT32_LIMITS = (-float(np.finfo(np.float32).max), float(np.finfo(np.float32).max))
CAST_INPUTS = ("int8", "int16", "int32", "uint32", "float32", "bool")
CAST_OUTPUTS = ("int8", "int16", "int32", "uint32", "float32")


def activation_limits(activation: str, dtype: str) -> tuple[float, float]:
    """CalculateActivationRange for an unquantized int32 or float32 output."""
    lo, hi = INT32_LIMITS if dtype == "int32" else FLOAT32_LIMITS
    return {"RELU": (0, hi), "RELU6": (0, 6), "RELU_N1_TO_1": (-1, 1)}.get(activation, (lo, hi))


@dataclass(frozen=True)
class ArithmeticPlan:
    out_shape: tuple[int, ...]
    limits: tuple[float, float] | None   # the activation range clamping the result; None: none (int32 ADD)


def _wrapping(op_type: str, a: tirx.PrimExpr, b: tirx.PrimExpr) -> tirx.PrimExpr:
    """int32 ADD and MUL modulo 2^32: in int64, the low half kept (C leaves an int32 overflow undefined; and in
    uint32, TVM's simplifier would take the result cast back to int32 for non-negative and drop a clamp at 0)."""
    wide_a, wide_b = a.astype("int64"), b.astype("int64")
    return (wide_a + wide_b if op_type == "ADD" else wide_a * wide_b).astype("int32")


def _clamp(x: tirx.PrimExpr, low: tirx.PrimExpr, high: tirx.PrimExpr) -> tirx.PrimExpr:
    """std::min(std::max(x, low), high): a NaN stays NaN, as there."""
    above = tirx.Select(x < low, low, x)
    return tirx.Select(high < above, high, above)


class UnquantizedArithmetic(OpDef):
    """`types` on inputs and output of one element type, `dtype` (the registry picks it by the first input's)."""

    def __init__(self, types: tuple[str, ...], dtype: str) -> None:
        self.types, self.input_dtypes = types, (dtype,)

    def plan(self, op: Op, graph: Graph) -> ArithmeticPlan:
        (a, b), y = io(op, graph)
        if b.dtype != a.dtype or y.dtype != a.dtype:
            raise op_error(op, f"{a.dtype}, {b.dtype} -> {y.dtype}; TFLM needs one element type")
        if op.type in ("ADD", "DIV") and (a.quant is not None or b.quant is not None):
            raise op_error(op, f"quantized int32 inputs; TFLM's int32 {op.type} takes unquantized ones only")
        try:
            shape = tuple(np.broadcast_shapes(a.shape, b.shape))
        except ValueError:
            raise op_error(op, f"shapes {list(a.shape)} and {list(b.shape)} do not broadcast") from None
        if shape != tuple(y.shape):
            raise op_error(op, f"output shape {list(y.shape)} is not the broadcast shape {list(shape)}")
        if a.shape != b.shape and len(shape) > MAX_BROADCAST_RANK[op.type]:
            raise op_error(op, f"{len(shape)}-D broadcast; TFLM's kernel handles at most "
                               f"{MAX_BROADCAST_RANK[op.type]}-D")
        if op.type == "DIV" and b.is_constant and np.any(b.data == 0):
            raise op_error(op, f"divisor '{b.name}' holds 0 (TFLM's integer division traps)")
        limits = None if op.type in ("ADD", "MINIMUM", "MAXIMUM") else \
            activation_limits(op.options.get("fused_activation_function", "NONE"), y.dtype)
        return ArithmeticPlan(shape, limits)

    def lower(self, data: OpData, variant=None) -> Lowered:
        op, p = data.op, data.params
        a, b = data.inputs
        dtype = data.output.dtype
        A = te.placeholder(tuple(a.shape) or (1,), dtype, name="x1")
        B = te.placeholder(tuple(b.shape) or (1,), dtype, name="x2")
        shape = p.out_shape or (1,)
        read_a, read_b = broadcast_read(A, len(shape)), broadcast_read(B, len(shape))
        # float limits from a constant array: TVM prints float literals to 7 digits (FLT_MAX would not read back)
        limits = te.placeholder((2,), dtype, name="limits") if p.limits is not None and dtype == "float32" else None
        low, high = (limits[0], limits[1]) if limits is not None else \
            (tirx.const(p.limits[0], dtype), tirx.const(p.limits[1], dtype)) if p.limits is not None else (None, None)

        def element(*i):
            x, z = read_a(i), read_b(i)
            if op.type in ("MINIMUM", "MAXIMUM"):
                return (tirx.Min if op.type == "MINIMUM" else tirx.Max)(x, z)
            if op.type == "DIV":
                value = tirx.truncdiv(x, z)
            else:
                value = _wrapping(op.type, x, z) if dtype == "int32" else x * z
            return value if p.limits is None else _clamp(value, low, high)

        out = te.compute(shape, element, name="out")
        if limits is None:
            return Lowered([Kernel(op.type.lower(), [op.inputs[0], op.inputs[1], op.outputs[0]],
                                   func=te.create_prim_func([A, B, out]))])
        return Lowered([Kernel(op.type.lower(), [op.inputs[0], op.inputs[1],
                                                 Const("limits", np.array(p.limits, np.float32)), op.outputs[0]],
                               func=te.create_prim_func([A, B, limits, out]))])


class Cast(OpDef):
    types = ("CAST",)

    def plan(self, op: Op, graph: Graph) -> None:
        (x, *_), y = io(op, graph)
        if x.dtype not in CAST_INPUTS or y.dtype not in CAST_OUTPUTS:
            raise op_error(op, f"{x.dtype} -> {y.dtype}; TFLM casts from {', '.join(CAST_INPUTS)} "
                               f"to {', '.join(CAST_OUTPUTS)}")
        if x.size != y.size:
            raise op_error(op, f"input {list(x.shape)} and output {list(y.shape)} differ in size")

    def lower(self, data: OpData, variant=None) -> Lowered:
        x, y = data.inputs[0], data.output
        X = te.placeholder((x.size,), "uint8" if x.dtype == "bool" else x.dtype, name="x")
        read = (lambda i: (X[i] != tirx.const(0, "uint8")).astype(y.dtype)) if x.dtype == "bool" else \
            (lambda i: X[i].astype(y.dtype))
        out = te.compute((y.size,), read, name="out")
        return Lowered([Kernel("cast", [data.op.inputs[0], data.op.outputs[0]], func=te.create_prim_func([X, out]))])


OPS = [UnquantizedArithmetic(("ADD", "MUL", "DIV", "MINIMUM", "MAXIMUM"), "int32"),
       UnquantizedArithmetic(("MUL",), "float32"), Cast()]
