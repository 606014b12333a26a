"""TFLite's integer arithmetic, bit for bit: host-side parameter helpers and TIR expressions.

Host side copies tensorflow/lite/kernels/internal/quantization_util.cc and kernel_util.cc;
the TIR side is MultiplyByQuantizedMultiplier from internal/common.h with TFLite's default
DOUBLE rounding (SaturatingRoundingDoublingHighMul, then RoundingDivideByPOT). TVM's own
q_multiply_shift rounds once and is off by one on ~1% of values, so it is not used.
"""

from __future__ import annotations

import math

import numpy as np
from tvm import tirx

from ..errors import ModelError
from ..graph import Quant
from .common import i32, let

INT8_MIN, INT8_MAX = -128, 127
# MultiplyByQuantizedMultiplier multiplies by (1 << shift) in int: beyond 30 the shift itself overflows
# (and the product overflows for every |x| > 1), a result C++ leaves undefined (x86 masks the shift, Arm does not).
MAX_LEFT_SHIFT = 30


def tflite_round(x: float) -> int:
    """std::round: half away from zero."""
    if not math.isfinite(x):   # e.g. 6.0 / a denormal scale in float32
        raise ModelError(f"{x} cannot be rounded to an integer (a scale too small or too large)")
    return int(math.floor(abs(x) + 0.5)) * (1 if x >= 0 else -1)


def quantize_multiplier(real: float, max_left_shift: int = MAX_LEFT_SHIFT) -> tuple[int, int]:
    """QuantizeMultiplier: real ≈ multiplier * 2^(shift - 31), multiplier in [2^30, 2^31)."""
    if real == 0.0:
        return 0, 0
    if not math.isfinite(real):
        raise ModelError(f"rescale factor {real} is not a finite number")
    q, shift = math.frexp(real)
    q_fixed = tflite_round(q * (1 << 31))
    if q_fixed == (1 << 31):
        q_fixed //= 2
        shift += 1
    if shift > max_left_shift:
        raise ModelError(f"rescale factor {real:g} is too large for 32-bit fixed point (below 2^{max_left_shift}): "
                         f"TFLM's 1 << {shift} overflows int32, which C++ leaves undefined")
    if shift < -31:
        return 0, 0
    return int(q_fixed), int(shift)


def quantize_multipliers(reals: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    pairs = [quantize_multiplier(float(r)) for r in np.asarray(reals, dtype=np.float64).reshape(-1)]
    return (np.array([p[0] for p in pairs], dtype=np.int32), np.array([p[1] for p in pairs], dtype=np.int32))


def convolution_multipliers(input_scale: float, weight_scales: np.ndarray, output_scale: float,
                            channels: int) -> tuple[np.ndarray, np.ndarray]:
    """PopulateConvolutionQuantizationParams (kernel_util.cc): per output channel, s_in·s_w[c]/s_out in double
    (one weight scale serves every channel)."""
    w_scale = np.broadcast_to(np.asarray(weight_scales, np.float64), (channels,))
    return quantize_multipliers(np.float64(input_scale) * w_scale / np.float64(output_scale))


def quantize_multiplier_smaller_than_one_exp(real: float) -> tuple[int, int]:
    """QuantizeMultiplierSmallerThanOneExp (used by ADD/SUB and LUT-free ops)."""
    if not 0.0 < real < 1.0:
        raise ModelError(f"quantization multiplier {real} is outside (0, 1)")
    return quantize_multiplier(real)


def activation_range(activation: str, q: Quant, qmin: int = INT8_MIN, qmax: int = INT8_MAX) -> tuple[int, int]:
    """CalculateActivationRangeQuantized: clamp bounds of a fused activation, in the output's int domain."""
    scale = np.float32(q.s)

    def quantize(f: float) -> int:
        return q.zp + tflite_round(float(np.float32(f) / scale))

    if activation in ("NONE", None):
        return qmin, qmax
    if activation == "RELU":
        return max(qmin, quantize(0.0)), qmax
    if activation == "RELU6":
        return max(qmin, quantize(0.0)), min(qmax, quantize(6.0))
    if activation == "RELU_N1_TO_1":
        return max(qmin, quantize(-1.0)), min(qmax, quantize(1.0))
    raise ModelError(f"fused activation {activation} is not supported on quantized ops")


# ---- TIR expressions ------------------------------------------------------------------

def rounding_divide_by_pot(x, exponent):
    """RoundingDivideByPOT(x, exponent): round half away from zero. `exponent` an int or PrimExpr ≥ 0."""
    if isinstance(exponent, int):
        if exponent == 0:
            return x
        mask = i32((1 << exponent) - 1)
        threshold = tirx.Select(x < 0, i32(((1 << exponent) - 1) >> 1) + 1, i32(((1 << exponent) - 1) >> 1))
        return (x >> i32(exponent)) + tirx.Select((x & mask) > threshold, i32(1), i32(0))
    def body(m):
        threshold = (m >> 1) + tirx.Select(x < 0, i32(1), i32(0))
        return (x >> exponent) + tirx.Select((x & m) > threshold, i32(1), i32(0))
    return let((i32(1) << exponent) - 1, body, "mask", "int32")


FIXEDPOINT_HEADER = "fixedpoint"


def saturating_rounding_doubling_high_mul(a, b):
    """SaturatingRoundingDoublingHighMul(a, b): a call to mtk_srdhm (c/mtk_fixedpoint.h), which
    forms the 64-bit product without libgcc on cores that lack a long multiply (Cortex-M0+)."""
    return tirx.call_extern("int32", "mtk_srdhm", a, b)


def multiply_by_quantized_multiplier(x, multiplier, shift):
    """MultiplyByQuantizedMultiplier(x, multiplier, shift) with TFLite's double rounding.

    `multiplier`/`shift` are Python ints (per-tensor: specialised at compile time) or int32
    PrimExprs (per-channel: loaded from constant arrays at run time).
    """
    if isinstance(shift, int):
        left, right = max(shift, 0), max(-shift, 0)
        scaled = x if left == 0 else x << i32(left)
        mult = multiplier if not isinstance(multiplier, int) else i32(multiplier)
        high = saturating_rounding_doubling_high_mul(scaled, mult)
        return let(high, lambda h: rounding_divide_by_pot(h, right), "high", "int32")
    left = tirx.Max(shift, i32(0))
    right = tirx.Max(i32(0) - shift, i32(0))
    high = saturating_rounding_doubling_high_mul(x << left, multiplier)
    return let(high, lambda h: rounding_divide_by_pot(h, right), "high", "int32")


def reduced_multiplier(multiplier: int, shift: int) -> tuple[int, int]:
    """The 16-bit multiplier and the right shift TFLite's MultiplyByQuantizedMultiplier(int64_t x, ...)
    (internal/common.cc) uses: (multiplier + 2^15) >> 16 (0x7FFF from 0x7FFF0000 up) and 15 − shift.
    The 16x8 kernels (int64 accumulators) call it; TFLite asserts shift < 8."""
    if shift >= 8:
        raise ModelError(f"rescale factor 2^{shift - 1} or more is too large for TFLite's 64-bit requantization "
                         "(shift must be below 8)")
    return ((multiplier + (1 << 15)) >> 16 if multiplier < 0x7FFF0000 else 0x7FFF), 15 - shift


def multiply_by_quantized_multiplier_s64(x, reduced, total_shift):
    """MultiplyByQuantizedMultiplier(int64_t x, multiplier, shift) from its reduced_multiplier pair:
    (x·reduced + 2^(total_shift − 1)) >> total_shift, truncated to int32 as TFLite's `int32_t result = ...`
    does. `x` an int64 PrimExpr; `reduced`/`total_shift` Python ints or int32 PrimExprs."""
    def i64(v):
        return tirx.const(v, "int64") if isinstance(v, int) else v.astype("int64")
    rounding = i64(1 << (total_shift - 1)) if isinstance(total_shift, int) else \
        tirx.const(1, "int64") << i64(total_shift - i32(1))
    return ((x * i64(reduced) + rounding) >> i64(total_shift)).astype("int32")


def clamp(x, lo: int, hi: int):
    return tirx.Min(tirx.Max(x, i32(lo)), i32(hi))
