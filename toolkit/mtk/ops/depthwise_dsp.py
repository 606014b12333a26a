"""DEPTHWISE_CONV_2D with more than one input channel on DSP cores (Cortex-M4, M7, M33): one C call for the
whole layer (c/mtk_depthwise_dsp.h), any multiplier, channel count, stride, dilation and padding; two taps per
SMLAD, requantization fused (SMMLAR on doubled sums, see the header). It takes a layer when every channel shifts
right (requant.rshift_table) and the fused arithmetic provably stays within int32 (`fused_params`); other layers
take depthwise.py's path."""

from __future__ import annotations

import numpy as np
from tvm.script import tirx as T

from ..graph import Op
from ..kernels.table import Family, spec
from .base import Const, Kernel, OpData, c_call
from .microkernels import SXTB16_ORDER
from .requant import Requant
from .variants import KernelChoice

KERNEL_SPEC = spec(Family.DEPTHWISE, "dsp-c4")
LANES = 4            # input channels per group
INT32_LIMIT = (1 << 31) - 1


def whole_groups(c_in: int, multiplier: int) -> list[np.ndarray]:
    """The output channels of the groups of 4 consecutive input channels, in the order the kernel runs them: per
    multiplier index m, output channels (i * multiplier + m) of input channels i = 4p .. 4p + 3."""
    return [np.arange(first, first + LANES) * multiplier + m
            for m in range(multiplier) for first in range(0, c_in - c_in % LANES, LANES)]


def rest_groups(c_in: int, multiplier: int) -> list[np.ndarray]:
    """The output channels of the input channels past the whole groups (C_in % 4 of them), 4 consecutive ones a
    group; lanes past the last channel are -1."""
    first, end = (c_in - c_in % LANES) * multiplier, c_in * multiplier
    lanes = [np.arange(c, c + LANES) for c in range(first, end, LANES)]
    return [np.where(channels < end, channels, -1) for channels in lanes]


def fused_params(bias: np.ndarray, rq: Requant, w: np.ndarray) -> np.ndarray | None:
    """int32 [channels][2 * bias, mult, k, e] of the fused requantization, or None when a channel shifts left
    or the doubled sums, the product plus k, could leave int32 (then depthwise.py's path serves the layer)."""
    if rq.rshift_table is None:
        return None
    mult = rq.multiplier.astype(np.int64)
    e = np.where(mult == 0, 1, -rq.shift.astype(np.int64))
    acc_bound = np.abs(bias.astype(np.int64)) + 128 * np.abs(w.astype(np.int64)).reshape(-1, bias.size).sum(axis=0)
    k = (np.int64(1) << (e - 1)) + rq.out_zp * (np.int64(1) << e)
    if np.any(e > 31) or np.any(2 * acc_bound > INT32_LIMIT) or np.any(acc_bound + 1 + np.abs(k) > INT32_LIMIT):
        return None
    return np.stack([2 * bias.astype(np.int64), mult, k, e], axis=1).astype(np.int32)


def pack(w: np.ndarray, params: np.ndarray, multiplier: int) -> np.ndarray:
    """The groups' stream (int32) mtk_depthwise_dsp_s8 reads in order, from weights w [1, kh, kw, C] and params
    [C][4] (fused_params); lanes past the last channel zero. Per group: its lanes' 2 * bias; the rest's groups (after
    the whole ones) each lane's input channel; the weights doubled, as int16: a whole group per pair of taps
    (2i, 2i + 1) per lane the two taps' weights, then an odd last tap's 4 in SXTB16 order, the rest's [taps][4];
    then per lane mult, k, e."""
    taps = w.reshape(-1, w.shape[-1]).astype(np.int16) * 2          # [taps][C]
    n = taps.shape[0]
    c_in = w.shape[-1] // multiplier

    def group(channels: np.ndarray, weights, inputs=()) -> list[np.ndarray]:
        lane_params = np.where(channels[:, None] >= 0, params[np.maximum(channels, 0)], 0)   # [4][4]
        return [lane_params[:, 0].astype(np.int32), *inputs, weights.astype(np.int16).view(np.int32),
                lane_params[:, 1:].reshape(-1).astype(np.int32)]

    stream = []
    for channels in whole_groups(c_in, multiplier):
        lanes = taps[:, channels]                                                 # [taps][4]
        pairs = lanes[:n - n % 2].reshape(-1, 2, LANES).transpose(0, 2, 1)      # [pair][lane][tap]
        single = lanes[n - 1, SXTB16_ORDER] if n % 2 else lanes[:0, 0]
        stream += group(channels, np.concatenate([pairs.reshape(-1), single]))
    for channels in rest_groups(c_in, multiplier):
        real = channels >= 0
        lanes = np.where(real[None, :], taps[:, np.maximum(channels, 0)], 0)
        stream += group(channels, lanes.reshape(-1), [np.where(real, channels // multiplier, 0).astype(np.int32)])
    return np.concatenate(stream)


def depthwise_dsp_kernel(op: Op, g, in_zp: int, w: np.ndarray, params: np.ndarray, rq: Requant) -> Kernel:
    """`g` is the op's ConvGeometry (geometry.py), w its [1, kh, kw, C] weights, params its fused_params."""
    multiplier = g.out_c // g.in_c
    stream = pack(w, params, multiplier)
    pad = np.full(g.in_c, in_zp, np.int8)
    i32 = "int32"

    @T.prim_func
    def depthwise(x: T.Buffer((g.in_h * g.in_w * g.in_c,), "int8"), groups: T.Buffer((stream.size,), i32),
                  pad_row: T.Buffer((g.in_c,), "int8"), out: T.Buffer((g.out_h * g.out_w * g.out_c,), "int8")):
        T.evaluate(c_call(KERNEL_SPEC.function, x=T.address_of(x[0]), groups_data=T.address_of(groups[0]),
                          pad=T.address_of(pad_row[0]), out=T.address_of(out[0]), in_h=g.in_h, in_w=g.in_w,
                          C_in=g.in_c, M=multiplier, out_h=g.out_h, out_w=g.out_w, kh=g.k_h, kw=g.k_w,
                          stride_h=g.stride_h, stride_w=g.stride_w, dil_h=g.dil_h, dil_w=g.dil_w, pad_top=g.pad_top,
                          pad_left=g.pad_left, act_min=rq.act_min, act_max=rq.act_max))

    args = [op.inputs[0], Const("groups", stream), Const("pad", pad), op.outputs[0]]
    return Kernel("depthwise_conv2d", args, func=depthwise, headers=(KERNEL_SPEC.header,),
                  c_calls=(KERNEL_SPEC.name,))


def takes(data: OpData) -> bool:
    """Every channel shifts right and the fused arithmetic stays within int32 (fused_params)."""
    p = data.params
    return fused_params(p.bias, p.requant, data.inputs[1].data) is not None


def lower(data: OpData) -> Kernel:
    """The layer (conv.DepthwiseParams) as depthwise_dsp_kernel computes it."""
    p = data.params
    w = data.inputs[1].data
    return depthwise_dsp_kernel(data.op, p.geometry, data.inputs[0].quant.zp, w, fused_params(p.bias, p.requant, w),
                                p.requant)


KERNEL = KernelChoice("dsp-c4", lower, takes)   # DSP cores, 4 channels and 2 taps a step, the whole layer in one call
