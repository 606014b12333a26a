"""LOGISTIC, TANH, RELU, RELU6, LEAKY_RELU, HARD_SWISH on int8, and all but HARD_SWISH
on int16 (their int16 kernels are in activation_int16.py): TFLM's reference kernels, bit for bit.

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

gemmlowp's fixed-point functions (logistic, tanh, exp) come from gemmlowp.py, run on numpy.
"""

from __future__ import annotations

import math

import numpy as np
from tvm import te

from ..errors import ModelError
from ..graph import Graph, Op, Tensor
from ..target import Cpu
from . import activation_int16
from .base import Axis, Const, Kernel, Lowered, OpData, OpDef, Rows, io
from .common import op_error, require_per_tensor
from .fixedpoint import quantize_multiplier, tflite_round
from .gemmlowp import INT32_MAX, NumpyArith, logistic, multiply_by_quantized_multiplier_np, tanh

INT8_VALUES = np.arange(-128, 128, dtype=np.int32)   # a lookup table's inputs, in table order


# ---- host-side tables: TFLM's Prepare + Eval for every int8 input -----------------------------

def _f32(v: float) -> np.float32:
    return np.float32(v)


def _fixed_point_input_params(input_scale: float) -> tuple[int, int, int]:
    """LOGISTIC/TANH Prepare: input onto Q4.27 (frexp, no QuantizeMultiplier fix-ups) and the radius
    (CalculateInputRadius(4, shift, 31)) beyond which the output saturates."""
    q, shift = math.frexp(float(_f32(input_scale)) * float(1 << 27))
    if shift < -31:   # the int32 rescale would shift every input out (a huge scale saturates: radius 0)
        raise ModelError(f"input scale {input_scale:g} is too small for 32-bit fixed point to rescale")
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
    (ident_mult, ident_shift), (alpha_mult, alpha_shift) = activation_int16.leaky_relu_multipliers(
        input_scale, alpha, output_scale)
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

def lookup_kernel(data: OpData) -> Lowered:
    """y[i] = table[x[i] + 128], the table prepare computed: any int8 -> int8 element-wise function."""
    op, n = data.op, data.output.size
    x = te.placeholder((n,), "int8", name="x")
    lut = te.placeholder((256,), "int8", name="lut")
    y = te.compute((n,), lambda i: lut[x[i].astype("int32") + 128], name="y")
    func = te.create_prim_func([x, lut, y])
    return Lowered([Kernel("lookup_int8", [op.inputs[0], Const("lut", data.params), op.outputs[0]], func=func)])


class Unary(OpDef):
    """One input, one output of the same type (int8 or int16) and size, per-tensor quantization.
    int8: prepare runs the reference on all 256 inputs (`table`, which raises for configurations TFLM
    rejects), lower looks it up. int16: prepare computes TFLM's OpData (`int16_params`), lower computes
    the reference's expression per element (activation_int16.py)."""

    def prepare(self, op: Op, graph: Graph, cpu: Cpu) -> OpData:
        (x, *_), y = io(op, graph)
        if x.dtype != y.dtype or x.dtype not in ("int8", "int16"):
            raise op_error(op, f"{x.dtype} -> {y.dtype}; mtk supports int8 -> int8 and int16 -> int16")
        require_per_tensor(op, x, y, dtypes=("int8", "int16"))
        if x.size != y.size:
            raise op_error(op, f"input {list(x.shape)} and output {list(y.shape)} differ")
        if x.dtype == "int16":
            return OpData.of(op, graph, cpu, self.int16_params(op, x, y))
        return OpData.of(op, graph, cpu, self.table(op, x, y).astype(np.int8))

    def table(self, op: Op, x: Tensor, y: Tensor) -> np.ndarray:
        raise NotImplementedError

    def int16_params(self, op: Op, x: Tensor, y: Tensor):
        raise op_error(op, f"int16 -> int16; TFLM has no int16 {op.type} kernel")

    def lower(self, data: OpData, variant=None) -> Lowered:
        if data.output.dtype == "int16":
            return data.params.lower(data)
        return lookup_kernel(data)

    def axis_map(self, data: OpData, axis: Axis) -> Rows | None:
        return Rows.pointwise(data, axis) if data.inputs[0].shape == data.output.shape else None


class Logistic(Unary):
    types = ("LOGISTIC",)

    def table(self, op: Op, x: Tensor, y: Tensor) -> np.ndarray:
        if y.quant.zp != -128:   # TFLM checks only the zero point; it assumes the scale 1/256
            raise op_error(op, f"output zero point must be -128 (got {y.quant.zp})")
        return logistic_table(x.quant.s, x.quant.zp)

    def int16_params(self, op: Op, x: Tensor, y: Tensor):
        return activation_int16.sigmoid_params(op, x, y)


class Tanh(Unary):
    """TFLM checks neither the output scale nor its zero point: the result is always Q0.7."""

    types = ("TANH",)

    def table(self, op: Op, x: Tensor, y: Tensor) -> np.ndarray:
        return tanh_table(x.quant.s, x.quant.zp)

    def int16_params(self, op: Op, x: Tensor, y: Tensor):
        return activation_int16.sigmoid_params(op, x, y)


class LeakyRelu(Unary):
    types = ("LEAKY_RELU",)

    def table(self, op: Op, x: Tensor, y: Tensor) -> np.ndarray:
        return leaky_relu_table(x.quant.s, x.quant.zp, y.quant.s, y.quant.zp, op.options.get("alpha", 0.0))

    def int16_params(self, op: Op, x: Tensor, y: Tensor):
        return activation_int16.leaky_relu_params(op, x, y)


class HardSwish(Unary):
    types = ("HARD_SWISH",)

    def table(self, op: Op, x: Tensor, y: Tensor) -> np.ndarray:
        if hard_swish_params(x.quant.s, y.quant.s)[1] > 0:
            raise op_error(op, f"output scale {y.quant.s:g} is too small for input scale {x.quant.s:g} "
                               "(TFLM needs input_scale / 128 / output_scale < 1)")
        return hard_swish_table(x.quant.s, x.quant.zp, y.quant.s, y.quant.zp)


def relu_table(input_scale: float, input_zp: int, output_scale: float, output_zp: int) -> np.ndarray:
    """ReluQuantized: out_zp + MultiplyByQuantizedMultiplier(x - in_zp), clamped to [out_zp, 127]."""
    multiplier, shift = activation_int16.relu_multiplier(input_scale, output_scale)
    scaled = multiply_by_quantized_multiplier_np(INT8_VALUES - input_zp, multiplier, shift).astype(np.int64)
    return np.clip(output_zp + scaled, max(-128, output_zp), 127).astype(np.int8)


def relu6_table(input_scale: float, input_zp: int) -> np.ndarray:
    """Relu6Quantized: x clamped to [in_zp, quantized 6.0] in the input's own quantization."""
    six = activation_int16.quantized_six(input_scale, input_zp, -128, 127)
    return np.minimum(np.maximum(INT8_VALUES, input_zp), six).astype(np.int8)


class Relu(Unary):
    types = ("RELU",)

    def table(self, op: Op, x: Tensor, y: Tensor) -> np.ndarray:
        return relu_table(x.quant.s, x.quant.zp, y.quant.s, y.quant.zp)

    def int16_params(self, op: Op, x: Tensor, y: Tensor):
        return activation_int16.relu_params(op, x, y)


class Relu6(Unary):
    """TFLM ignores the output's quantization: the result is the clamped input."""

    types = ("RELU6",)

    def table(self, op: Op, x: Tensor, y: Tensor) -> np.ndarray:
        return relu6_table(x.quant.s, x.quant.zp)

    def int16_params(self, op: Op, x: Tensor, y: Tensor):
        return activation_int16.relu6_params(op, x, y)


OPS = [Logistic(), Tanh(), LeakyRelu(), HardSwish(), Relu(), Relu6()]
