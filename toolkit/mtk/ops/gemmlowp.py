"""gemmlowp's fixed-point maths (fixedpoint/fixedpoint.h), bit for bit, written once over an
arithmetic backend: `NumpyArith` (host: numpy arrays, C's wrapping integer semantics; activation.py
runs TFLM's kernels for all 256 int8 inputs with it) or `TirArith` (TIR int32 expressions;
softmax.py builds its kernel with it).
"""

from __future__ import annotations

import numpy as np
from tvm import te, tirx

from .fixedpoint import rounding_divide_by_pot, saturating_rounding_doubling_high_mul

INT32_MAX, INT32_MIN = 2**31 - 1, -(2**31)


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
