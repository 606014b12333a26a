"""TRANSPOSE_CONV on int8 (per-channel int8 weights, int32 bias), as TFLM computes it.

Reference (tensorflow/tflite-micro): micro/kernels/transpose_conv.cc (inputs: output shape,
filter [out_c, fh, fw, in_c], input, optional bias; CalculateOpData pads as
ComputePaddingHeightWidth does for a convolution from the OUTPUT's size, dilation 1;
PopulateConvolutionQuantizationParams per output channel) with
kernels/internal/reference/integer_ops/transpose_conv.h (every input pixel scatters
(x − in_zp)·w into an int32 scratch image, then bias, requantization, out_zp, clamp).

mtk gathers instead of scattering (integer sums do not depend on the order): output row oy
takes the filter rows fy ≡ oy + pad (mod stride) from input row (oy + pad − fy) / stride, so each
output visits only the ⌈fh/stride⌉·⌈fw/stride⌉ taps that reach it, and no scratch image is needed.
The in_zp term stays inside the sum: which taps reach an output depends on its position. With one
image (batch 1) on Helium cores, each stride phase is a stride-1 CONV_2D on the fused int8 GEMM
(transpose_conv_phases.py: its taps rotated, im2col padding of in_zp, −in_zp·Σw folded into the bias). On
other cores up to 8 output channels the rows are scattered (transpose_conv_scatter.py); more take, at
stride 1, the CONV_2D the layer equals on the int8 GEMM (transpose_conv_phases.as_convolution), at other
strides each stride phase as a convolution of its own on the 16x8 GEMM (int16x8.transpose_conv_gemm_kernel):
int8 inputs gathered as x − in_zp (0 where no tap reaches), int8 weights, int32 sums as TFLM's. Otherwise
(batches) the sums are TE loops over the taps.

16x8 (int16 input and output, zero points 0): transpose_conv.cc's kTfLiteInt16 case, an int64 scratch
image (an int16 bias converted to int64 first, or an int64 bias), integer_ops/transpose_conv.h's int16
TransposeConv: MultiplyByQuantizedMultiplier(int64_t, ...) and the int16 clamp (int16x8.Requant16).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from tvm import te, tirx

from ..graph import Graph, Op
from .base import Const, Kernel, Lowered, OpData, OpDef, constant_kernel, io
from .common import check_int8_weights, op_error
from .conv import requant_params
from .fixedpoint import convolution_multipliers
from .int16x8 import Requant16, check_16x8, sums_fit_int32, transpose_conv_gemm_kernel
from .requant import Requant, requant_placeholders
from .schedules import schedule_per_output
from .gemm import GemmOpDef, gemm_kernel
from .transpose_conv_phases import as_convolution, transpose_conv_mve_kernels
from .transpose_conv_scatter import scatters, transpose_conv_scatter_kernel


def _c_div(a: int, b: int) -> int:
    """C's integer division (toward zero)."""
    return -(-a // b) if (a < 0) != (b < 0) else a // b


def transpose_conv_padding(padding: str, size: int, filter_size: int, stride: int) -> int:
    """ComputePaddingHeightWidth along one axis, `size` being the transpose convolution's output extent."""
    if padding == "SAME":
        out = _c_div(size + stride - 1, stride)
    elif padding == "VALID":
        out = _c_div(size + stride - filter_size, stride)
    else:
        out = 0
    return max((out - 1) * stride + filter_size - size, 0) // 2


@dataclass(frozen=True)
class TransposeConvPlan:
    stride: tuple[int, int]
    pad: tuple[int, int]
    in_zp: int
    requant: Requant | Requant16
    bias: np.ndarray          # int32 (int8), int64 (16x8): one per output channel, zeros without a bias
    sum_dtype: str = "int32"  # the loops' accumulator


class TransposeConv(OpDef):
    types = ("TRANSPOSE_CONV",)

    def plan(self, op: Op, graph: Graph) -> TransposeConvPlan:
        inputs, y = io(op, graph)
        _, w, x, *rest = inputs
        bias = rest[0] if rest else None
        wide = (x.dtype, y.dtype) == ("int16", "int16")
        if (x.dtype, y.dtype) != ("int8", "int8") and not wide:
            raise op_error(op, f"{x.dtype} -> {y.dtype}; mtk supports int8 -> int8 and int16 -> int16 here")
        check_int8_weights(op, w, 0)
        if wide:
            check_16x8(op, x, w, bias, y)
        elif bias is not None and (bias.dtype != "int32" or not bias.is_constant):
            raise op_error(op, f"bias must be a constant int32 per output channel (got {bias.dtype}{list(bias.shape)})")
        if bias is not None and bias.size != w.shape[0]:
            raise op_error(op, f"bias has {bias.size} values for {w.shape[0]} output channels")
        if x.quant is None or y.quant is None or x.quant.per_channel or y.quant.per_channel:
            raise op_error(op, "input and output need per-tensor quantization")
        if len(x.shape) != 4 or len(w.shape) != 4 or len(y.shape) != 4 or x.shape[0] != y.shape[0] \
                or x.shape[3] != w.shape[3] or y.shape[3] != w.shape[0]:
            raise op_error(op, f"input {list(x.shape)}, filter {list(w.shape)} and output {list(y.shape)} do not match")
        o = op.options
        stride = (int(o.get("stride_h", 1)), int(o.get("stride_w", 1)))
        if min(stride) < 1:
            raise op_error(op, f"stride {list(stride)}")
        padding = o.get("padding", "SAME")
        pad = tuple(transpose_conv_padding(padding, y.shape[1 + a], w.shape[1 + a], stride[a]) for a in range(2))
        if wide:
            mult, shift = convolution_multipliers(x.quant.s, w.quant.scale, y.quant.s, w.shape[0])
            rq = Requant16.of(op, mult, shift, y, wide=True)
        else:
            rq = requant_params(x, w, y, w.shape[0], o.get("fused_activation_function", "NONE"))
        bias_data = (np.zeros(w.shape[0], np.int64) if bias is None else bias.data.reshape(-1)).astype(
            "int64" if wide else "int32")
        sums = "int64" if wide and not sums_fit_int32(w.data, 0) else "int32"
        return TransposeConvPlan(stride, pad, x.quant.zp, rq, bias_data, sums)

    def macs(self, data: OpData) -> int:
        _, w, x, *_ = data.inputs
        return x.size * w.shape[0] * w.shape[1] * w.shape[2]

    def lower(self, data: OpData, variant=None) -> Lowered:
        op, p = data.op, data.params
        _, w, x, *_ = data.inputs
        y = data.output
        rq = p.requant
        if rq.constant_output is not None:
            return Lowered([constant_kernel(data, rq.constant_output)])
        if x.shape[0] == 1 and x.dtype == "int8" and data.cpu.mve:
            return Lowered(transpose_conv_mve_kernels(data, p.stride, p.pad, p.bias))
        if x.shape[0] == 1 and x.dtype == "int8" and p.stride == (1, 1) and not scatters(w.shape[0]):
            conv = as_convolution(data, p.pad, p.bias)
            return Lowered([gemm_kernel(conv, GemmOpDef().variants(conv)[0])])
        if x.shape[0] == 1:
            scatter = x.dtype == "int8" and scatters(w.shape[0])
            kernel = transpose_conv_scatter_kernel if scatter else transpose_conv_gemm_kernel
            return Lowered([kernel(data, p.stride, p.pad, p.bias)])
        out_c, fh, fw, in_c = w.shape
        (sh, sw), (ph, pw) = p.stride, p.pad
        X = te.placeholder(x.shape, x.dtype, name="x")
        W = te.placeholder(w.shape, "int8", name="w")
        B = te.placeholder((out_c,), p.bias.dtype.name, name="bias")
        requant = rq.consts()
        buffers = requant_placeholders(requant)
        acc_dtype = p.sum_dtype
        ky = te.reduce_axis((0, -(-fh // sh)), "ky")
        kx = te.reduce_axis((0, -(-fw // sw)), "kx")
        kc = te.reduce_axis((0, in_c), "kc")

        def i32(v: int):
            return tirx.const(v, "int32")

        def to_acc(v):
            return v.astype(acc_dtype)

        def tap(n, oy, ox, c):
            fy = tirx.floormod(oy + i32(ph), i32(sh)) + ky * i32(sh)
            fx = tirx.floormod(ox + i32(pw), i32(sw)) + kx * i32(sw)
            iy = tirx.floordiv(oy + i32(ph), i32(sh)) - ky
            ix = tirx.floordiv(ox + i32(pw), i32(sw)) - kx
            reaches = tirx.all(fy < i32(fh), fx < i32(fw), iy >= i32(0), iy < i32(x.shape[1]), ix >= i32(0),
                               ix < i32(x.shape[2]))
            product = (to_acc(X[n, iy, ix, kc]) - tirx.const(p.in_zp, acc_dtype)) * to_acc(W[c, fy, fx, kc])
            return te.sum(tirx.if_then_else(reaches, product, tirx.const(0, acc_dtype)), axis=[ky, kx, kc])
        acc = te.compute(y.shape, tap, name="acc")
        out = te.compute(y.shape, lambda n, oy, ox, c: rq.output(acc[n, oy, ox, c].astype(B.dtype) + B[c], c, **buffers),
                         name="out")
        func = schedule_per_output(te.create_prim_func([X, W, B, *buffers.values(), out]))
        args = [op.inputs[2], op.inputs[1], Const("bias", p.bias), *requant.values(), op.outputs[0]]
        return Lowered([Kernel("transpose_conv" if x.dtype == "int8" else "transpose_conv_s16", args, func=func)])


OPS = [TransposeConv()]
