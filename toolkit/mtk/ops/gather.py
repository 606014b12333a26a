"""GATHER on int8: rows of the input picked by int32 positions, as micro/kernels/gather.cc does it.

Reference (tensorflow/tflite-micro): micro/kernels/gather.cc (GatherPrepare: int32 positions,
float32 or int8 input, 0 ≤ batch_dims ≤ axis; Gather: for each batch, outer index and position,
memcpy of one inner block). The output is input bytes whatever the quantization says.

Positions may be a constant (checked here: TFLM only DCHECKs the range) or computed at run time
(an embedding lookup's model input): then an out-of-range position, undefined behaviour in TFLM,
is clamped into the axis so the kernel never reads outside the input.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from tvm import te, tirx

from ..graph import Graph, Op
from .base import Kernel, Lowered, OpData, OpDef, io
from .common import op_error


@dataclass(frozen=True)
class GatherPlan:
    batch: int
    outer: int
    axis_size: int
    inner: int
    coords: int       # positions per batch


def _prod(dims) -> int:
    return int(np.prod(dims, dtype=np.int64))


class Gather(OpDef):
    types = ("GATHER",)

    def plan(self, op: Op, graph: Graph) -> GatherPlan:
        inputs, y = io(op, graph)
        x, positions = inputs
        if x.dtype != "int8" or y.dtype != "int8":
            raise op_error(op, f"{x.dtype} -> {y.dtype}; mtk supports int8 here (TFLM: float32 or int8)")
        if positions.dtype != "int32":
            raise op_error(op, f"positions are {positions.dtype}; TFLM supports int32 only")
        rank, coords_rank = len(x.shape), len(positions.shape)
        axis = int(op.options.get("axis", 0))
        axis = axis + rank if axis < 0 else axis
        batch_dims = int(op.options.get("batch_dims", 0))
        batch_dims = batch_dims + coords_rank if batch_dims < 0 else batch_dims
        if not 0 <= axis < rank or not 0 <= batch_dims <= min(axis, coords_rank) or batch_dims >= rank \
                or x.shape[:batch_dims] != positions.shape[:batch_dims]:
            raise op_error(op, f"axis {op.options.get('axis', 0)}, batch_dims {op.options.get('batch_dims', 0)} "
                               f"do not fit input {list(x.shape)} and positions {list(positions.shape)}")
        expected = (*x.shape[:axis], *positions.shape[batch_dims:], *x.shape[axis + 1:])
        if tuple(y.shape) != expected or x.size == 0 or y.size == 0:
            raise op_error(op, f"output {list(y.shape)} is not {list(expected)} (non-empty)")
        if positions.is_constant and (np.any(positions.data < 0) or np.any(positions.data >= x.shape[axis])):
            raise op_error(op, f"a position is outside 0..{x.shape[axis] - 1}")
        return GatherPlan(_prod(x.shape[:batch_dims]), _prod(x.shape[batch_dims:axis]), x.shape[axis],
                          _prod(x.shape[axis + 1:]), _prod(positions.shape[batch_dims:]))

    def lower(self, data: OpData, variant=None) -> Lowered:
        op, p = data.op, data.params
        X = te.placeholder((p.batch, p.outer, p.axis_size, p.inner), "int8", name="x")
        P = te.placeholder((p.batch, p.coords), "int32", name="positions")
        checked = data.inputs[1].is_constant

        def pick(b, o, k, i):
            at = P[b, k] if checked else tirx.Min(tirx.Max(P[b, k], tirx.const(0, "int32")),
                                                  tirx.const(p.axis_size - 1, "int32"))
            return X[b, o, at, i]
        out = te.compute((p.batch, p.outer, p.coords, p.inner), pick, name="out")
        return Lowered([Kernel("gather", [op.inputs[0], op.inputs[1], op.outputs[0]],
                               func=te.create_prim_func([X, P, out]))])


OPS = [Gather()]
