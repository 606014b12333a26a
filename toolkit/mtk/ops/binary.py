"""MINIMUM, MAXIMUM (int8, int16), PRELU (int8, int16 with int8 alpha), SQUARED_DIFFERENCE (int8):
broadcasting binary ops as TFLM's reference kernels compute them.

References (tensorflow/tflite-micro):
  MINIMUM/MAXIMUM     micro/kernels/maximum_minimum.cc + reference/maximum_minimum.h
                      (MaximumMinimumBroadcastSlow on the raw values: no quantization is read)
  PRELU               micro/kernels/prelu.cc, prelu_common.cc (CalculatePreluParams, in double)
                      + reference/prelu.h (BroadcastPrelu4DSlow: x ≥ 0 rescaled by s_in/s_out,
                      else (x − zp)(α − zp_α) rescaled by s_in·s_α/s_out)
  SQUARED_DIFFERENCE  micro/kernels/squared_difference.cc (PrepareQuantized, left shift 7 for int8;
                      each input rescaled to a common scale, the difference squared in int32, rescaled)
Broadcasting follows numpy's rules, as the reference's NdArrayDesc does.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from tvm import te, tirx

from ..graph import Graph, Op, Tensor
from .base import Const, Kernel, Lowered, OpData, OpDef, io
from .common import op_error
from .elementwise import Rescale, broadcast_read, input_table
from .fixedpoint import clamp, quantize_multiplier, quantize_multiplier_smaller_than_one_exp
from .requant import clamp_s8
from .schedules import schedule_per_output

SQUARED_DIFFERENCE_LEFT_SHIFT = 7   # squared_difference.cc, int8
_LIMITS = {"int8": (-128, 127), "int16": (-32768, 32767)}


@dataclass(frozen=True)
class BinaryPlan:
    out_shape: tuple[int, ...]
    dtype: str                     # of the first input and the output
    in_zp: tuple[int, int] = (0, 0)
    out_zp: int = 0
    rescales: tuple[Rescale, ...] = ()


def _i32(v: int):
    return tirx.const(v, "int32")


class Binary(OpDef):
    types = ("MINIMUM", "MAXIMUM", "PRELU", "SQUARED_DIFFERENCE")

    # element types of (first input, second input) TFLM's Eval takes, and the broadcast rank its loop handles
    _DTYPES = {"MINIMUM": {("int8", "int8"), ("int16", "int16")}, "MAXIMUM": {("int8", "int8"), ("int16", "int16")},
               "PRELU": {("int8", "int8"), ("int16", "int8")}, "SQUARED_DIFFERENCE": {("int8", "int8")}}
    _MAX_RANK = {"MINIMUM": 5, "MAXIMUM": 5, "PRELU": 4, "SQUARED_DIFFERENCE": 4}

    def plan(self, op: Op, graph: Graph) -> BinaryPlan:
        inputs, y = io(op, graph)
        a, b = inputs
        if (a.dtype, b.dtype) not in self._DTYPES[op.type] or y.dtype != a.dtype:
            raise op_error(op, f"{a.dtype}, {b.dtype} -> {y.dtype}; mtk supports "
                               + " or ".join(f"{p}, {q} -> {p}" for p, q in sorted(self._DTYPES[op.type])))
        try:
            shape = tuple(np.broadcast_shapes(a.shape, b.shape))
        except ValueError:
            raise op_error(op, f"shapes {list(a.shape)} and {list(b.shape)} do not broadcast") from None
        if shape != tuple(y.shape) or y.size == 0:
            raise op_error(op, f"output shape {list(y.shape)} is not the broadcast shape {list(shape)}")
        if len(shape) > self._MAX_RANK[op.type] and a.shape != b.shape:
            raise op_error(op, f"{len(shape)}-D broadcast; TFLM's kernel handles at most {self._MAX_RANK[op.type]}-D")
        if op.type in ("MINIMUM", "MAXIMUM"):
            return BinaryPlan(shape, a.dtype)
        for t in (a, b, y):
            if t.quant is None or t.quant.per_channel:
                raise op_error(op, f"tensor '{t.name}' must be quantized per tensor")
        if op.type == "PRELU":
            return BinaryPlan(shape, a.dtype, (a.quant.zp, b.quant.zp), y.quant.zp, _prelu_rescales(a, b, y))
        return BinaryPlan(shape, a.dtype, (a.quant.zp, b.quant.zp), y.quant.zp, _squared_difference_rescales(op, a, b, y))

    def macs(self, data: OpData) -> int:
        return 0 if data.op.type in ("MINIMUM", "MAXIMUM") else data.output.size

    def lower(self, data: OpData, variant=None) -> Lowered:
        op, p = data.op, data.params
        a, b = data.inputs
        A = te.placeholder(tuple(a.shape) or (1,), a.dtype, name="x1")
        B = te.placeholder(tuple(b.shape) or (1,), b.dtype, name="x2")
        shape = p.out_shape or (1,)
        read_a, read_b = broadcast_read(A, len(shape)), broadcast_read(B, len(shape))
        tables, consts = [], []
        if op.type in ("MINIMUM", "MAXIMUM"):
            pick = tirx.Min if op.type == "MINIMUM" else tirx.Max
            out = te.compute(shape, lambda *i: pick(read_a(i), read_b(i)), name="out")
            return Lowered([Kernel(op.type.lower(), [op.inputs[0], op.inputs[1], op.outputs[0]],
                                   func=te.create_prim_func([A, B, out]))])
        inputs = [(A, op.inputs[0]), (B, op.inputs[1])]
        if op.type == "PRELU":
            positive, negative = p.rescales
            reads_alpha = p.in_zp[0] > _LIMITS[p.dtype][0]   # else no x lies below the zero point
            if not reads_alpha:
                inputs = inputs[:1]

            def element(*i):
                x = read_a(i).astype("int32") - _i32(p.in_zp[0])
                if not reads_alpha:
                    return positive.apply(x)
                alpha = read_b(i).astype("int32") - _i32(p.in_zp[1])
                return tirx.if_then_else(x >= _i32(0), positive.apply(x), negative.apply(x * alpha))
        else:
            tables = [te.placeholder((256,), "int32", name=f"scaled{k}") for k in (1, 2)]
            consts = [Const(f"scaled{k}", input_table(zp, r, SQUARED_DIFFERENCE_LEFT_SHIFT))
                      for k, zp, r in zip((1, 2), p.in_zp, p.rescales[:2])]

            def element(*i):
                diff = tables[0][read_a(i).astype("int32") + 128] - tables[1][read_b(i).astype("int32") + 128]
                return p.rescales[2].apply(diff * diff)
        raw = te.compute(shape, element, name="raw")
        lo, hi = _LIMITS[p.dtype]
        saturate = clamp_s8 if p.dtype == "int8" else lambda v, lo, hi: clamp(v, lo, hi).astype(p.dtype)
        out = te.compute(shape, lambda *i: saturate(raw[i] + _i32(p.out_zp), lo, hi), name="out")
        func = schedule_per_output(te.create_prim_func([*(t for t, _ in inputs), *tables, out]), acc_block="raw")
        return Lowered([Kernel(op.type.lower(), [*(i for _, i in inputs), *consts, op.outputs[0]], func=func)])


def _prelu_rescales(x: Tensor, alpha: Tensor, y: Tensor) -> tuple[Rescale, Rescale]:
    """CalculatePreluParams: s_in/s_out for x ≥ 0, s_in·s_α/s_out for the rest, in double."""
    s_in, s_alpha, s_out = (np.float64(t.quant.s) for t in (x, alpha, y))
    return Rescale(*quantize_multiplier(float(s_in / s_out))), Rescale(*quantize_multiplier(float(s_in * s_alpha / s_out)))


def _squared_difference_rescales(op: Op, a: Tensor, b: Tensor, y: Tensor) -> tuple[Rescale, Rescale, Rescale]:
    """PrepareQuantized: both inputs to the common scale 2·max(s1, s2) (after a left shift of 7),
    the squared difference back to the output's scale."""
    for t in (a, b, y):
        if not -128 <= t.quant.zp <= 127:
            raise op_error(op, f"tensor '{t.name}' has zero point {t.quant.zp} outside int8 (TFLM rejects it)")
    twice_max = 2.0 * max(a.quant.s, b.quant.s)
    shift = SQUARED_DIFFERENCE_LEFT_SHIFT
    real_output = twice_max * twice_max / float(np.float32((1 << (2 * shift)) * np.float32(y.quant.s)))
    return (Rescale(*quantize_multiplier_smaller_than_one_exp(a.quant.s / twice_max)),
            Rescale(*quantize_multiplier_smaller_than_one_exp(b.quant.s / twice_max)),
            Rescale(*quantize_multiplier(real_output)))


OPS = [Binary()]
