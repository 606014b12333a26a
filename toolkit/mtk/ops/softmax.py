"""SOFTMAX int8 -> int8, int8 -> int16 and int16 -> int16: TFLM's reference kernels (reference/softmax.h),
bit for bit.

Prepare (micro/kernels/softmax_common.cc CalculateSoftmaxParams): the output must be scale 1/256,
zero point -128 (int16 output: 1/65536 and -32768, the same math with 16 output bits); PreprocessSoftmaxScaling(beta, input_scale, 5) gives the multiplier and left
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
one trailing 0 standing for every d < diff_min, and so is each Rescale<12>(e(d)). The kernel is TE:
row max, sum, the per-row reciprocal (gemmlowp's Newton division as TIR) and the outputs, all
scheduled inside the row loop; a row at least twice as long as the table computes the output of
each table entry once and looks its values' outputs up.

int16 (SoftmaxInt16; Prepare InitializeLutForInt16): zero points 0, output scale 1/32768. Two 513-entry
int16 tables that Prepare fills with LUTPopulate<int16_t> in float32 (exp on [-10, 0], 1/(1 + x) on
[0, 1]; expf from the C library, as TFLM calls it) and LUTLookup interpolates on the low 7 bits:
    d = MultiplyByQuantizedMultiplier(x - max, QuantizeMultiplier(scale·beta / (10/65535)))
    e = LUTLookup(sat16(d + 32767), exp_lut)                                      Q0.15
    sum = Σ e;  h = CountLeadingZeros(sum)
    r = LUTLookup(sat16(round((sum << (h - 1)) >> 14) - 3·2^15), one_over_one_plus_x_lut)
    y = clamp((e·r + 2^(30 - h)) >> (31 - h), 0, 32767)
The kernel (c/mtk_softmax_s16.h) computes each e once, keeps it in the output row, and scales it there.
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass

import numpy as np
from tvm import s_tir, te, tirx
from tvm.script import tirx as T

from ..errors import ModelError
from ..graph import Graph, Op
from ..target import Cpu
from .base import Const, Kernel, Lowered, OpData, OpDef, io
from .common import op_error, require_per_tensor
from .activation_int16 import libm_f32
from .fixedpoint import clamp, quantize_multiplier
from .gemmlowp import (NumpyArith, TirArith, exp_on_negative_values, one_over_one_plus_x_for_x_in_0_1,
                         rescale)

SCALED_DIFF_INTEGER_BITS = 5     # exp's input: Q5.26
ACCUMULATION_INTEGER_BITS = 12   # the sum of exps: Q12.19
MAX_DEPTH = 4095                 # 4096 exps of 1.0 overflow the int32 sum
MAX_DEPTH_INT16 = 65536          # int16: 65538 exps of 32767 would
LUT_STEPS = 512                  # LUTPopulate<int16_t>: 512 segments, 513 entries
SOFTMAX_S16_HEADER = "softmax_s16"
# int8 input: a row at least this many times as long as the exp table has its outputs computed once for every table
# entry and looked up (fewer computed outputs than values pay for the lookups)
OUTPUT_TABLE_DEPTHS = 2


def softmax_params(input_scale: float, beta: float) -> tuple[int, int, int]:
    """(input_beta_multiplier, input_beta_left_shift, diff_min) as CalculateSoftmaxParams computes them."""
    real = min(float(np.float32(beta)) * float(np.float32(input_scale)) * float(1 << (31 - SCALED_DIFF_INTEGER_BITS)),
               float(2**31 - 1))
    if not real > 1.0:   # QuantizeMultiplierGreaterThanOne's TFLITE_CHECK_GT
        raise ModelError(f"beta * input scale = {real / (1 << 26):g} is too small for TFLM's int8 softmax (> 2^-26)")
    # TFLM caps the factor at 2^31 - 1 by design, a left shift of 31; the exp table is computed here in
    # int64, so no int32 shift overflows.
    multiplier, left_shift = quantize_multiplier(real, max_left_shift=31)
    radius = math.floor(((1 << SCALED_DIFF_INTEGER_BITS) - 1) * float(1 << (31 - SCALED_DIFF_INTEGER_BITS))
                        / float(1 << left_shift))
    return multiplier, left_shift, -radius


def summand_table(exp_values: np.ndarray) -> np.ndarray:
    """Each e(d)'s term of the sum of exps, Rescale<12>(e): Q0.31 to Q12.19."""
    return np.asarray(rescale(NumpyArith(), exp_values.astype(np.int32), 0, ACCUMULATION_INTEGER_BITS), np.int32)


def exp_table(multiplier: int, left_shift: int, diff_min: int) -> np.ndarray:
    """e(-i) for i = 0 .. min(255, -diff_min), then 0 (every smaller difference)."""
    A = NumpyArith()
    diffs = -np.arange(min(255, -diff_min) + 1, dtype=np.int64)
    rescaled = A.srdhm((diffs << left_shift).astype(np.int32), multiplier)   # MultiplyByQuantizedMultiplierGreaterThanOne
    return np.append(exp_on_negative_values(A, rescaled, SCALED_DIFF_INTEGER_BITS), 0).astype(np.int32)


def _round_f32(v: np.ndarray) -> np.ndarray:
    """TfLiteRound on float32 (roundf: half away from zero)."""
    v = np.asarray(v, np.float32)
    return (np.sign(v) * np.floor(np.abs(v).astype(np.float64) + 0.5)).astype(np.float32)


def lut_populate_int16(transform, input_scale: np.float32, input_zp: int, output_scale: np.float32) -> np.ndarray:
    """LUTPopulateInt16<float> (kernels/internal/common.h), output zero point 0: 512 samples of
    `transform` (float32 -> float32), each biased by half the interpolation error at its midpoint."""
    f = lambda values: np.array([transform(v) for v in values], np.float32)
    input_min = np.float32(input_scale * np.float32(-32768 - input_zp))
    input_max = np.float32(input_scale * np.float32(32767 - input_zp))
    output_min, output_max = output_scale * np.float32(-32768), output_scale * np.float32(32767)
    step = (input_max - input_min) / np.float32(LUT_STEPS)
    half_step = step / np.float32(2)
    inverse = np.float32(65536) / (output_max - output_min)
    i = np.arange(LUT_STEPS, dtype=np.float32)
    at = input_min + i * step
    val, val_mid, val_next = f(at), f(at + half_step), f(input_min + (i + np.float32(1)) * step)
    sample = _round_f32(val * inverse)
    midpoint_interp = _round_f32((val_next * inverse + _round_f32(val * inverse)) / np.float32(2))
    bias = _round_f32((midpoint_interp - _round_f32(val_mid * inverse)) / np.float32(2))
    last = _round_f32(f([input_max]) * inverse)
    return np.clip(np.append(sample - bias, last), -32768, 32767).astype(np.int16)


@dataclass(frozen=True)
class Int16Softmax:
    """CalculateSoftmaxParams for int16: the rescale of x - max onto the exp table's [-65535, 0], the tables."""

    multiplier: int
    shift: int
    exp_lut: np.ndarray
    reciprocal_lut: np.ndarray


_expf = libm_f32("expf")
_INT16_RANGE = np.float32(65535)


def int16_softmax_params(input_scale: float, beta: float) -> Int16Softmax:
    multiplier, shift = quantize_multiplier(float(np.float32(input_scale)) * float(np.float32(beta)) / (10.0 / 65535.0))
    exp_lut = lut_populate_int16(_expf, np.float32(10) / _INT16_RANGE, 32767, np.float32(2) / _INT16_RANGE)
    reciprocal_lut = lut_populate_int16(lambda v: np.float32(1) / (np.float32(1) + v), np.float32(1) / _INT16_RANGE,
                                        -32768, np.float32(2) / _INT16_RANGE)
    return Int16Softmax(multiplier, shift, exp_lut, reciprocal_lut)


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
        """params: int8 input, the table of e^(x - max) exp_table computes from softmax_params; int16, Int16Softmax."""
        (x, *_), y = io(op, graph)
        if (x.dtype, y.dtype) not in (("int8", "int8"), ("int8", "int16"), ("int16", "int16")):
            raise op_error(op, f"{x.dtype} -> {y.dtype}; mtk supports int8 -> int8/int16 and int16 -> int16")
        require_per_tensor(op, x, dtypes=("int8", "int16"))
        require_per_tensor(op, y, dtypes=("int8", "int16"))
        if tuple(x.shape) != tuple(y.shape) or not x.shape:
            raise op_error(op, f"input {list(x.shape)} and output {list(y.shape)} differ")
        beta = op.options.get("beta", 1.0)
        if x.dtype == "int16":
            return OpData.of(op, graph, cpu, self._prepare_int16(op, x, y, beta))
        if y.dtype == "int16":   # TF_LITE_ENSURE_NEAR(scale, 1/65536, 0.001/65536)
            unit = np.float32(1.0) / np.float32(65536)
            if y.quant.zp != -32768 or abs(np.float32(y.quant.s) - unit) > np.float32(0.001) * unit:
                raise op_error(op, f"int16 output must have scale 1/65536 and zero point -32768 "
                                   f"(got {y.quant.s:g}, {y.quant.zp})")
        elif y.quant.zp != -128 or np.float32(y.quant.s) != np.float32(1.0 / 256):
            raise op_error(op, f"output must have scale 1/256 and zero point -128 (got {y.quant.s:g}, {y.quant.zp})")
        if x.shape[-1] > MAX_DEPTH:
            raise op_error(op, f"{x.shape[-1]} classes; at most {MAX_DEPTH} are supported")
        try:
            params = softmax_params(x.quant.s, beta)
        except ModelError as err:
            raise op_error(op, err.message) from None
        return OpData.of(op, graph, cpu, exp_table(*params))

    @staticmethod
    def _prepare_int16(op: Op, x, y, beta: float) -> Int16Softmax:
        if x.quant.zp != 0 or y.quant.zp != 0:
            raise op_error(op, f"int16 zero points must be 0 (got {x.quant.zp}, {y.quant.zp})")
        one = np.float32(1.0) / np.float32(32768)
        if abs(np.float32(y.quant.s) - one) > np.float32(0.001) * one:   # TF_LITE_ENSURE_NEAR
            raise op_error(op, f"int16 output must have scale 1/32768 (got {y.quant.s:g})")
        if x.shape[-1] > MAX_DEPTH_INT16:
            raise op_error(op, f"{x.shape[-1]} classes; at most {MAX_DEPTH_INT16} are supported")
        try:
            return int16_softmax_params(x.quant.s, beta)
        except ModelError as err:
            raise op_error(op, err.message) from None

    def lower(self, data: OpData, variant=None) -> Lowered:
        if isinstance(data.params, Int16Softmax):
            return self._lower_int16(data)
        return self._lower_int8(data)

    def _lower_int8(self, data: OpData) -> Lowered:
        op, table = data.op, data.params
        rows, depth, X, row_max = _rows_and_max(data)
        size = len(table)
        lookup = depth >= OUTPUT_TABLE_DEPTHS * size   # each row's outputs of every difference first, then looked up
        E = te.placeholder((size,), "int32", name="exp_table")
        S = te.placeholder((size,), "int32", name="summand_table")

        def difference(r, c):   # the index of e(x - max) in the tables: the last entry for every d < diff_min
            d = tirx.Min(row_max[r] - X[r, c].astype("int32"), tirx.const(size - 1, "int32"))
            return tirx.Max(d, tirx.const(0, "int32")) if lookup else d   # never below 0: bounds for compute_at

        j = te.reduce_axis((0, depth), "j")
        total = te.compute((rows,), lambda r: te.sum(S[difference(r, j)], axis=j), name="sum_of_exps")
        A = RowArith(rows, "row")
        headroom = A.bind(count_leading_zeros(A, RowValue(lambda r: total[r])))
        recip = A.bind(reciprocal_of_sum(A, RowValue(lambda r: total[r]), headroom))

        bits, out_dtype = (16, "int16") if data.output.dtype == "int16" else (8, "int8")
        low, high = -(1 << (bits - 1)), (1 << (bits - 1)) - 1

        def output(r, e):
            # num_bits_over_unit + 31 - bits, in [0, 31] (TFLM aborts beyond 31, i.e. sum >= 2^28; we saturate).
            # Bounded on both sides: with an unbounded shift TVM's bound analysis drops the clamp to 127.
            exponent = tirx.Max(tirx.Min(tirx.const(ACCUMULATION_INTEGER_BITS + 31 - bits, "int32") - headroom.at(r),
                                         tirx.const(31, "int32")), tirx.const(0, "int32"))
            scaled = _tir(lambda T: T.rdpot(T.srdhm(recip.at(r), e), exponent))
            return clamp(scaled + tirx.const(low, "int32"), low, high).astype(out_dtype)

        row_stages = [t.op.name for t in reversed(A.stages)]
        if lookup:
            outputs = te.compute((rows, size), lambda r, k: output(r, E[k]), name="row_outputs")
            y = te.compute((rows, depth), lambda r, c: outputs[r, difference(r, c)], name="y")
            row_stages.insert(0, outputs.op.name)
        else:
            y = te.compute((rows, depth), lambda r, c: output(r, E[difference(r, c)]), name="y")
        func = _schedule_rows(te.create_prim_func([X, E, S, y]), row_stages)
        args = [op.inputs[0], Const("exp_table", table), Const("summand_table", summand_table(table)), op.outputs[0]]
        return Lowered([Kernel("softmax", args, func=func)])

    def _lower_int16(self, data: OpData) -> Lowered:
        """One mtk_softmax_s16 call (c/mtk_softmax_s16.h): each exp computed once and kept in the output row."""
        op, p, x = data.op, data.params, data.inputs[0]
        depth = x.shape[-1]
        n, lut_size = x.size, len(p.exp_lut)

        @T.prim_func
        def softmax(xs: T.Buffer((n,), "int16"), exp_lut: T.Buffer((lut_size,), "int16"),
                    reciprocal_lut: T.Buffer((lut_size,), "int16"), y: T.Buffer((n,), "int16")):
            T.evaluate(T.call_extern("int32", "mtk_softmax_s16", T.address_of(xs[0]), T.address_of(exp_lut[0]),
                                     T.address_of(reciprocal_lut[0]), T.address_of(y[0]), n // depth, depth,
                                     p.multiplier, p.shift))

        args = [op.inputs[0], Const("exp_lut", p.exp_lut), Const("reciprocal_lut", p.reciprocal_lut), op.outputs[0]]
        return Lowered([Kernel("softmax_int16", args, func=softmax, headers=(SOFTMAX_S16_HEADER,),
                               c_calls=("mtk_softmax_s16",))])


def _rows_and_max(data: OpData):
    """The input as rows of the last axis (TE placeholder) and each row's maximum, as int32."""
    x, *_ = data.inputs
    depth = x.shape[-1]
    rows = x.size // depth
    X = te.placeholder((rows, depth), x.dtype, name="x")
    k = te.reduce_axis((0, depth), "k")
    return rows, depth, X, te.compute((rows,), lambda r: te.max(X[r, k].astype("int32"), axis=k), name="row_max")


def _schedule_rows(func, row_stages: list[str]):
    """Every per-row stage (`row_stages` consumers first, then the sum and the max) computed inside
    the output's row loop, the reductions initialised before their loops."""
    sch = s_tir.Schedule(func)
    row_loop = sch.get_loops(sch.get_sblock("y"))[0]
    for stage in [*row_stages, "sum_of_exps", "row_max"]:
        sch.compute_at(sch.get_sblock(stage), row_loop)
    for reduction in ("sum_of_exps", "row_max"):   # initialise before the loop, not inside it
        block = sch.get_sblock(reduction)
        loops = sch.get_loops(block)
        if len(loops) > 1:   # one class: no reduction loop left
            sch.decompose_reduction(block, loops[1])
    return sch.mod["main"]


OPS = [Softmax()]
