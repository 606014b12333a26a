"""LOGISTIC, TANH, RELU, RELU6, LEAKY_RELU, HARD_SWISH on int8: TFLM's reference kernels, bit for bit.

What each op copies (tensorflow/tflite-micro):
  LOGISTIC    micro/kernels/logistic_common.cc + reference/integer_ops/logistic.h (gemmlowp::logistic
              on Q4.27; TFLM uses this fixed-point path, not TFLite's 256-entry float LUT)
  TANH        micro/kernels/tanh.cc + reference/integer_ops/tanh.h (gemmlowp::tanh on Q4.27)
  RELU        micro/kernels/activations_common.cc + activations.h ReluQuantized (requantizes)
  RELU6       micro/kernels/activations_common.cc + activations.h Relu6Quantized (clamps in the
              INPUT's quantization; TFLM ignores the output's scale and zero point)
  LEAKY_RELU  micro/kernels/leaky_relu_common.cc + reference/leaky_relu.h (identity and alpha multipliers)
  HARD_SWISH  micro/kernels/hard_swish_common.cc + reference/hard_swish.h (int16 fixed point)

An int8 element-wise op has 256 possible inputs: the reference's integer math is run here, on the
host, for all 256 of them (numpy transcriptions below) and the kernel is one shared TE table lookup
into a 256-byte constant (no int64 arithmetic on the target, a load per element).

gemmlowp's fixed-point functions (fixedpoint/fixedpoint.h) are written once, over an arithmetic
backend: `NumpyArith` (host: numpy arrays, C's wrapping integer semantics) or `TirArith` (TIR
expressions, used by softmax.py). They belong in fixedpoint.py.
"""

from __future__ import annotations

import math

import numpy as np
from tvm import te, tirx

from ..errors import ModelError
from ..graph import Graph, Op
from ..target import Cpu
from .base import Const, Kernel, Lowered, OpDef, io
from .fixedpoint import quantize_multiplier, rounding_divide_by_pot, saturating_rounding_doubling_high_mul, tflite_round

INT32_MAX, INT32_MIN = 2**31 - 1, -(2**31)
INT8_VALUES = np.arange(-128, 128, dtype=np.int32)   # a lookup table's inputs, in table order


# ---- arithmetic backends ---------------------------------------------------------------------

class NumpyArith:
    """gemmlowp's scalar integer functions on numpy arrays of `dtype` (int32 or int16), wrapping like C."""

    def __init__(self, dtype=np.int32):
        self.dtype = np.dtype(dtype)
        self.bits = self.dtype.itemsize * 8

    def bind(self, x):
        return x

    def close(self, x):
        return x

    def select(self, cond, a, b):
        return np.where(cond, a, b).astype(self.dtype)

    def srdhm(self, a, b):
        """SaturatingRoundingDoublingHighMul."""
        lo, hi = -(1 << (self.bits - 1)), (1 << (self.bits - 1)) - 1
        ab = np.asarray(a, np.int64) * np.asarray(b, np.int64)
        nudged = ab + np.where(ab >= 0, 1 << (self.bits - 2), 1 - (1 << (self.bits - 2)))
        high = np.sign(nudged) * (np.abs(nudged) >> (self.bits - 1))          # C division: toward zero
        return np.where((np.asarray(a) == lo) & (np.asarray(b) == lo), hi, high).astype(self.dtype)

    def rdpot(self, x, exponent: int):
        """RoundingDivideByPOT; the mask is converted to the raw type, as gemmlowp's Dup<IntegerType> does."""
        x64 = np.asarray(x, np.int64)
        mask = int(np.array((1 << exponent) - 1, np.int64).astype(self.dtype))
        threshold = (mask >> 1) + (x64 < 0)
        return ((x64 >> exponent) + ((x64 & mask) > threshold)).astype(self.dtype)

    def half_sum(self, a, b):
        """RoundingHalfSum: (a + b + sign) / 2 in a wider type, rounded toward zero."""
        s = np.asarray(a, np.int64) + np.asarray(b, np.int64)
        s = s + np.where(s >= 0, 1, -1)
        return (np.sign(s) * (np.abs(s) >> 1)).astype(self.dtype)


class TirArith:
    """The same functions as TIR int32 expressions; `bind` names a sub-expression (tirx.Let)."""

    def __init__(self):
        self._lets: list[tuple[tirx.Var, tirx.PrimExpr]] = []

    @staticmethod
    def _expr(v):
        return tirx.const(v, "int32") if isinstance(v, int) else v

    def bind(self, x):
        if isinstance(x, (int, tirx.Var, tirx.IntImm, te.tensor.TensorSlice)):   # cheap to repeat
            return self._expr(x)
        var = tirx.Var(f"v{len(self._lets)}", "int32")
        self._lets.append((var, self._expr(x)))
        return var

    def close(self, body):
        """`body` inside every binding made so far."""
        for var, value in reversed(self._lets):
            body = tirx.Let(var, value, body)
        self._lets = []
        return body

    def select(self, cond, a, b):
        return tirx.Select(cond, self._expr(a), self._expr(b))

    def srdhm(self, a, b):
        return saturating_rounding_doubling_high_mul(self._expr(a), self._expr(b))

    def rdpot(self, x, exponent):
        return rounding_divide_by_pot(self.bind(x), exponent)

    def half_sum(self, a, b):
        s = self.bind(a).astype("int64") + self.bind(b).astype("int64")
        signed = s + tirx.Select(s >= tirx.const(0, "int64"), tirx.const(1, "int64"), tirx.const(-1, "int64"))
        return tirx.truncdiv(signed, tirx.const(2, "int64")).astype("int32")


# ---- gemmlowp fixed point (int32 raw values), backend-generic --------------------------------

def saturating_multiply_by_pot(A, x, exponent: int):
    """SaturatingRoundingMultiplyByPOT<exponent>: saturating left shift, or rounding right shift."""
    if exponent <= 0:
        return A.rdpot(x, -exponent) if exponent else x
    threshold = (1 << (31 - exponent)) - 1
    x = A.bind(x)
    return A.select(x > threshold, INT32_MAX, A.select(x < -threshold, INT32_MIN, x << exponent))


def rescale(A, x, src_integer_bits: int, dst_integer_bits: int):
    """gemmlowp::Rescale<dst>(FixedPoint<int32, src>)."""
    return saturating_multiply_by_pot(A, x, src_integer_bits - dst_integer_bits)


def _exp_on_interval_between_negative_one_quarter_and_0_excl(A, a):
    """exp(a) for a in [-1/4, 0), Q0.31 in and out: Taylor series around -1/8."""
    constant_term, one_third = 1895147668, 715827883          # exp(-1/8), 1/3
    x = A.bind(a + (1 << 28))
    x2 = A.bind(A.srdhm(x, x))
    x3 = A.bind(A.srdhm(x2, x))
    x4_over_4 = A.bind(A.rdpot(A.srdhm(x2, x2), 2))
    series = A.bind(A.rdpot(A.srdhm(x4_over_4 + x3, one_third) + x2, 1))
    return constant_term + A.srdhm(constant_term, x + series)


_EXP_BARREL = ((-2, 1672461947), (-1, 1302514674), (0, 790015084), (1, 290630308),
               (2, 39332535), (3, 720401), (4, 242))   # exp(-2^k) in Q0.31


def exp_on_negative_values(A, a, integer_bits: int):
    """gemmlowp::exp_on_negative_values: exp(a) for a ≤ 0 in Q(integer_bits), result in Q0.31."""
    fractional_bits = 31 - integer_bits
    quarter = 1 << (fractional_bits - 2)
    a = A.bind(a)
    a_mod_quarter_minus_quarter = A.bind((a & (quarter - 1)) - quarter)
    result = A.bind(_exp_on_interval_between_negative_one_quarter_and_0_excl(
        A, rescale(A, a_mod_quarter_minus_quarter, integer_bits, 0)))
    remainder = A.bind(a_mod_quarter_minus_quarter - a)
    for exponent, multiplier in _EXP_BARREL:
        if integer_bits > exponent:
            bit = remainder & (1 << (fractional_bits + exponent))
            result = A.bind(A.select(bit != 0, A.srdhm(result, multiplier), result))
    if integer_bits > 5:
        result = A.select(a < -(1 << (36 - integer_bits)), 0, result)
    return A.select(a == 0, INT32_MAX, result)


def _newton_reciprocal_of_half_denominator(A, a):
    """The Newton-Raphson division shared by one_over_one_plus_x and one_minus_x_over_one_plus_x:
    x ≈ 1 / ((1 + a) / 2) in Q2.29, for a in (0, 1) in Q0.31."""
    half_denominator = A.bind(A.half_sum(a, INT32_MAX))
    x = A.bind(1515870810 + A.srdhm(half_denominator, -1010580540))    # 48/17 - 32/17 * d
    for _ in range(3):
        one_minus_half_denominator_times_x = (1 << 29) - A.srdhm(half_denominator, x)
        x = A.bind(x + rescale(A, A.srdhm(x, one_minus_half_denominator_times_x), 4, 2))
    return x


def one_over_one_plus_x_for_x_in_0_1(A, a):
    return rescale(A, _newton_reciprocal_of_half_denominator(A, a), 1, 0)   # Rescale<0>(ExactMulByPot<-1>(x))


def one_minus_x_over_one_plus_x_for_x_in_0_1(A, a):
    return rescale(A, _newton_reciprocal_of_half_denominator(A, a) - (1 << 29), 2, 0)


def logistic(A, a, integer_bits: int):
    """gemmlowp::logistic: Q(integer_bits) in, Q0.31 out."""
    a = A.bind(a)
    positive = a > 0
    abs_a = A.bind(A.select(positive, a, -a))
    if_positive = A.bind(one_over_one_plus_x_for_x_in_0_1(A, exp_on_negative_values(A, -abs_a, integer_bits)))
    return A.select(a == 0, 1 << 30, A.select(positive, if_positive, INT32_MAX - if_positive))


def tanh(A, a, integer_bits: int):
    """gemmlowp::tanh: Q(integer_bits) in, Q0.31 out. exp(-2|a|) reads the same raw bits one integer bit up."""
    a = A.bind(a)
    negative = a < 0
    n = A.bind(A.select(negative, a, -a))
    t = A.bind(one_minus_x_over_one_plus_x_for_x_in_0_1(A, exp_on_negative_values(A, n, integer_bits + 1)))
    return A.select(a == 0, 0, A.select(negative, -t, t))


def multiply_by_quantized_multiplier_np(x, multiplier: int, shift: int) -> np.ndarray:
    """MultiplyByQuantizedMultiplier (double rounding) on the host; x * 2^left wraps like C's int32."""
    A = NumpyArith()
    left, right = max(shift, 0), max(-shift, 0)
    scaled = (np.asarray(x, np.int64) << left).astype(np.int32)
    return A.rdpot(A.srdhm(scaled, multiplier), right)


# ---- host-side tables: TFLM's Prepare + Eval for every int8 input -----------------------------

def _f32(v: float) -> np.float32:
    return np.float32(v)


def _fixed_point_input_params(input_scale: float) -> tuple[int, int, int]:
    """LOGISTIC/TANH Prepare: input onto Q4.27 (frexp, no QuantizeMultiplier fix-ups) and the radius
    (CalculateInputRadius(4, shift, 31)) beyond which the output saturates."""
    q, shift = math.frexp(float(_f32(input_scale)) * float(1 << 27))
    multiplier = tflite_round(q * (1 << 31))
    radius = math.floor(15.0 * (1 << 27) / math.ldexp(1.0, shift))
    return multiplier, shift, radius


def _saturating_unary_table(x: np.ndarray, radius: int, inside: np.ndarray, low: int, high: int) -> np.ndarray:
    return np.where(x <= -radius, low, np.where(x >= radius, high, inside)).astype(np.int8)


def logistic_table(input_scale: float, input_zp: int) -> np.ndarray:
    """reference_integer_ops::Logistic (int8) for every input value; output in Q0.8 with zero point -128."""
    A = NumpyArith()
    multiplier, shift, radius = _fixed_point_input_params(input_scale)
    x = INT8_VALUES - input_zp
    q0 = logistic(A, multiply_by_quantized_multiplier_np(x, multiplier, shift), 4)
    out = np.clip(A.rdpot(q0, 31 - 8).astype(np.int64) - 128, -128, 127)
    return _saturating_unary_table(x, radius, out, -128, 127)


def tanh_table(input_scale: float, input_zp: int) -> np.ndarray:
    """reference_integer_ops::Tanh (int8) for every input value; output in Q0.7, zero point 0."""
    A = NumpyArith()
    multiplier, shift, radius = _fixed_point_input_params(input_scale)
    x = INT8_VALUES - input_zp
    q0 = tanh(A, multiply_by_quantized_multiplier_np(x, multiplier, shift), 4)
    out = np.clip(A.rdpot(q0, 31 - 7), -128, 127)
    return _saturating_unary_table(x, radius, out, -128, 127)


def leaky_relu_table(input_scale: float, input_zp: int, output_scale: float, output_zp: int,
                     alpha: float) -> np.ndarray:
    """reference_ops::QuantizeLeakyRelu (int8); the multipliers are float32 ratios, as in Prepare."""
    alpha_mult, alpha_shift = quantize_multiplier(float(_f32(_f32(input_scale) * _f32(alpha)) / _f32(output_scale)))
    ident_mult, ident_shift = quantize_multiplier(float(_f32(input_scale) / _f32(output_scale)))
    x = INT8_VALUES - input_zp
    identity = multiply_by_quantized_multiplier_np(x, ident_mult, ident_shift).astype(np.int64)
    scaled_alpha = multiply_by_quantized_multiplier_np(x, abs(alpha_mult), alpha_shift).astype(np.int64)
    alpha_part = -scaled_alpha if alpha_mult < 0 else scaled_alpha
    return np.clip(output_zp + np.where(x >= 0, identity, alpha_part), -128, 127).astype(np.int8)


def _down_scale_int32_to_int16_multiplier(multiplier: int) -> int:
    if multiplier >= INT32_MAX - (1 << 15):
        return 2**15 - 1
    return (multiplier + (1 << 15)) >> 16


def hard_swish_params(input_scale: float, output_scale: float) -> tuple[int, int, int, int]:
    """HardSwishPrepare: (output multiplier int16, output exponent, reluish multiplier int16, reluish exponent)."""
    hires_input_scale = _f32(1.0 / 128.0) * _f32(input_scale)
    reluish_scale = _f32(3.0) / _f32(32768.0)
    out_mult, out_exp = quantize_multiplier(float(hires_input_scale / _f32(output_scale)))
    rel_mult, rel_exp = quantize_multiplier(float(hires_input_scale / reluish_scale))
    return _down_scale_int32_to_int16_multiplier(out_mult), out_exp, _down_scale_int32_to_int16_multiplier(rel_mult), rel_exp


def _saturating_left_shift16(value: np.ndarray, amount: int) -> np.ndarray:
    return np.clip(value.astype(np.int64) * (1 << amount), -(2**15), 2**15 - 1).astype(np.int16)


def _saturating_doubling_high_mul16(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """SQDMULH-like: like srdhm but rounding toward zero."""
    ab = a.astype(np.int64) * b.astype(np.int64)
    high = np.sign(ab) * (np.abs(ab) >> 15)
    return np.where((a == -(2**15)) & (b == -(2**15)), 2**15 - 1, high).astype(np.int16)


def hard_swish_table(input_scale: float, input_zp: int, output_scale: float, output_zp: int) -> np.ndarray:
    """reference_ops::HardSwish<int8_t> for every input value, in its int16 fixed point."""
    A = NumpyArith(np.int16)
    out_mult, out_exp, rel_mult, rel_exp = hard_swish_params(input_scale, output_scale)
    hires = ((INT8_VALUES - input_zp) * (1 << 7)).astype(np.int16)
    on_preshift_output_scale = A.srdhm(hires, out_mult)
    reluish = hires
    if rel_exp > 0:
        reluish = _saturating_left_shift16(reluish, rel_exp - 1)
    reluish = A.srdhm(reluish, rel_mult)
    if rel_exp > 0:
        reluish = _saturating_left_shift16(reluish, 1)
    if rel_exp < 0:
        reluish = A.rdpot(reluish, -rel_exp)
    reluish = ((reluish.astype(np.int32) + (1 << 15)) >> 1).astype(np.int16)        # [-1, 1] -> [0, 1]
    preshift_output = _saturating_doubling_high_mul16(reluish, on_preshift_output_scale)
    out = (A.rdpot(preshift_output, -out_exp).astype(np.int32) + output_zp).astype(np.int16)
    return np.clip(out, -128, 127).astype(np.int8)


# ---- kernels -------------------------------------------------------------------------------

def lookup_kernel(op: Op, graph: Graph, table: np.ndarray) -> Lowered:
    """y[i] = table[x[i] + 128]: any int8 -> int8 element-wise function."""
    n = graph.tensors[op.outputs[0]].size
    x = te.placeholder((n,), "int8", name="x")
    lut = te.placeholder((256,), "int8", name="lut")
    y = te.compute((n,), lambda i: lut[x[i].astype("int32") + 128], name="y")
    func = te.create_prim_func([x, lut, y])
    return Lowered([Kernel("lookup_int8", [op.inputs[0], Const("lut", table.astype(np.int8)), op.outputs[0]],
                           func=func)])


class Int8Unary(OpDef):
    """Shared checks: one int8 input, one int8 output of the same shape, per-tensor quantization."""

    def check(self, op: Op, graph: Graph) -> None:
        (x, *_), y = io(op, graph)
        if x.dtype != "int8" or y.dtype != "int8":
            raise ModelError(f"op {op.index} ({op.type}): {x.dtype} -> {y.dtype}; mtk supports int8 only")
        if x.quant is None or y.quant is None or x.quant.per_channel or y.quant.per_channel:
            raise ModelError(f"op {op.index} ({op.type}): input and output need per-tensor quantization")
        if x.size != y.size:
            raise ModelError(f"op {op.index} ({op.type}): input {list(x.shape)} and output {list(y.shape)} differ")


class Logistic(Int8Unary):
    types = ("LOGISTIC",)

    def check(self, op: Op, graph: Graph) -> None:
        super().check(op, graph)
        _, y = io(op, graph)
        if y.quant.zp != -128:   # TFLM checks only the zero point; it assumes the scale 1/256
            raise ModelError(f"op {op.index} (LOGISTIC): output zero point must be -128 (got {y.quant.zp})")

    def lower(self, op: Op, graph: Graph, cpu: Cpu) -> Lowered:
        (x, *_), _ = io(op, graph)
        return lookup_kernel(op, graph, logistic_table(x.quant.s, x.quant.zp))


class Tanh(Int8Unary):
    """TFLM checks neither the output scale nor its zero point: the result is always Q0.7."""

    types = ("TANH",)

    def lower(self, op: Op, graph: Graph, cpu: Cpu) -> Lowered:
        (x, *_), _ = io(op, graph)
        return lookup_kernel(op, graph, tanh_table(x.quant.s, x.quant.zp))


class LeakyRelu(Int8Unary):
    types = ("LEAKY_RELU",)

    def lower(self, op: Op, graph: Graph, cpu: Cpu) -> Lowered:
        (x, *_), y = io(op, graph)
        alpha = op.options.get("alpha", 0.0)
        return lookup_kernel(op, graph, leaky_relu_table(x.quant.s, x.quant.zp, y.quant.s, y.quant.zp, alpha))


class HardSwish(Int8Unary):
    types = ("HARD_SWISH",)

    def check(self, op: Op, graph: Graph) -> None:
        super().check(op, graph)
        (x, *_), y = io(op, graph)
        if hard_swish_params(x.quant.s, y.quant.s)[1] > 0:
            raise ModelError(f"op {op.index} (HARD_SWISH): output scale {y.quant.s:g} is too small for input "
                             f"scale {x.quant.s:g} (TFLM needs input_scale / 128 / output_scale < 1)")

    def lower(self, op: Op, graph: Graph, cpu: Cpu) -> Lowered:
        (x, *_), y = io(op, graph)
        return lookup_kernel(op, graph, hard_swish_table(x.quant.s, x.quant.zp, y.quant.s, y.quant.zp))


def relu_table(input_scale: float, input_zp: int, output_scale: float, output_zp: int) -> np.ndarray:
    """ReluQuantized: out_zp + MultiplyByQuantizedMultiplier(x - in_zp), clamped to [out_zp, 127]."""
    multiplier, shift = quantize_multiplier(float(_f32(input_scale) / _f32(output_scale)))
    scaled = multiply_by_quantized_multiplier_np(INT8_VALUES - input_zp, multiplier, shift).astype(np.int64)
    return np.clip(output_zp + scaled, max(-128, output_zp), 127).astype(np.int8)


def relu6_table(input_scale: float, input_zp: int) -> np.ndarray:
    """Relu6Quantized: x clamped to [in_zp, quantized 6.0] in the input's own quantization."""
    six = min(127, max(-128, tflite_round(float(_f32(6.0) / _f32(input_scale))) + input_zp))
    return np.minimum(np.maximum(INT8_VALUES, input_zp), six).astype(np.int8)


class Relu(Int8Unary):
    types = ("RELU",)

    def lower(self, op: Op, graph: Graph, cpu: Cpu) -> Lowered:
        (x, *_), y = io(op, graph)
        return lookup_kernel(op, graph, relu_table(x.quant.s, x.quant.zp, y.quant.s, y.quant.zp))


class Relu6(Int8Unary):
    """TFLM ignores the output's quantization: the result is the clamped input."""

    types = ("RELU6",)

    def lower(self, op: Op, graph: Graph, cpu: Cpu) -> Lowered:
        (x, *_), _ = io(op, graph)
        return lookup_kernel(op, graph, relu6_table(x.quant.s, x.quant.zp))


OPS = [Logistic(), Tanh(), LeakyRelu(), HardSwish(), Relu(), Relu6()]
