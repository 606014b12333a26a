"""DEPTHWISE_CONV_2D on Helium (MVE) cores: one C call for the whole layer (c/mtk_depthwise_mve.h), 16 output
channels a pass (a last 1-8 channels 8 lanes wide; with a depth multiplier above 1 their inputs gathered by byte
offsets), two taps' products added in int16 where no channel's pair of weights is -128 twice (pairs), any
window, requantization fused (every channel shifts right: requant.rshift_table). Other depthwise layers take
depthwise.py's path."""

from __future__ import annotations

import numpy as np
from tvm.script import tirx as T

from ..graph import Op
from ..kernels.table import GEMM_MVE_HEADER, Family, spec
from .base import Const, Kernel, OpData, c_call
from .microkernels import pad_to_groups
from .requant import Requant
from .variants import KernelChoice

KERNEL_SPEC = spec(Family.DEPTHWISE, "mve-c16")
LANES = 16                  # channels per group: one int8 vector
HALF_LANES = 8              # a last group of at most 8 channels: int16 vectors
SUM_ORDER = [0, 2, 1, 3]    # the kernel's int32 sum vectors hold channels 4j + 0, 4j + 2, 4j + 1, 4j + 3
MAX_TAPS = 256              # the kernel's per-pixel tap table is on the stack (4 bytes a tap)
MAX_GATHERED_CHANNELS = 256   # input channels a multiplier's byte offsets reach


def pairs(w: np.ndarray) -> int:
    """Tap pairs the kernel may add as int16 before widening: kh·kw / 2, or 0 if a channel of a pair
    (taps 2i, 2i + 1 in [kh][kw] order) has -128 as both weights (128 · 256 would overflow int16)."""
    taps = w.reshape(-1, w.shape[-1])
    n = len(taps) // 2
    return 0 if np.any((taps[0:2 * n:2] == -128) & (taps[1:2 * n:2] == -128)) else n


def _group(w: np.ndarray, params: np.ndarray, lanes: np.ndarray, out_zp: int) -> list[np.ndarray]:
    """One group's stream as int32 pieces (see pack_stream): w [taps][n], params [3][n], lanes [n] (or None);
    n <= 8 only in the last group."""
    width = LANES if w.shape[1] > HALF_LANES else HALF_LANES
    pad = width - w.shape[1]
    w = np.pad(w, ((0, 0), (0, pad))).astype(np.int8)
    params = np.pad(params, ((0, 0), (0, pad))).astype(np.int32)
    if width == LANES:
        by_sum = params.reshape(3, 4, 4).transpose(0, 2, 1)[:, SUM_ORDER]   # [field][sum][lane]
        pieces = [by_sum.reshape(-1), np.full(8, out_zp, np.int16).view(np.int32)]
        lane_type = np.uint8
    else:
        pieces = [params.reshape(3, 4, 2).transpose(0, 2, 1).reshape(-1)]
        lane_type = np.uint16
    if lanes is not None:
        pieces.append(np.pad(lanes, (0, pad), mode="edge").astype(lane_type).view(np.int32))
    return pieces + [w.view(np.int32).reshape(-1)]


def pack_stream(w: np.ndarray, bias: np.ndarray, rq: Requant, multiplier: int) -> np.ndarray:
    """What the kernel reads, group by group of 16 channels (zero-padded), as int32: int32 [bias, multiplier,
    shift][sum vector][4]; out_zp as int16 [8]; with a depth multiplier above 1, each lane's input channel as
    uint8 [16]; the int8 weights [kh·kw][16]. A last group of 1-8 channels, 8 lanes: int32 [bias, multiplier,
    shift][even, odd channels][4]; uint16 [8]; int8 [kh·kw][8]."""
    channels = w.shape[-1]
    taps = w.reshape(-1, channels)
    params = np.stack([bias, rq.multiplier, rq.shift]).astype(np.int64)
    in_channel = np.arange(channels) // multiplier
    pieces = []
    for first in range(0, channels, LANES):
        group = slice(first, min(first + LANES, channels))
        pieces += _group(taps[:, group], params[:, group], in_channel[group] if multiplier > 1 else None, rq.out_zp)
    return np.concatenate(pieces)


def depthwise_mve_kernel(op: Op, g, in_zp: int, w: np.ndarray, bias: np.ndarray, rq: Requant) -> Kernel:
    """`g` is the op's ConvGeometry (geometry.py), w its [1, kh, kw, C] weights (takes says which layers)."""
    C = g.out_c
    stream = pack_stream(w, bias, rq, C // g.in_c)
    pad = pad_to_groups(np.full(C, in_zp, np.int8), LANES)   # read only in lanes whose weights are 0
    i32 = "int32"

    @T.prim_func
    def depthwise(x: T.Buffer((g.in_h * g.in_w * g.in_c,), "int8"), sp: T.Buffer((stream.size,), i32),
                  pad_row: T.Buffer((pad.size,), "int8"), out: T.Buffer((g.out_h * g.out_w * C,), "int8")):
        T.evaluate(c_call(KERNEL_SPEC.function, x=T.address_of(x[0]), s=T.address_of(sp[0]),
                          pad=T.address_of(pad_row[0]), out=T.address_of(out[0]), in_h=g.in_h, in_w=g.in_w,
                          in_c=g.in_c, C=C, out_h=g.out_h, out_w=g.out_w, kh=g.k_h, kw=g.k_w, stride_h=g.stride_h,
                          stride_w=g.stride_w, dil_h=g.dil_h, dil_w=g.dil_w, pad_top=g.pad_top, pad_left=g.pad_left,
                          pairs=pairs(w), out_zp=rq.out_zp, act_min=rq.act_min, act_max=rq.act_max))

    args = [op.inputs[0], Const("w", stream), Const("pad", pad), op.outputs[0]]
    return Kernel("depthwise_conv2d", args, func=depthwise, headers=(GEMM_MVE_HEADER, KERNEL_SPEC.header),
                  c_calls=(KERNEL_SPEC.name,))


def takes(data: OpData) -> bool:
    """At most MAX_TAPS taps (the kernel's table), multiplier 1 or at most MAX_GATHERED_CHANNELS input channels,
    and every channel shifts right (the fused requantization)."""
    g, rq = data.params.geometry, data.params.requant
    return ((g.out_c == g.in_c or g.in_c <= MAX_GATHERED_CHANNELS) and g.k_h * g.k_w <= MAX_TAPS
            and rq.rshift_table is not None)


def lower(data: OpData) -> Kernel:
    """The layer (conv.DepthwiseParams) as depthwise_mve_kernel computes it."""
    p = data.params
    return depthwise_mve_kernel(data.op, p.geometry, data.inputs[0].quant.zp, data.inputs[1].data, p.bias, p.requant)


KERNEL = KernelChoice("mve-c16", lower, takes)   # Helium, 16 channels a pass, the whole layer in one call
