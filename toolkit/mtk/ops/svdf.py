"""SVDF on int8 with an int8 or int16 activation state, as TFLM computes it.

Reference (tensorflow/tflite-micro): micro/kernels/svdf.cc (Eval: the int16 or int8 path by the
time weights' type) and svdf_common.cc (PrepareSvdf: effective scales s_in·s_wf/s_state and
s_state·s_wt/s_out multiplied and divided in float, then QuantizeMultiplier; the bias scale must be
s_state·s_wt; EvalIntegerSvdfReference). Inputs: x [batch, n_input], feature weights
[n_filter, n_input], time weights [n_filter, n_memory], bias [n_unit] int32, the state
[batch, n_filter·n_memory] (a variable tensor: kept between inferences, in mtk's state region).

Each inference, in three kernels:
  1. feature: fresh[b, f] = zp_state + clamp_T(MBQM(Σ_c wf[f, c]·(x[b, c] − zp_in), scale 1))
  2. state:   every filter's memory shifts one step (the whole buffer one element left, as TFLM
              does) and fresh[b, f] becomes its newest entry
  3. time:    out[b, u] = clamp8(MBQM(bias[u] + Σ_{rank k, memory j} wt[f, j]·(state[b, f, j] − zp_state),
              scale 2) + zp_out), f = u·rank + k
The zero points' constant parts are folded into per-filter / per-unit int32 constants (sums wrap
like TFLM's int32 accumulators). `fresh` is a scratch buffer kernels 1 and 2 share.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from tvm import te, tirx

from ..graph import Graph, Op
from .base import Const, Kernel, Lowered, OpData, OpDef, Scratch, io
from .common import op_error
from .elementwise import Rescale
from .fixedpoint import quantize_multiplier
from .movement import Nest, movement_func
from .requant import clamp_s8
from .schedules import schedule_per_output

_LIMITS = {"int8": (-128, 127), "int16": (-32768, 32767)}


@dataclass(frozen=True)
class SvdfPlan:
    batch: int
    n_input: int
    n_filter: int
    n_memory: int
    rank: int
    state_dtype: str
    state_zp: int
    feature_scale: Rescale
    time_scale: Rescale
    out_zp: int


def _f32(v: float) -> np.float32:
    return np.float32(v)


class Svdf(OpDef):
    types = ("SVDF",)

    def plan(self, op: Op, graph: Graph) -> SvdfPlan:
        inputs, y = io(op, graph)
        if len(inputs) != 5 or any(t is None for t in inputs):
            raise op_error(op, f"{len(inputs)} inputs; mtk needs input, feature and time weights, bias and state "
                               "(TFLM's int8 SVDF reads the bias scale)")
        x, wf, wt, bias, state = inputs
        if x.dtype != "int8" or y.dtype != "int8" or wf.dtype != "int8" or bias.dtype != "int32" \
                or wt.dtype not in _LIMITS or state.dtype != wt.dtype:
            raise op_error(op, f"input {x.dtype}, weights {wf.dtype}/{wt.dtype}, bias {bias.dtype}, state {state.dtype}"
                               f" -> {y.dtype}; mtk supports int8 with int8 or int16 time weights and state")
        if not state.variable:
            raise op_error(op, f"the state '{state.name}' is not a variable tensor (TFLM requires it)")
        if not (wf.is_constant and wt.is_constant and bias.is_constant):
            raise op_error(op, "weights and bias must be constant")
        for t in (x, wf, wt, bias, state, y):
            if t.quant is None or t.quant.per_channel:
                raise op_error(op, f"tensor '{t.name}' must be quantized per tensor")
        rank = int(op.options.get("rank", 0))
        if len(x.shape) != 2 or len(wf.shape) != 2 or len(wt.shape) != 2 or rank < 1 or wf.shape[0] % rank:
            raise op_error(op, f"input {list(x.shape)}, feature weights {list(wf.shape)}, time weights "
                               f"{list(wt.shape)}, rank {rank} do not fit together")
        batch, n_input = x.shape
        n_filter, n_memory = wt.shape
        if wf.shape != (n_filter, n_input) or tuple(y.shape) != (batch, n_filter // rank) \
                or bias.size != n_filter // rank or tuple(state.shape) != (batch, n_filter * n_memory):
            raise op_error(op, f"shapes do not fit: input {list(x.shape)}, feature {list(wf.shape)}, time "
                               f"{list(wt.shape)}, bias {list(bias.shape)}, state {list(state.shape)}, "
                               f"output {list(y.shape)}, rank {rank}")
        s_state_wt = _f32(state.quant.s) * _f32(wt.quant.s)
        if abs(float(bias.quant.s) - float(s_state_wt)) >= 1e-5:
            raise op_error(op, f"bias scale {bias.quant.s} is not state scale × time weight scale (TFLM requires it)")
        feature = float(_f32(_f32(x.quant.s) * _f32(wf.quant.s)) / _f32(state.quant.s))
        time = float(s_state_wt / _f32(y.quant.s))
        return SvdfPlan(batch, n_input, n_filter, n_memory, rank, state.dtype, state.quant.zp,
                        Rescale(*quantize_multiplier(feature)), Rescale(*quantize_multiplier(time)), y.quant.zp)

    def macs(self, data: OpData) -> int:
        p = data.params
        return p.batch * p.n_filter * (p.n_input + p.n_memory)

    def lower(self, data: OpData, variant=None) -> Lowered:
        op, p = data.op, data.params
        x, wf, wt, bias, _ = data.inputs
        fresh = Scratch(p.batch * p.n_filter * np.dtype(p.state_dtype).itemsize, name="fresh")
        return Lowered([self._feature(op, p, x.quant.zp, wf.data, fresh),
                        Kernel("svdf_state", [op.inputs[4], fresh], func=movement_func(
                            [("state", p.batch * p.n_filter * p.n_memory), ("fresh", p.batch * p.n_filter)],
                            self._state_nests(p), p.state_dtype)),
                        self._time(op, p, wt.data, bias.data)])

    @staticmethod
    def _feature(op: Op, p: SvdfPlan, in_zp: int, weights: np.ndarray, fresh: Scratch) -> Kernel:
        X = te.placeholder((p.batch, p.n_input), "int8", name="x")
        W = te.placeholder((p.n_filter, p.n_input), "int8", name="w")
        F = te.placeholder((p.n_filter,), "int32", name="fold")
        c = te.reduce_axis((0, p.n_input), "c")
        acc = te.compute((p.batch, p.n_filter),
                         lambda b, f: te.sum(X[b, c].astype("int32") * W[f, c].astype("int32"), axis=c), name="acc")
        lo, hi = _LIMITS[p.state_dtype]

        def state_value(b, f):
            scaled = p.feature_scale.apply(acc[b, f] + F[f])
            return (tirx.Min(tirx.Max(scaled, tirx.const(lo, "int32")), tirx.const(hi, "int32"))
                    + tirx.const(p.state_zp, "int32")).astype(p.state_dtype)
        out = te.compute((p.batch, p.n_filter), state_value, name="out")
        fold = (-in_zp * weights.astype(np.int64).sum(axis=1)).astype(np.int32)
        func = schedule_per_output(te.create_prim_func([X, W, F, out]))
        return Kernel("svdf_feature", [op.inputs[0], op.inputs[1], Const("fold", fold), fresh], func=func)

    @staticmethod
    def _state_nests(p: SvdfPlan) -> list[Nest]:
        """The whole state one element to the left (in order: an in-place copy), then each filter's
        newest entry from `fresh`."""
        size = p.batch * p.n_filter * p.n_memory
        return [Nest((size - 1,), 0, 0, (1,), 0, 1, (1,)),
                Nest((p.batch, p.n_filter), 0, p.n_memory - 1, (p.n_filter * p.n_memory, p.n_memory),
                     1, 0, (p.n_filter, 1))]

    @staticmethod
    def _time(op: Op, p: SvdfPlan, weights: np.ndarray, bias: np.ndarray) -> Kernel:
        units = p.n_filter // p.rank
        S = te.placeholder((p.batch, units, p.rank, p.n_memory), p.state_dtype, name="state")
        W = te.placeholder((units, p.rank, p.n_memory), weights.dtype.name, name="w")
        B = te.placeholder((units,), "int32", name="bias")
        k = te.reduce_axis((0, p.rank), "k")
        j = te.reduce_axis((0, p.n_memory), "j")
        acc = te.compute((p.batch, units), lambda b, u: te.sum(
            S[b, u, k, j].astype("int32") * W[u, k, j].astype("int32"), axis=[k, j]), name="acc")
        out = te.compute((p.batch, units), lambda b, u: clamp_s8(
            p.time_scale.apply(acc[b, u] + B[u]) + tirx.const(p.out_zp, "int32"), -128, 127), name="out")
        folded = (bias.astype(np.int64) - p.state_zp * weights.astype(np.int64).reshape(units, -1).sum(axis=1))
        folded = ((folded + 2**31) % 2**32 - 2**31).astype(np.int32)
        func = schedule_per_output(te.create_prim_func([S, W, B, out]))
        return Kernel("svdf_time", [op.inputs[4], op.inputs[2], Const("bias", folded), op.outputs[0]], func=func)


OPS = [Svdf()]
