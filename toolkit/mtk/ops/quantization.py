"""QUANTIZE and DEQUANTIZE: float I/O at a model's edges, and integer requantization (int8, int16,
int32: the pairs TFLM's PrepareQuantizeReference accepts, which join 16x8 and int8 parts).

References (tensorflow/tflite-micro): micro/kernels/quantize_common.cc (PrepareQuantizeReference,
EvalQuantizeReference) with kernels/internal/reference/quantize.h (AffineQuantize) and
reference/requantize.h (Requantize); micro/kernels/dequantize_common.cc with reference/dequantize.h.

- float32 -> int8/int16, AffineQuantize: clamp(TfLiteRound(x / (float)scale) + zp, type limits), the
  division in float32 and std::round (half away from zero). The kernel needs no libm: the
  quotient is first clamped to [min - zp, max - zp] (integers, so clamping before rounding
  gives the same result and keeps the float -> int conversion in range), then rounded as
  trunc plus a ±1 step when the exact fraction reaches ±0.5.
- integer -> integer, Requantize: MultiplyByQuantizedMultiplier(q - in_zp, M, s) + out_zp, clamped
  to the output type, with M, s from QuantizeMultiplier(double(in_scale) / double(out_scale)).
- int8/int16 -> float32, Dequantize: (float)(double(scale) * (q - zp)). The double product is
  exact (24-bit scale times a 17-bit integer), so one correctly rounded float32 multiply
  gives the same float: the kernel uses float32 only, as an FPv4-SP FPU has.

TVM prints float literals with 7 significant digits (not enough to round-trip a float32),
so the scale reaches the kernel as a one-element constant array printed exactly.
"""

from __future__ import annotations

import numpy as np
from tvm import te, tirx

from ..graph import Graph, Op, Tensor
from ..target import Cpu
from .base import Const, Kernel, Lowered, OpData, OpDef, io
from .common import i32, let, op_error
from .fixedpoint import INT8_MAX, INT8_MIN, clamp, multiply_by_quantized_multiplier, quantize_multiplier


def _per_tensor(op: Op, t: Tensor, role: str) -> None:
    if t.quant is None:
        raise op_error(op, f"the {role} '{t.name}' has no quantization parameters")
    if t.quant.per_channel:
        raise op_error(op, f"the {role} '{t.name}' is quantized per channel; TFLM supports per-tensor only")


def _float_scale(t: Tensor) -> np.ndarray:
    """The tensor's scale as TFLM holds it (TfLiteQuantizationParams.scale is a float)."""
    return np.array([t.quant.s], dtype=np.float32)


def _f32(v: float):
    return tirx.const(v, "float32")


LIMITS = {"int8": (INT8_MIN, INT8_MAX), "int16": (-32768, 32767), "int32": (-2**31, 2**31 - 1)}
# (input, output) element types TFLM's QUANTIZE takes (uint8 aside)
QUANTIZE_PAIRS = {("float32", "int8"), ("float32", "int16"), ("int8", "int8"), ("int8", "int16"), ("int8", "int32"),
                  ("int16", "int8"), ("int16", "int16"), ("int16", "int32"), ("int32", "int8"), ("int32", "int16")}


def affine_quantize(x, scale, zero_point: int, dtype: str = "int8"):
    """AffineQuantize of one float32 value to int32 within `dtype`'s limits; `scale` a float32 PrimExpr."""
    lo, hi = (float(limit - zero_point) for limit in LIMITS[dtype])

    def rounded(c):   # c integral-range float in [lo, hi]: std::round without libm
        def with_trunc(t):
            frac = c - t.astype("float32")
            return t + tirx.Select(frac >= _f32(0.5), i32(1), i32(0)) \
                - tirx.Select(frac <= _f32(-0.5), i32(1), i32(0))
        return let(c.astype("int32"), with_trunc, "t", "int32")

    def clamped(q):   # NaN fails both comparisons and lands on lo
        return let(tirx.Select(q >= _f32(lo), tirx.Select(q <= _f32(hi), q, _f32(hi)), _f32(lo)),
                     rounded, "c", "float32")

    return let(x / scale, clamped, "q", "float32") + i32(zero_point)


class Quantize(OpDef):
    types = ("QUANTIZE",)

    def prepare(self, op: Op, graph: Graph, cpu: Cpu) -> OpData:
        """params: the requantization's (multiplier, shift) between integer types, None from float32."""
        (x, *_), y = io(op, graph)
        if (x.dtype, y.dtype) not in QUANTIZE_PAIRS:
            raise op_error(op, f"{x.dtype} -> {y.dtype}; mtk supports float32 -> int8/int16 and between int8, "
                               "int16 and int32 as TFLM does")
        _per_tensor(op, y, "output")
        if x.dtype == "float32":
            return OpData.of(op, graph, cpu)
        _per_tensor(op, x, "input")
        return OpData.of(op, graph, cpu, quantize_multiplier(float(np.float64(x.quant.s) / np.float64(y.quant.s))))

    def lower(self, data: OpData, variant=None) -> Lowered:
        op = data.op
        x, *_ = data.inputs
        y = data.output
        n = x.size
        X = te.placeholder((n,), x.dtype, name="x")
        if x.dtype == "float32":
            S = te.placeholder((1,), "float32", name="scale")
            out = te.compute((n,), lambda i: affine_quantize(X[i], S[0], y.quant.zp, y.dtype).astype(y.dtype),
                             name="out")
            func = te.create_prim_func([X, S, out])
            args = [op.inputs[0], Const("scale", _float_scale(y)), op.outputs[0]]
            return Lowered([Kernel("quantize", args, func=func)])
        multiplier, shift = data.params
        out = te.compute((n,), lambda i: clamp(
            multiply_by_quantized_multiplier(X[i].astype("int32") - i32(x.quant.zp), multiplier, shift)
            + i32(y.quant.zp), *LIMITS[y.dtype]).astype(y.dtype), name="out")
        return Lowered([Kernel("requantize", [op.inputs[0], op.outputs[0]],
                               func=te.create_prim_func([X, out]))])


class Dequantize(OpDef):
    types = ("DEQUANTIZE",)

    def prepare(self, op: Op, graph: Graph, cpu: Cpu) -> OpData:
        (x, *_), y = io(op, graph)
        if x.dtype not in ("int8", "int16") or y.dtype != "float32":
            raise op_error(op, f"{x.dtype} -> {y.dtype}; mtk supports int8/int16 -> float32")
        _per_tensor(op, x, "input")
        return OpData.of(op, graph, cpu)

    def lower(self, data: OpData, variant=None) -> Lowered:
        op = data.op
        x, *_ = data.inputs
        n = x.size
        X = te.placeholder((n,), x.dtype, name="x")
        S = te.placeholder((1,), "float32", name="scale")
        out = te.compute((n,), lambda i: (X[i].astype("int32") - i32(x.quant.zp)).astype("float32") * S[0],
                         name="out")
        args = [op.inputs[0], Const("scale", _float_scale(x)), op.outputs[0]]
        return Lowered([Kernel("dequantize", args, func=te.create_prim_func([X, S, out]))])


OPS = [Quantize(), Dequantize()]
