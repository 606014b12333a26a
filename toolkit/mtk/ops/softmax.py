"""SOFTMAX int8 -> int8: TFLM's reference kernel (reference/softmax.h, the int8 path), bit for bit.

Prepare (micro/kernels/softmax_common.cc CalculateSoftmaxParams): the output must be scale 1/256,
zero point -128; PreprocessSoftmaxScaling(beta, input_scale, 5) gives the multiplier and left
shift that put an input difference into Q5.26, and diff_min = -CalculateInputRadius(5, shift)
is the smallest difference that still counts.

Eval, per row of the last axis:
    max = max(x);  d = x - max
    e(d) = exp_on_negative_values(MultiplyByQuantizedMultiplierGreaterThanOne(d))    Q0.31, d >= diff_min
    sum = Σ Rescale<12>(e(d))                                                          Q12.19
    recip, num_bits_over_unit = GetReciprocal(sum, 12)
    y = clamp(RoundingDivideByPOT(SRDHM(recip, e(d)), num_bits_over_unit + 23) - 128)  (-128 if d < diff_min)

e(d) depends only on d in [diff_min, 0] (at most 256 values): it is a prepared int32 table,
computed on the host with the same integer math (activation.py's gemmlowp transcription), with
one trailing 0 standing for every d < diff_min. The kernel is TE: row max, sum, the per-row
reciprocal (gemmlowp's Newton division as TIR) and the outputs, all scheduled inside the row loop.
"""

from __future__ import annotations

import math
import operator

import numpy as np
from tvm import s_tir, te, tirx

from ..errors import ModelError
from ..graph import Graph, Op
from ..target import Cpu
from .base import Const, Kernel, Lowered, OpData, OpDef, io
from .common import op_error, require_per_tensor
from .fixedpoint import clamp, quantize_multiplier
from .gemmlowp import (NumpyArith, TirArith, exp_on_negative_values, one_over_one_plus_x_for_x_in_0_1,
                         rescale)

SCALED_DIFF_INTEGER_BITS = 5     # exp's input: Q5.26
ACCUMULATION_INTEGER_BITS = 12   # the sum of exps: Q12.19
MAX_DEPTH = 4095                 # 4096 exps of 1.0 overflow the int32 sum


def softmax_params(input_scale: float, beta: float) -> tuple[int, int, int]:
    """(input_beta_multiplier, input_beta_left_shift, diff_min) as CalculateSoftmaxParams computes them."""
    real = min(float(np.float32(beta)) * float(np.float32(input_scale)) * float(1 << (31 - SCALED_DIFF_INTEGER_BITS)),
               float(2**31 - 1))
    if not real > 1.0:   # QuantizeMultiplierGreaterThanOne's TFLITE_CHECK_GT
        raise ModelError(f"beta * input scale = {real / (1 << 26):g} is too small for TFLM's int8 softmax (> 2^-26)")
    multiplier, left_shift = quantize_multiplier(real)
    radius = math.floor(((1 << SCALED_DIFF_INTEGER_BITS) - 1) * float(1 << (31 - SCALED_DIFF_INTEGER_BITS))
                        / float(1 << left_shift))
    return multiplier, left_shift, -radius


def exp_table(multiplier: int, left_shift: int, diff_min: int) -> np.ndarray:
    """e(-i) for i = 0 .. min(255, -diff_min), then 0 (every smaller difference)."""
    A = NumpyArith()
    diffs = -np.arange(min(255, -diff_min) + 1, dtype=np.int64)
    rescaled = A.srdhm((diffs << left_shift).astype(np.int32), multiplier)   # MultiplyByQuantizedMultiplierGreaterThanOne
    return np.append(exp_on_negative_values(A, rescaled, SCALED_DIFF_INTEGER_BITS), 0).astype(np.int32)


def count_leading_zeros(A, x):
    """CountLeadingZeros of a positive int32: 31 - floor(log2 x), by binary search with right shifts only."""
    log2 = 0
    for step in (16, 8, 4, 2, 1):
        big = x >= (1 << step)
        log2 = A.bind(log2 + A.select(big, step, 0))
        if step > 1:
            x = A.bind(A.select(big, x >> step, x))
    return 31 - log2


def reciprocal_of_sum(A, total, headroom):
    """GetReciprocal's value: 1 / (sum scaled into [1, 2)), Q0.31. (sum << headroom) - 2^31 without
    shifting into the sign bit."""
    shifted_minus_one = A.bind(((total << (headroom - 1)) - (1 << 30)) << 1)
    return one_over_one_plus_x_for_x_in_0_1(A, shifted_minus_one)


def _tir(build):
    """A TIR expression from a backend-generic builder, its sub-expressions bound with Let."""
    A = TirArith()
    return A.close(build(A))


class RowValue:
    """An int32 value per row (row index -> PrimExpr) with C's operators, for `RowArith`."""

    def __init__(self, at):
        self.at = at

    @staticmethod
    def of(v) -> "RowValue":
        if isinstance(v, RowValue):
            return v
        const = tirx.const(v, "int32") if isinstance(v, int) else v
        return RowValue(lambda r: const)

    def _binary(op, reflected=False):
        def apply(self, other):
            other = RowValue.of(other)
            return RowValue(lambda r: op(other.at(r), self.at(r)) if reflected else op(self.at(r), other.at(r)))
        return apply

    __add__, __radd__ = _binary(operator.add), _binary(operator.add, True)
    __sub__, __rsub__ = _binary(operator.sub), _binary(operator.sub, True)
    __and__, __lshift__, __rshift__ = _binary(operator.and_), _binary(operator.lshift), _binary(operator.rshift)
    __gt__, __lt__, __ge__ = _binary(operator.gt), _binary(operator.lt), _binary(operator.ge)
    __eq__, __ne__ = _binary(operator.eq), _binary(operator.ne)
    __hash__ = None

    def __neg__(self):
        return RowValue(lambda r: -self.at(r))


class RowArith:
    """The gemmlowp backend for per-row scalars: every binding is a TE stage over the rows, computed
    once per row into a one-element buffer. (As one expression with Lets, TVM's analyzer inlines the
    bindings and the Newton division grows exponentially.)"""

    def __init__(self, rows: int, name: str):
        self.rows, self.name, self.stages = rows, name, []
        self._tir = TirArith()
        self._loads: list[RowValue] = []

    def bind(self, v):
        if isinstance(v, int) or any(v is load for load in self._loads):
            return RowValue.of(v)
        v = RowValue.of(v)
        stage = te.compute((self.rows,), lambda r: v.at(r), name=f"{self.name}{len(self.stages)}")
        self.stages.append(stage)
        self._loads.append(RowValue(lambda r: stage[r]))
        return self._loads[-1]

    def select(self, cond, a, b):
        a, b = RowValue.of(a), RowValue.of(b)
        return RowValue(lambda r: self._tir.select(cond.at(r), a.at(r), b.at(r)))

    def srdhm(self, a, b):
        a, b = RowValue.of(a), RowValue.of(b)
        return RowValue(lambda r: self._tir.srdhm(a.at(r), b.at(r)))

    def rdpot(self, x, exponent):
        x = self.bind(x)
        return RowValue(lambda r: self._tir.rdpot(x.at(r), exponent))

    def half_sum(self, a, b):
        a, b = self.bind(a), self.bind(b)
        return RowValue(lambda r: self._tir.half_sum(a.at(r), b.at(r)))


class Softmax(OpDef):
    types = ("SOFTMAX",)

    def prepare(self, op: Op, graph: Graph, cpu: Cpu) -> OpData:
        """params: the table of e^(x - max) exp_table computes from softmax_params."""
        (x, *_), y = io(op, graph)
        require_per_tensor(op, x, y)
        if y.quant.zp != -128 or np.float32(y.quant.s) != np.float32(1.0 / 256):
            raise op_error(op, f"output must have scale 1/256 and zero point -128 (got {y.quant.s:g}, {y.quant.zp})")
        if tuple(x.shape) != tuple(y.shape) or not x.shape:
            raise op_error(op, f"input {list(x.shape)} and output {list(y.shape)} differ")
        if x.shape[-1] > MAX_DEPTH:
            raise op_error(op, f"{x.shape[-1]} classes; at most {MAX_DEPTH} are supported")
        try:
            params = softmax_params(x.quant.s, op.options.get("beta", 1.0))
        except ModelError as err:
            raise op_error(op, err.message) from None
        return OpData.of(op, graph, cpu, exp_table(*params))

    def lower(self, data: OpData, variant=None) -> Lowered:
        op, table = data.op, data.params
        x, *_ = data.inputs
        depth = x.shape[-1]
        rows = x.size // depth

        X = te.placeholder((rows, depth), "int8", name="x")
        E = te.placeholder((len(table),), "int32", name="exp_table")
        k = te.reduce_axis((0, depth), "k")
        row_max = te.compute((rows,), lambda r: te.max(X[r, k].astype("int32"), axis=k), name="row_max")

        def exp_of(r, c):   # e(x - max), 0 below diff_min (the table's last entry)
            return E[tirx.Min(row_max[r] - X[r, c].astype("int32"), tirx.const(len(table) - 1, "int32"))]

        j = te.reduce_axis((0, depth), "j")
        def summand(r, c):   # Rescale<12>(e)
            e = tirx.Var("e", "int32")
            return tirx.Let(e, exp_of(r, c), rescale(TirArith(), e, 0, ACCUMULATION_INTEGER_BITS))

        total = te.compute((rows,), lambda r: te.sum(summand(r, j), axis=j), name="sum_of_exps")
        A = RowArith(rows, "row")
        headroom = A.bind(count_leading_zeros(A, RowValue(lambda r: total[r])))
        recip = A.bind(reciprocal_of_sum(A, RowValue(lambda r: total[r]), headroom))

        def output(r, c):
            # num_bits_over_unit + 31 - 8, in [0, 31] (TFLM aborts beyond 31, i.e. sum >= 2^28; we saturate).
            # Bounded on both sides: with an unbounded shift TVM's bound analysis drops the clamp to 127.
            exponent = tirx.Max(tirx.Min(tirx.const(ACCUMULATION_INTEGER_BITS + 31 - 8, "int32") - headroom.at(r),
                                         tirx.const(31, "int32")), tirx.const(0, "int32"))
            scaled = _tir(lambda T: T.rdpot(T.srdhm(recip.at(r), exp_of(r, c)), exponent))
            return clamp(scaled - tirx.const(128, "int32"), -128, 127).astype("int8")

        y = te.compute((rows, depth), output, name="y")
        func = te.create_prim_func([X, E, y])
        sch = s_tir.Schedule(func)
        row_loop = sch.get_loops(sch.get_sblock("y"))[0]
        for stage in [t.op.name for t in reversed(A.stages)] + ["sum_of_exps", "row_max"]:   # consumers first
            sch.compute_at(sch.get_sblock(stage), row_loop)
        for reduction in ("sum_of_exps", "row_max"):   # initialise before the loop, not inside it
            block = sch.get_sblock(reduction)
            loops = sch.get_loops(block)
            if len(loops) > 1:   # one class: no reduction loop left
                sch.decompose_reduction(block, loops[1])
        args = [op.inputs[0], Const("exp_table", table), op.outputs[0]]
        return Lowered([Kernel("softmax", args, func=sch.mod["main"])])


OPS = [Softmax()]
