"""16x8 CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED (int16 activations with zero point 0, int8 weights,
int64 or int32 bias), as TFLM's 16x8 reference kernels compute them; Requant16 serves TRANSPOSE_CONV too.

References (tensorflow/tflite-micro):
  micro/kernels/conv.cc, fully_connected.cc (Eval, kTfLiteInt16): an int32 bias, or none with the option
      quantized_bias_type INT32, takes the kernel templated on an int32 accumulator, which requantizes with
      MultiplyByQuantizedMultiplier(int32_t, ...) (TFLite's double rounding); an int64 bias, or none otherwise,
      the int64 one, which calls MultiplyByQuantizedMultiplier(int64_t, ...) (internal/common.cc: the
      multiplier reduced to 16 bits, one rounding; fixedpoint.reduced_multiplier).
  micro/kernels/depthwise_conv.cc: an int64 bias (or none) only, the int64 accumulator.
  kernels/internal/reference/integer_ops/conv.h, depthwise_conv.h (ConvPerChannel, DepthwiseConvPerChannel on
      int16_t input): acc = Σ w·x over the taps inside the image (zero points are not read), + bias, scaled,
      clamped to the activation range (CalculateActivationRangeQuantized within int16), no output offset;
      depthwise output channel c reads input channel c / depth_multiplier.
  integer_ops/fully_connected.h (FullyConnectedPerChannel, FullyConnected): acc = Σ w·(x + input_offset), +
      output_offset after scaling: both offsets 0 here.
  Multipliers: PopulateConvolutionQuantizationParams (conv, depthwise: s_in·s_w[c]/s_out in double);
      fully_connected_common.cc: per channel the same, per tensor GetQuantizedConvolutionMultipler (the
      float32 product s_in·s_w, then / s_out in double).

mtk requires zero point 0 on the int16 tensors, as 16x8 quantization makes them (TFLM's conv kernel would
ignore another, its fully connected kernel would read it). An int64 accumulator is exact in int32 when no
channel's Σ|w|·32768 reaches 2^31 (the weights are constants): the loops then sum in int32 and widen once,
for the bias and the requantization.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from tvm import te, tirx

from ..errors import ModelError
from ..graph import Graph, Op, Tensor
from ..target import Cpu
from .base import Const, Kernel, Lowered, OpData, OpDef, constant_kernel, io
from .common import check_int8_weights, op_error, require_per_tensor
from .fixedpoint import (activation_range, clamp, convolution_multipliers, multiply_by_quantized_multiplier_s64,
                         quantize_multipliers, reduced_multiplier)
from .geometry import ConvGeometry, conv_geometry
from .requant import Requant
from .schedules import schedule_per_output

INT16_MIN, INT16_MAX = -32768, 32767
TENSOR_TYPE_INT32 = 2       # schema TensorType.INT32: the options' quantized_bias_type
# Bias element types TFLM's Eval reads for int16 input (an int32 bias given to depthwise would be read as int64).
BIAS_DTYPES = {"CONV_2D": ("int32", "int64"), "DEPTHWISE_CONV_2D": ("int64",), "FULLY_CONNECTED": ("int32", "int64"),
               "TRANSPOSE_CONV": ("int16", "int64")}
WEIGHT_AXIS = {"CONV_2D": 0, "DEPTHWISE_CONV_2D": 3, "FULLY_CONNECTED": 0, "TRANSPOSE_CONV": 0}


@dataclass(frozen=True)
class Requant16(Requant):
    """acc → MultiplyByQuantizedMultiplier → clamp → int16, no output offset. `wide` (int64 accumulator):
    multiplier/shift hold reduced_multiplier's 16-bit multipliers and right shifts; otherwise TFLite's int32
    multiplier and shift (Requant's requantization)."""

    wide: bool = True

    @classmethod
    def of(cls, op: Op, multiplier: np.ndarray, shift: np.ndarray, y: Tensor, wide: bool) -> Requant16:
        lo, hi = activation_range(op.options.get("fused_activation_function", "NONE"), y.quant, INT16_MIN, INT16_MAX)
        if wide:
            try:
                pairs = [reduced_multiplier(int(m), int(s)) for m, s in zip(multiplier, shift)]
            except ModelError as err:
                raise op_error(op, err.message) from None
            multiplier, shift = (np.array(p, np.int32) for p in zip(*pairs))
        return cls(multiplier, shift, 0, lo, hi, wide)

    @property
    def acc_dtype(self) -> str:
        return "int64" if self.wide else "int32"

    def consts(self) -> list[Const]:
        """The arrays `output` reads, in the order of its `buffers`."""
        return [Const("mult", self.multiplier), Const("shift", self.shift)] if self.wide else super().consts()

    def output(self, acc, c, *buffers):
        """The int16 output of channel `c` from `acc` (acc_dtype); `buffers` those of consts()."""
        if not self.wide:
            scaled = self.scaled(acc, c, *buffers)
        elif self.per_tensor:
            scaled = multiply_by_quantized_multiplier_s64(acc, int(self.multiplier[0]), int(self.shift[0]))
        else:
            scaled = multiply_by_quantized_multiplier_s64(acc, buffers[0][c], buffers[1][c])
        return clamp(scaled, self.act_min, self.act_max).astype("int16")


def sum_dtype(w: np.ndarray, weight_axis: int) -> str:
    """int32 when no output channel's sum can leave int32 (|x| ≤ 32768), else int64."""
    channel_bound = np.abs(np.moveaxis(w.astype(np.int64), weight_axis, 0)).reshape(w.shape[weight_axis], -1).sum(axis=1)
    return "int32" if int(channel_bound.max(initial=0)) * 32768 < 2**31 else "int64"


def check_16x8(op: Op, x: Tensor, w: Tensor, bias: Tensor | None, y: Tensor) -> bool:
    """TFLM's 16x8 Prepare checks, and mtk's zero points; whether the accumulator is int64 (`wide`)."""
    require_per_tensor(op, x, y, dtypes=("int16",))
    for t in (x, y):
        if t.quant.zp != 0:
            raise op_error(op, f"int16 tensor '{t.name}' has zero point {t.quant.zp}; 16x8 quantization needs 0")
    check_int8_weights(op, w, WEIGHT_AXIS[op.type])
    allowed = BIAS_DTYPES[op.type]
    if bias is not None and (bias.dtype not in allowed or not bias.is_constant):
        raise op_error(op, f"bias must be constant {' or '.join(allowed)} with int16 input (got {bias.dtype})")
    if op.type in ("DEPTHWISE_CONV_2D", "TRANSPOSE_CONV"):
        return True
    if bias is not None:
        return bias.dtype == "int64"
    return op.options.get("quantized_bias_type", 0) != TENSOR_TYPE_INT32


@dataclass(frozen=True)
class Params16x8:
    bias: np.ndarray             # int64 (wide) or int32, one per output channel (zeros without a bias)
    requant: Requant16
    sum_dtype: str               # the loops' accumulator (int32 when exact)
    geometry: ConvGeometry | None = None   # conv and depthwise


def plan_16x8(op: Op, graph: Graph) -> Params16x8:
    """CONV_2D, DEPTHWISE_CONV_2D or FULLY_CONNECTED with an int16 output."""
    (x, w, *rest), y = io(op, graph)
    bias = rest[0] if rest else None
    wide = check_16x8(op, x, w, bias, y)
    axis = WEIGHT_AXIS[op.type]
    channels = w.shape[axis]
    geometry = None
    if op.type == "FULLY_CONNECTED":
        if len(w.shape) != 2 or x.size % w.shape[1] != 0:
            raise op_error(op, f"input of {x.size} values does not divide into rows of {w.shape[-1]}")
        if op.options.get("weights_format", 0) != 0:
            raise op_error(op, "shuffled weights are not supported")
    elif op.type == "CONV_2D" and w.shape[3] != x.shape[3]:
        raise op_error(op, f"grouped convolution ({x.shape[3]} input channels, filter depth {w.shape[3]}) "
                           "is not supported")
    elif op.type == "DEPTHWISE_CONV_2D" and (y.shape[3] != w.shape[3] or w.shape[3] % x.shape[3] != 0):
        raise op_error(op, f"filter channels {w.shape[3]} do not match input channels {x.shape[3]} × depth multiplier")
    if op.type != "FULLY_CONNECTED":
        geometry = conv_geometry(op, x, w, y)
    if op.type == "FULLY_CONNECTED" and not w.quant.per_channel:
        real = float(np.float32(x.quant.s) * np.float32(w.quant.s)) / float(np.float32(y.quant.s))
        mult, shift = quantize_multipliers(np.full(channels, real))
    else:
        mult, shift = convolution_multipliers(x.quant.s, w.quant.scale, y.quant.s, channels)
    requant = Requant16.of(op, mult, shift, y, wide)
    bias_data = (np.zeros(channels, np.int64) if bias is None else bias.data.reshape(-1)).astype(requant.acc_dtype)
    return Params16x8(bias_data, requant, sum_dtype(w.data, axis) if wide else "int32", geometry)


def _window_sum(op_type: str, X: te.Tensor, W: te.Tensor, out_shape, g: ConvGeometry, dtype: str) -> te.Tensor:
    """Σ w·x over the taps of each output inside the image (conv.h, depthwise_conv.h)."""
    ky = te.reduce_axis((0, g.k_h), "ky")
    kx = te.reduce_axis((0, g.k_w), "kx")
    depthwise = op_type == "DEPTHWISE_CONV_2D"
    kc = None if depthwise else te.reduce_axis((0, g.in_c), "kc")
    multiplier = g.out_c // g.in_c
    zero = tirx.const(0, dtype)

    def tap(n, oy, ox, c):
        iy = oy * g.stride_h - g.pad_top + ky * g.dil_h
        ix = ox * g.stride_w - g.pad_left + kx * g.dil_w
        inside = tirx.all(iy >= 0, iy < g.in_h, ix >= 0, ix < g.in_w)
        if depthwise:
            product = X[n, iy, ix, c // multiplier].astype(dtype) * W[0, ky, kx, c].astype(dtype)
            return te.sum(tirx.if_then_else(inside, product, zero), axis=[ky, kx])
        product = X[n, iy, ix, kc].astype(dtype) * W[c, ky, kx, kc].astype(dtype)
        return te.sum(tirx.if_then_else(inside, product, zero), axis=[ky, kx, kc])
    return te.compute(out_shape, tap, name="acc")


def _row_sum(X: te.Tensor, W: te.Tensor, out_shape, dtype: str) -> te.Tensor:
    """Σ w·x along each row (fully_connected.h)."""
    k = te.reduce_axis((0, int(W.shape[1])), "k")
    return te.compute(out_shape, lambda r, u: te.sum(X[r, k].astype(dtype) * W[u, k].astype(dtype), axis=k),
                      name="acc")


def lower_16x8(data: OpData) -> Lowered:
    op, p, y = data.op, data.params, data.output
    rq = p.requant
    if rq.constant_output is not None:
        return Lowered([constant_kernel(data, rq.constant_output)])
    x, w, *_ = data.inputs
    if op.type == "FULLY_CONNECTED":
        x_shape, out_shape = (x.size // w.shape[1], w.shape[1]), (y.size // w.shape[0], w.shape[0])
    else:
        x_shape, out_shape = x.shape, y.shape
    X = te.placeholder(x_shape, "int16", name="x")
    W = te.placeholder(w.shape, "int8", name="w")
    B = te.placeholder((len(p.bias),), rq.acc_dtype, name="bias")
    consts = rq.consts()
    buffers = [te.placeholder((c.data.size,), "int32", name=c.name) for c in consts]
    if op.type == "FULLY_CONNECTED":
        acc = _row_sum(X, W, out_shape, p.sum_dtype)
    else:
        acc = _window_sum(op.type, X, W, out_shape, p.geometry, p.sum_dtype)
    out = te.compute(out_shape, lambda *i: rq.output(acc[i].astype(rq.acc_dtype) + B[i[-1]], i[-1], *buffers),
                     name="out")
    func = schedule_per_output(te.create_prim_func([X, W, B, *buffers, out]))
    args = [op.inputs[0], op.inputs[1], Const("bias", p.bias), *consts, op.outputs[0]]
    return Lowered([Kernel(f"{op.type.lower()}_s16", args, func=func)])


def with_16x8(opdef: type[OpDef]) -> type[OpDef]:
    """`opdef` (an int8 family of conv.py, fully_connected.py) that also computes its 16x8 form (With16x8)."""
    return type(opdef.__name__, (With16x8, opdef), {"__doc__": opdef.__doc__, "__module__": opdef.__module__})


class With16x8:
    """Mixed in ahead of an int8 op family: an int16 output takes the 16x8 kernel here (no schedules to
    tune), any other the family's own."""

    def prepare(self, op: Op, graph: Graph, cpu: Cpu) -> OpData:
        if graph.tensors[op.outputs[0]].dtype == "int16":
            return OpData.of(op, graph, cpu, plan_16x8(op, graph))
        return super().prepare(op, graph, cpu)

    def variants(self, data: OpData) -> list:
        return [] if isinstance(data.params, Params16x8) else super().variants(data)

    def lower(self, data: OpData, variant=None) -> Lowered:
        return lower_16x8(data) if isinstance(data.params, Params16x8) else super().lower(data, variant)
