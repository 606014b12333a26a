"""DEPTHWISE_CONV_2D on Helium (MVE) cores: one C call for the whole layer (c/mtk_depthwise_mve.h), 16 output
channels a pass (with a depth multiplier above 1 their inputs gathered by byte offsets), requantization fused
(every channel shifts right: requant.rshift_table). Other depthwise layers take depthwise.py's path."""

from __future__ import annotations

import numpy as np
from tvm.script import tirx as T

from ..graph import Op
from .base import Const, Kernel, OpData
from .gemm_mve import GEMM_MVE_HEADER
from .microkernels import pad_to_groups
from .requant import Requant
from .variants import KernelChoice

DEPTHWISE_MVE_HEADER = "mtk_depthwise_mve.h"
LANES = 16                  # channels per group: one int8 vector
SUM_ORDER = [0, 2, 1, 3]    # the kernel's int32 sum vectors hold channels 4j + 0, 4j + 2, 4j + 1, 4j + 3
MAX_TAPS = 16               # mtk_depthwise_mve.h MTK_DW_MVE_MAX_TAPS
MAX_GATHERED_CHANNELS = 256   # input channels a multiplier's byte offsets reach


def pack_stream(w: np.ndarray, bias: np.ndarray, rq: Requant, multiplier: int) -> np.ndarray:
    """What the kernel reads per group of 16 channels, zero-padded to whole groups, as int32: the int8 weights
    [kh·kw][16]; int32 [bias, multiplier, shift][sum vector][4]; out_zp as int16 [8]; with a depth multiplier
    above 1, each lane's input channel as uint8 [16]."""
    channels = w.shape[-1]
    groups = -(-channels // LANES)
    weights = pad_to_groups(w.reshape(-1, channels).astype(np.int8), LANES)
    params = pad_to_groups(np.stack([bias, rq.multiplier, rq.shift]).astype(np.int32), LANES)
    by_sum = params.reshape(3, groups, 4, 4).transpose(1, 0, 3, 2)[:, :, SUM_ORDER]   # [group][field][sum][lane]
    by_group = weights.reshape(-1, groups, LANES).transpose(1, 0, 2).reshape(groups, -1)
    output = np.full(8, rq.out_zp, np.int16).view(np.int32)
    in_c = channels // multiplier
    lanes = np.minimum(np.arange(groups * LANES) // multiplier, in_c - 1).astype(np.uint8).view(np.int32)
    in_channels = lanes.reshape(groups, -1) if multiplier > 1 else np.zeros((groups, 0), np.int32)
    return np.concatenate([np.concatenate([wg.view(np.int32), pg.reshape(-1), output, lg])
                           for wg, pg, lg in zip(by_group, by_sum, in_channels)])


def depthwise_mve_kernel(op: Op, g, in_zp: int, w: np.ndarray, bias: np.ndarray, rq: Requant) -> Kernel:
    """`g` is the op's ConvGeometry (geometry.py), w its [1, kh, kw, C] weights (takes says which layers)."""
    C = g.out_c
    stream = pack_stream(w, bias, rq, C // g.in_c)
    pad = pad_to_groups(np.full(C, in_zp, np.int8), LANES)   # read only in lanes whose weights are 0
    i32 = "int32"

    @T.prim_func
    def depthwise(x: T.Buffer((g.in_h * g.in_w * g.in_c,), "int8"), sp: T.Buffer((stream.size,), i32),
                  pad_row: T.Buffer((pad.size,), "int8"), out: T.Buffer((g.out_h * g.out_w * C,), "int8")):
        T.evaluate(T.call_extern(i32, "mtk_depthwise_mve_s8", T.address_of(x[0]), T.address_of(sp[0]),
                                 T.address_of(pad_row[0]), T.address_of(out[0]),
                                 g.in_h, g.in_w, g.in_c, C, g.out_h, g.out_w, g.k_h, g.k_w, g.stride_h, g.stride_w,
                                 g.dil_h, g.dil_w, g.pad_top, g.pad_left, rq.out_zp, rq.act_min, rq.act_max))

    args = [op.inputs[0], Const("w", stream), Const("pad", pad), op.outputs[0]]
    return Kernel("depthwise_conv2d", args, func=depthwise, headers=(GEMM_MVE_HEADER, DEPTHWISE_MVE_HEADER),
                  c_calls=("mtk_depthwise_mve_s8",))


def takes(data: OpData) -> bool:
    """At most MAX_TAPS taps, multiplier 1 or at most MAX_GATHERED_CHANNELS input channels, and every channel
    shifts right (the fused requantization)."""
    g, rq = data.params.geometry, data.params.requant
    return ((g.out_c == g.in_c or g.in_c <= MAX_GATHERED_CHANNELS) and g.k_h * g.k_w <= MAX_TAPS
            and rq.rshift_table is not None)


def lower(data: OpData) -> Kernel:
    """The layer (conv.DepthwiseParams) as depthwise_mve_kernel computes it."""
    p = data.params
    return depthwise_mve_kernel(data.op, p.geometry, data.inputs[0].quant.zp, data.inputs[1].data, p.bias, p.requant)


KERNEL = KernelChoice("mve-c16", lower, takes)   # Helium, 16 channels a pass, the whole layer in one call
