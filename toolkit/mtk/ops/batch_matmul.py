"""BATCH_MATMUL on int8, as micro/kernels/batch_matmul.cc computes it.

Reference (tensorflow/tflite-micro): micro/kernels/batch_matmul.cc (BatchMatMulPrepare: 2-D to
5-D operands, batch dimensions broadcast, the multiplier from GetQuantizedConvolutionMultipler,
which multiplies the two input scales in float before widening to double; BatchMatMulEval
transposes per adj_x/adj_y) with kernels/internal/reference/batch_matmul.h (BatchMatMul:
Σ_k (lhs − lhs_zp)(rhs − rhs_zp) in int32, MultiplyByQuantizedMultiplier, + out_zp, clamp to int8).

out[..., r, c] = Σ_k lhs[..., r, k] · rhs[..., k, c]  (lhs read transposed when adj_x, rhs when adj_y).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from tvm import te, tirx

from ..graph import Graph, Op
from .base import Kernel, Lowered, OpData, OpDef, io
from .elementwise import Rescale
from .fixedpoint import quantize_multiplier
from .common import op_error
from .requant import clamp_s8
from .schedules import schedule_per_output

_MAX_RANK = 5


@dataclass(frozen=True)
class MatMulPlan:
    batch: tuple[int, ...]     # the broadcast batch dimensions of the output
    rows: int
    depth: int
    cols: int
    lhs_zp: int
    rhs_zp: int
    out_zp: int
    rescale: Rescale


class BatchMatMul(OpDef):
    types = ("BATCH_MATMUL",)

    def plan(self, op: Op, graph: Graph) -> MatMulPlan:
        inputs, y = io(op, graph)
        lhs, rhs = inputs
        if {lhs.dtype, rhs.dtype, y.dtype} != {"int8"}:
            raise op_error(op, f"{lhs.dtype}, {rhs.dtype} -> {y.dtype}; mtk supports int8 here")
        for t in (lhs, rhs, y):
            if t.quant is None or t.quant.per_channel:
                raise op_error(op, f"tensor '{t.name}' must be quantized per tensor")
        if not (2 <= len(lhs.shape) <= _MAX_RANK and 2 <= len(rhs.shape) <= _MAX_RANK):
            raise op_error(op, f"operands {list(lhs.shape)} and {list(rhs.shape)}: TFLM takes 2-D to 5-D")
        rows, depth = lhs.shape[-2:][::-1] if op.options.get("adj_x") else lhs.shape[-2:]
        depth_r, cols = rhs.shape[-2:][::-1] if op.options.get("adj_y") else rhs.shape[-2:]
        try:
            batch = tuple(np.broadcast_shapes(lhs.shape[:-2], rhs.shape[:-2]))
        except ValueError:
            batch = None
        if batch is None or depth != depth_r or tuple(y.shape) != (*batch, rows, cols) or y.size == 0:
            raise op_error(op, f"{list(lhs.shape)} x {list(rhs.shape)} (adj_x {bool(op.options.get('adj_x'))}, "
                               f"adj_y {bool(op.options.get('adj_y'))}) does not give {list(y.shape)}")
        product = float(np.float32(lhs.quant.s) * np.float32(rhs.quant.s))   # float, as TFLM multiplies them
        rescale = Rescale(*quantize_multiplier(product / float(np.float32(y.quant.s))))
        return MatMulPlan(batch, rows, depth, cols, lhs.quant.zp, rhs.quant.zp, y.quant.zp, rescale)

    def macs(self, data: OpData) -> int:
        p = data.params
        return int(np.prod(p.batch, dtype=np.int64)) * p.rows * p.depth * p.cols

    def lower(self, data: OpData, variant=None) -> Lowered:
        op, p = data.op, data.params
        lhs, rhs = data.inputs
        y = data.output
        L = te.placeholder(lhs.shape, "int8", name="lhs")
        R = te.placeholder(rhs.shape, "int8", name="rhs")
        k = te.reduce_axis((0, p.depth), "k")
        adj_x, adj_y = bool(op.options.get("adj_x")), bool(op.options.get("adj_y"))

        def batch_index(t: te.Tensor, b: tuple) -> tuple:
            """t's batch indices for output batch index b: missing and size-1 dimensions read 0."""
            dims = [int(d) for d in t.shape[:-2]]
            lead = len(b) - len(dims)
            return tuple(0 if d == 1 else b[lead + i] for i, d in enumerate(dims))

        def dot(*index):
            *b, r, c = index
            left = L[(*batch_index(L, b), k, r) if adj_x else (*batch_index(L, b), r, k)]
            right = R[(*batch_index(R, b), c, k) if adj_y else (*batch_index(R, b), k, c)]
            return te.sum((left.astype("int32") - tirx.const(p.lhs_zp, "int32")) *
                          (right.astype("int32") - tirx.const(p.rhs_zp, "int32")), axis=k)
        acc = te.compute(y.shape, dot, name="acc")
        out = te.compute(y.shape, lambda *i: clamp_s8(p.rescale.apply(acc[i]) + tirx.const(p.out_zp, "int32"),
                                                      -128, 127), name="out")
        func = schedule_per_output(te.create_prim_func([L, R, out]))
        return Lowered([Kernel("batch_matmul", [op.inputs[0], op.inputs[1], op.outputs[0]], func=func)])


OPS = [BatchMatMul()]
