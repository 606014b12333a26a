"""REDUCE_MAX, REDUCE_MIN, ARG_MAX, ARG_MIN on int8, as TFLM's reference kernels compute them.

References (tensorflow/tflite-micro):
  REDUCE_MAX/MIN  micro/kernels/reduce.cc, reduce_common.cc (PrepareMinMaxHelper, EvalMinMaxHelper:
                  int8 input and output quantized alike, else TFLM fails) + reference/reduce.h
                  ReduceGeneric (raw values, starting from the type's lowest/highest)
  ARG_MAX/MIN     micro/kernels/arg_min_max.cc + reference/arg_min_max.h (ArgMinMax: int8 input,
                  int32 axis and output; strict comparison, so the first extreme index wins)
MEAN and SUM are pooling.py's Mean (one QuantizedMeanOrSum path).
"""

from __future__ import annotations

import numpy as np
from tvm import s_tir, te, tirx

from ..graph import Graph, Op
from ..target import Cpu
from .base import Kernel, Lowered, OpData, OpDef, io
from .common import const_int32, op_error
from .pooling import MAX_RANK, resolve_axes
from .schedules import schedule_per_output


def _prod(dims) -> int:
    return int(np.prod(dims, dtype=np.int64))


def _check_int8_input(op: Op, graph: Graph) -> None:
    (x, *_), y = io(op, graph)
    if x.dtype != "int8":
        raise op_error(op, f"{x.dtype} input; mtk supports int8 here")
    if not 1 <= len(x.shape) <= MAX_RANK or x.size == 0:
        raise op_error(op, f"input shape {list(x.shape)} is not supported (1-D to {MAX_RANK}-D, non-empty)")


class ReduceMinMax(OpDef):
    types = ("REDUCE_MAX", "REDUCE_MIN")

    def prepare(self, op: Op, graph: Graph, cpu: Cpu) -> OpData:
        _check_int8_input(op, graph)
        (x, *_), y = io(op, graph)
        if y.dtype != "int8" or x.quant is None or y.quant is None or x.quant.per_channel \
                or np.float32(x.quant.s) != np.float32(y.quant.s) or x.quant.zp != y.quant.zp:
            raise op_error(op, "input and output must be int8 quantized alike (TFLM requires it)")
        axes = resolve_axes(op, graph)
        kept = [s for i, s in enumerate(x.shape) if i not in axes]
        if y.size != _prod(kept):
            raise op_error(op, f"output shape {list(y.shape)} does not match the input {list(x.shape)} reduced "
                               f"over axes {list(axes)}")
        return OpData.of(op, graph, cpu, axes)

    def lower(self, data: OpData, variant=None) -> Lowered:
        op, axes = data.op, data.params
        x, *_ = data.inputs
        kept = [d for d in range(len(x.shape)) if d not in axes]
        X = te.placeholder(x.shape, "int8", name="x")
        reduced = {d: te.reduce_axis((0, x.shape[d]), f"r{d}") for d in axes}
        pick = te.max if op.type == "REDUCE_MAX" else te.min

        def extreme(*o):
            position = dict(zip(kept, o))
            return pick(X[tuple(position[d] if d in position else reduced[d] for d in range(len(x.shape)))],
                        axis=list(reduced.values()))
        out_shape = tuple(x.shape[d] for d in kept) or (1,)
        if not axes:   # every element its own extreme
            out = te.compute(out_shape, lambda *o: X[o], name="out")
            return Lowered([Kernel(op.type.lower(), [op.inputs[0], op.outputs[0]], func=te.create_prim_func([X, out]))])
        acc = te.compute(out_shape, extreme if kept else lambda _: extreme(), name="acc")
        out = te.compute(out_shape, lambda *o: acc[o], name="out")
        func = schedule_per_output(te.create_prim_func([X, out]))
        return Lowered([Kernel(op.type.lower(), [op.inputs[0], op.outputs[0]], func=func)])


class ArgMinMax(OpDef):
    types = ("ARG_MAX", "ARG_MIN")

    def _axis(self, op: Op, graph: Graph) -> int:
        _check_int8_input(op, graph)
        (x, axis_t), y = io(op, graph)
        values = const_int32(op, axis_t, "axis")
        if values.size != 1:
            raise op_error(op, f"{values.size} axes; TFLM reads exactly one")
        axis = int(values[0]) + (len(x.shape) if values[0] < 0 else 0)
        if not 0 <= axis < len(x.shape):
            raise op_error(op, f"axis {int(values[0])} is out of range for a {len(x.shape)}-D input")
        if y.dtype != "int32":
            raise op_error(op, f"{y.dtype} output; TFLM supports int32 only")
        if tuple(y.shape) != tuple(x.shape[:axis] + x.shape[axis + 1:]):
            raise op_error(op, f"output shape {list(y.shape)} is not input {list(x.shape)} without axis {axis}")
        return axis

    def prepare(self, op: Op, graph: Graph, cpu: Cpu) -> OpData:
        return OpData.of(op, graph, cpu, self._axis(op, graph))

    def lower(self, data: OpData, variant=None) -> Lowered:
        op, axis = data.op, data.params
        x, _ = data.inputs
        outer, size, inner = _prod(x.shape[:axis]), x.shape[axis], _prod(x.shape[axis + 1:])
        X = te.placeholder((outer, size, inner), "int8", name="x")
        r = te.reduce_axis((0, size), "r")
        pick = te.max if op.type == "ARG_MAX" else te.min
        best = te.compute((outer, inner), lambda o, i: pick(X[o, r, i], axis=r), name="best")
        k = te.reduce_axis((0, size), "k")   # the first index holding the extreme value
        first = te.compute((outer, inner), lambda o, i: te.min(
            tirx.Select(X[o, k, i] == best[o, i], k, tirx.const(size, "int32")), axis=k), name="first")
        out = te.compute((outer, inner), lambda o, i: first[o, i], name="out")
        sch = s_tir.Schedule(te.create_prim_func([X, out]))
        out_loops = sch.get_loops(sch.get_sblock("out"))
        for name in ("first", "best"):   # both scalars inside the output loop, best computed first
            block = sch.get_sblock(name)
            sch.compute_at(block, out_loops[-1])
            loops = sch.get_loops(block)
            if len(loops) > len(out_loops):   # an axis of size 1 leaves no reduction loop
                sch.decompose_reduction(block, loops[len(out_loops)])
        return Lowered([Kernel(op.type.lower(), [op.inputs[0], op.outputs[0]], func=sch.mod["main"])])


OPS = [ReduceMinMax(), ArgMinMax()]
