"""RELU, RELU6, LEAKY_RELU, LOGISTIC, TANH on int16 (16x8 models): TFLM's int16 reference kernels, bit for bit.

What each copies (tensorflow/tflite-micro):
  RELU        micro/kernels/activations_common.cc ReluPrepare (zero points 0) + activations.h ReluQuantized<int16_t>
  RELU6       Relu6Prepare (six = FloatToQuantizedType<int16_t>(6, scale, zp)) + Relu6Quantized<int16_t>
  LEAKY_RELU  micro/kernels/leaky_relu_common.cc + reference/leaky_relu.h QuantizeLeakyRelu<int16_t>
  LOGISTIC    micro/kernels/logistic_common.cc (int16 branch) + reference/integer_ops/logistic.h Logistic(int16)
  TANH        micro/kernels/tanh.cc CalculateArithmeticOpData (int16 branch) + reference/integer_ops/tanh.h Tanh(int16)

An int16 input has 65536 values, too many for a table on a microcontroller: prepare computes TFLM's
OpData (multipliers, shifts, bounds) and the kernel is the reference's integer expression per element
(TE). LOGISTIC and TANH interpolate in TFLite's 256-entry sigmoid table, a 512-byte constant
(lut16.py, which the LSTM's gates share).
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
from .lut16 import SIGMOID_TABLE_UINT16, input_scaling, logistic_s16, tanh_s16
from .requant import scale

INT16_MIN, INT16_MAX = -32768, 32767

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
    """reference_integer_ops::Logistic / Tanh (int16), lut16.py's expressions: TFLM's OpData
    (input_multiplier 0 marks the power-of-two case) and the sigmoid table."""

    op_type: str   # "LOGISTIC" or "TANH"
    input_multiplier: int
    input_left_shift: int

    def lower(self, data: OpData) -> Lowered:
        function = logistic_s16 if self.op_type == "LOGISTIC" else tanh_s16
        scaling = input_scaling(self.input_multiplier, self.input_left_shift)
        return _elementwise(data, f"{self.op_type.lower()}_int16", lambda x, table: function(x, table, *scaling),
                            (Const("sigmoid_table", SIGMOID_TABLE_UINT16),))


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
    also 2^-13) gives multiplier 0 (Eval then takes 3 << left_shift); any other scale s gives
    ⌊s·3·4096·2^k⌋ with the smallest k that brings it above 32767 / 2."""
    _require_zero_points(op, x, y)
    log2_out, out_pot = checked_log2(y.quant.s)
    if not out_pot or log2_out != -15:
        raise op_error(op, f"output scale {y.quant.s:g} must be 2^-15 (TFLM requires it)")
    log2_in, pot = checked_log2(x.quant.s)
    left_shift = 12 + log2_in
    if pot and left_shift in ((0,) if op.type == "LOGISTIC" else (0, 1)):
        return SigmoidLookup(op.type, 0, left_shift)
    multiplier, left_shift = float(_f32(x.quant.s)) * 4096.0 * 3.0, 0
    while multiplier <= 32767.0 / 2.0 and left_shift <= 30:
        left_shift += 1
        multiplier *= 2.0
    if multiplier > 32767:   # TFLM only DCHECKs this; its int32 product would overflow
        raise op_error(op, f"input scale {x.quant.s:g} is too large for TFLM's int16 kernel (at most {32767 / 12288:.4g})")
    return SigmoidLookup(op.type, int(math.floor(multiplier)), left_shift)
