"""RELU, RELU6, LEAKY_RELU, LOGISTIC, TANH on int16 (16x8 models): TFLM's int16 reference kernels, bit for bit.

What each copies (tensorflow/tflite-micro):
  RELU        micro/kernels/activations_common.cc ReluPrepare (zero points 0) + activations.h ReluQuantized<int16_t>
  RELU6       Relu6Prepare (six = FloatToQuantizedType<int16_t>(6, scale, zp)) + Relu6Quantized<int16_t>
  LEAKY_RELU  micro/kernels/leaky_relu_common.cc + reference/leaky_relu.h QuantizeLeakyRelu<int16_t>
  LOGISTIC    micro/kernels/logistic_common.cc (int16 branch) + reference/integer_ops/logistic.h Logistic(int16)
  TANH        micro/kernels/tanh.cc CalculateArithmeticOpData (int16 branch) + reference/integer_ops/tanh.h Tanh(int16)

An int16 input has 65536 values, too many for a table on a microcontroller: prepare computes TFLM's
OpData (multipliers, shifts, bounds) and the kernel is the reference's integer expression per element
(TE). LOGISTIC and TANH interpolate in TFLite's 256-entry sigmoid table, a 512-byte constant.
Prepare's float steps (CheckedLog2's logf, the LUT generation of int16 SOFTMAX) run through the C
library's float32 functions, as TFLM's do.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import math
from dataclasses import dataclass

import numpy as np
from tvm import te, tirx

from ..graph import Op, Tensor
from .base import Const, Kernel, Lowered, OpData
from .common import i32, op_error
from .fixedpoint import clamp, quantize_multiplier, tflite_round
from .requant import scale

INT16_MIN, INT16_MAX = -32768, 32767

# TFLite's sigmoid_table_uint16 (kernels/internal/common.h): sigmoid(i / 24) in unsigned Q0.16 for
# i = 0..255, shared by the int16 LOGISTIC and TANH kernels. Its entries are tuned for interpolation:
# no closed formula reproduces them (round(65536 * sigmoid(i / 24)) differs in 44 of them).
SIGMOID_TABLE = np.array([
    32768, 33451, 34133, 34813, 35493, 36169, 36843, 37513, 38180, 38841, 39498, 40149, 40794, 41432, 42064, 42688,
    43304, 43912, 44511, 45102, 45683, 46255, 46817, 47369, 47911, 48443, 48964, 49475, 49975, 50464, 50942, 51409,
    51865, 52311, 52745, 53169, 53581, 53983, 54374, 54755, 55125, 55485, 55834, 56174, 56503, 56823, 57133, 57433,
    57724, 58007, 58280, 58544, 58800, 59048, 59288, 59519, 59743, 59959, 60168, 60370, 60565, 60753, 60935, 61110,
    61279, 61441, 61599, 61750, 61896, 62036, 62172, 62302, 62428, 62549, 62666, 62778, 62886, 62990, 63090, 63186,
    63279, 63368, 63454, 63536, 63615, 63691, 63765, 63835, 63903, 63968, 64030, 64090, 64148, 64204, 64257, 64308,
    64357, 64405, 64450, 64494, 64536, 64576, 64614, 64652, 64687, 64721, 64754, 64786, 64816, 64845, 64873, 64900,
    64926, 64950, 64974, 64997, 65019, 65039, 65060, 65079, 65097, 65115, 65132, 65149, 65164, 65179, 65194, 65208,
    65221, 65234, 65246, 65258, 65269, 65280, 65291, 65301, 65310, 65319, 65328, 65337, 65345, 65352, 65360, 65367,
    65374, 65381, 65387, 65393, 65399, 65404, 65410, 65415, 65420, 65425, 65429, 65433, 65438, 65442, 65445, 65449,
    65453, 65456, 65459, 65462, 65465, 65468, 65471, 65474, 65476, 65479, 65481, 65483, 65485, 65488, 65489, 65491,
    65493, 65495, 65497, 65498, 65500, 65501, 65503, 65504, 65505, 65507, 65508, 65509, 65510, 65511, 65512, 65513,
    65514, 65515, 65516, 65517, 65517, 65518, 65519, 65520, 65520, 65521, 65522, 65522, 65523, 65523, 65524, 65524,
    65525, 65525, 65526, 65526, 65526, 65527, 65527, 65528, 65528, 65528, 65529, 65529, 65529, 65529, 65530, 65530,
    65530, 65530, 65531, 65531, 65531, 65531, 65531, 65532, 65532, 65532, 65532, 65532, 65532, 65533, 65533, 65533,
    65533, 65533, 65533, 65533, 65533, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65535,
], np.uint16)


# ---- the C library's float32 functions (TFLM's Prepare calls logf, expf) ------------------------

_LIBM = ctypes.CDLL(ctypes.util.find_library("m"))


def libm_f32(name: str):
    """`name` from the C math library as a float32 -> float32 function (np.float32 in and out)."""
    fn = getattr(_LIBM, name)
    fn.restype, fn.argtypes = ctypes.c_float, [ctypes.c_float]
    return lambda v: np.float32(fn(float(v)))


_logf = libm_f32("logf")


def checked_log2(x: float) -> tuple[int, bool]:
    """CheckedLog2 (quantization_util.cc): (round(log2 x), whether x is a power of two within 1e-3), in float32."""
    x_log2 = _logf(np.float32(x)) * (np.float32(1.0) / _logf(np.float32(2.0)))
    rounded = np.float32(tflite_round(float(x_log2)))
    return int(rounded), bool(abs(x_log2 - rounded) < np.float32(1e-3))


# ---- prepared parameters, one class per kernel ---------------------------------------------------

def _elementwise(data: OpData, name: str, element, consts: tuple[Const, ...] = ()) -> Lowered:
    """y[i] = element(x[i] as int32, *const buffers), as int16."""
    op, n = data.op, data.output.size
    x = te.placeholder((n,), "int16", name="x")
    buffers = [te.placeholder(c.data.shape, str(c.data.dtype), name=c.name) for c in consts]
    y = te.compute((n,), lambda i: element(x[i].astype("int32"), *buffers).astype("int16"), name="y")
    func = te.create_prim_func([x, *buffers, y])
    return Lowered([Kernel(name, [op.inputs[0], *consts, op.outputs[0]], func=func)])


@dataclass(frozen=True)
class Rescale16:
    """RELU: out_zp + MultiplyByQuantizedMultiplier(x - in_zp), clamped to [act_min, INT16_MAX].
    RELU6 (multiplier None): x clamped to [act_min, act_max] in the input's own quantization."""

    in_zp: int
    out_zp: int
    act_min: int
    act_max: int
    multiplier: int | None = None
    shift: int = 0

    def lower(self, data: OpData) -> Lowered:
        def element(x):
            if self.multiplier is not None:
                x = scale(x - i32(self.in_zp), self.multiplier, self.shift) + i32(self.out_zp)
            return clamp(x, self.act_min, self.act_max)
        return _elementwise(data, "relu_int16" if self.multiplier is not None else "relu6_int16", element)


@dataclass(frozen=True)
class LeakyRelu16:
    """QuantizeLeakyRelu<int16_t>: the identity multiplier for x >= in_zp, alpha's (its sign apart) below."""

    in_zp: int
    out_zp: int
    identity: tuple[int, int]
    alpha: tuple[int, int]

    def lower(self, data: OpData) -> Lowered:
        (m_id, s_id), (m_alpha, s_alpha) = self.identity, self.alpha

        def element(x):
            d = x - i32(self.in_zp)
            negative_part = scale(d, abs(m_alpha), s_alpha)
            if m_alpha < 0:
                negative_part = i32(0) - negative_part
            value = tirx.Select(d >= i32(0), scale(d, m_id, s_id), negative_part)
            return clamp(value + i32(self.out_zp), INT16_MIN, INT16_MAX)
        return _elementwise(data, "leaky_relu_int16", element)


@dataclass(frozen=True)
class SigmoidLookup:
    """reference_integer_ops::Logistic / Tanh (int16): the input rescaled to 1/(3·4096) per unit,
    ((x · multiplier + round) >> left_shift), then sigmoid_table interpolated on its low bits
    (9 for LOGISTIC, 8 for TANH, which reads sigmoid(2x)); the result in Q0.15."""

    op_type: str   # "LOGISTIC" or "TANH"
    multiplier: int
    left_shift: int

    def lower(self, data: OpData) -> Lowered:
        bits = 9 if self.op_type == "LOGISTIC" else 8
        rounding = (1 << (self.left_shift - 1)) if self.left_shift > 0 else 0

        def element(x, table):
            v = tirx.Var("v", "int32")
            a = tirx.Var("a", "int32")
            index = tirx.Min(a >> i32(bits), i32(254))   # read only in range: TE evaluates both Select arms
            low, high = table[index].astype("int32"), table[index + 1].astype("int32")
            interpolated = (low << i32(bits)) + (a & i32((1 << bits) - 1)) * (high - low)
            saturated = 0x7FFF << 10 if bits == 9 else 0xFFFF << 8
            r = tirx.Select((a >> i32(bits)) >= i32(255), i32(saturated), interpolated)
            if bits == 9:   # logistic.h
                out = tirx.Select(v >= i32(0), r + i32(1 << 9), i32((1 << 25) + (1 << 9) - 1) - r) >> i32(10)
            else:           # tanh.h
                out = tirx.Select(v >= i32(0), r - i32((1 << 23) - (1 << 7)), i32((1 << 23) + (1 << 7) - 1) - r) >> i32(8)
            body = tirx.Let(a, tirx.Select(v >= i32(0), v, i32(0) - v), out)
            return tirx.Let(v, (x * i32(self.multiplier) + i32(rounding)) >> i32(self.left_shift), body)
        return _elementwise(data, f"{self.op_type.lower()}_int16", element, (Const("sigmoid_table", SIGMOID_TABLE),))


# ---- Prepare ------------------------------------------------------------------------------------

def _f32(v: float) -> np.float32:
    return np.float32(v)


def _require_zero_points(op: Op, *tensors: Tensor) -> None:
    for t in tensors:
        if t.quant.zp != 0:
            raise op_error(op, f"int16 tensor '{t.name}' has zero point {t.quant.zp}; TFLM requires 0")


def leaky_relu_multipliers(input_scale: float, alpha: float, output_scale: float) -> tuple[tuple[int, int], tuple[int, int]]:
    """CalculateOpDataLeakyRelu: the (identity, alpha) multipliers and shifts, the ratios in double (see
    relu_multiplier: float32 ratios differed from the pinned tflite-micro in 31 of 40 random int16 cases)."""
    alpha = float(np.float32(alpha))
    return (quantize_multiplier(float(input_scale) / float(output_scale)),
            quantize_multiplier(float(input_scale) * alpha / float(output_scale)))


def quantized_six(scale: float, zero_point: int, lo: int, hi: int) -> int:
    """Relu6Prepare's FloatToQuantizedType<T>(6.0f, scale, zp): clamped to the type's range."""
    return min(hi, max(lo, tflite_round(float(_f32(6.0) / _f32(scale))) + zero_point))


def relu_multiplier(input_scale: float, output_scale: float) -> tuple[int, int]:
    """CalculateReluOpData<T>'s multiplier. TFLM's source reads as a float32 ratio, but the pinned
    tflite-micro build behaves as a double one: over all int16 inputs, 20 of 40 random RELUs differed
    from it with float32, none with double. (int8's 256 inputs almost never tell the two apart.)"""
    return quantize_multiplier(float(input_scale) / float(output_scale))


def relu_params(op: Op, x: Tensor, y: Tensor) -> Rescale16:
    """CalculateReluOpData<int16_t> with zero points 0: act_min 0, act_max INT16_MAX."""
    _require_zero_points(op, x, y)
    return Rescale16(0, 0, 0, INT16_MAX, *relu_multiplier(x.quant.s, y.quant.s))


def relu6_params(op: Op, x: Tensor, y: Tensor) -> Rescale16:
    """Relu6Prepare: x clamped to [in_zp, six], the output's quantization ignored."""
    return Rescale16(x.quant.zp, x.quant.zp, x.quant.zp, quantized_six(x.quant.s, x.quant.zp, INT16_MIN, INT16_MAX))


def leaky_relu_params(op: Op, x: Tensor, y: Tensor) -> LeakyRelu16:
    return LeakyRelu16(x.quant.zp, y.quant.zp, *leaky_relu_multipliers(x.quant.s, op.options.get("alpha", 0.0), y.quant.s))


def sigmoid_params(op: Op, x: Tensor, y: Tensor) -> SigmoidLookup:
    """The int16 branch of LOGISTIC's and TANH's Prepare. A power-of-two input scale of 2^-12 (TANH:
    also 2^-13) takes multiplier 3 << left_shift and shift 0, as Eval substitutes; any other scale s
    takes multiplier ⌊s·3·4096·2^k⌋ with the smallest k that brings it above 32767 / 2."""
    _require_zero_points(op, x, y)
    log2_out, out_pot = checked_log2(y.quant.s)
    if not out_pot or log2_out != -15:
        raise op_error(op, f"output scale {y.quant.s:g} must be 2^-15 (TFLM requires it)")
    log2_in, pot = checked_log2(x.quant.s)
    left_shift = 12 + log2_in
    if pot and left_shift in ((0,) if op.type == "LOGISTIC" else (0, 1)):
        return SigmoidLookup(op.type, 3 << left_shift, 0)
    multiplier, left_shift = float(_f32(x.quant.s)) * 4096.0 * 3.0, 0
    while multiplier <= 32767.0 / 2.0 and left_shift <= 30:
        left_shift += 1
        multiplier *= 2.0
    if multiplier > 32767:   # TFLM only DCHECKs this; its int32 product would overflow
        raise op_error(op, f"input scale {x.quant.s:g} is too large for TFLM's int16 kernel (at most {32767 / 12288:.4g})")
    return SigmoidLookup(op.type, int(math.floor(multiplier)), left_shift)
