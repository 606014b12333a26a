"""DEPTHWISE_CONV_2D with depth multiplier 1 on Helium (MVE) cores: one C call for the whole layer
(c/mtk_depthwise_mve.h), 16 channels a pass (the rest 8 at a time), requantization fused (every channel shifts right:
requant.rshift_table). Other depthwise layers take depthwise.py's path."""

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
LANES = 8           # channels per group: one int16 vector
HALF = LANES // 2   # int32 lanes: the group's even channels, then its odd ones


def pack_weights(w: np.ndarray) -> np.ndarray:
    """w [1, kh, kw, C] → int16: the whole groups of 16 channels [C // 16][kh·kw][16], then the rest in groups
    of 8 [ceil(C % 16 / 8)][kh·kw][8], zero-padded."""
    channels = w.shape[-1]
    padded = pad_to_groups(w.reshape(-1, channels).astype(np.int16), LANES)
    wide = channels // (2 * LANES) * 2 * LANES

    def by_group(part: np.ndarray, lanes: int) -> np.ndarray:
        return part.reshape(part.shape[0], -1, lanes).transpose(1, 0, 2).reshape(-1)
    return np.concatenate([by_group(padded[:, :wide], 2 * LANES), by_group(padded[:, wide:], LANES)])


def requant_params(bias: np.ndarray, multiplier: np.ndarray, shift: np.ndarray) -> np.ndarray:
    """int32 [groups][bias, multiplier, shift][even channels, odd channels] (4 each), zero-padded."""
    params = pad_to_groups(np.stack([bias, multiplier, shift]).astype(np.int32), LANES)
    by_lane = params.reshape(3, -1, HALF, 2)          # [field][group][pair][even/odd]
    return np.ascontiguousarray(by_lane.transpose(1, 0, 3, 2)).reshape(-1)


def depthwise_mve_kernel(op: Op, g, in_zp: int, w: np.ndarray, bias: np.ndarray, rq: Requant) -> Kernel:
    """`g` is the op's ConvGeometry (geometry.py), w its [1, kh, kw, C] weights; multiplier 1."""
    C = g.out_c
    packed = pack_weights(w)
    params = requant_params(bias, rq.multiplier, rq.shift)
    pad = np.full(C, in_zp, np.int8)
    i32 = "int32"

    @T.prim_func
    def depthwise(x: T.Buffer((g.in_h * g.in_w * C,), "int8"), wp: T.Buffer((packed.size,), "int16"),
                  qp: T.Buffer((params.size,), i32), pad_row: T.Buffer((C,), "int8"),
                  out: T.Buffer((g.out_h * g.out_w * C,), "int8")):
        T.evaluate(T.call_extern(i32, "mtk_depthwise_mve_s8", T.address_of(x[0]), T.address_of(wp[0]),
                                 T.address_of(qp[0]), T.address_of(pad_row[0]), T.address_of(out[0]),
                                 g.in_h, g.in_w, C, g.out_h, g.out_w, g.k_h, g.k_w, g.stride_h, g.stride_w,
                                 g.dil_h, g.dil_w, g.pad_top, g.pad_left, rq.out_zp, rq.act_min, rq.act_max))

    args = [op.inputs[0], Const("w", packed), Const("requant", params), Const("pad", pad), op.outputs[0]]
    return Kernel("depthwise_conv2d", args, func=depthwise, headers=(GEMM_MVE_HEADER, DEPTHWISE_MVE_HEADER),
                  c_calls=("mtk_depthwise_mve_s8",))


def takes(data: OpData) -> bool:
    """Multiplier 1, and every channel shifts right (the fused requantization)."""
    p = data.params
    return p.geometry.out_c == p.geometry.in_c and p.requant.rshift_table is not None


def lower(data: OpData) -> Kernel:
    """The layer (conv.DepthwiseParams) as depthwise_mve_kernel computes it."""
    p = data.params
    return depthwise_mve_kernel(data.op, p.geometry, data.inputs[0].quant.zp, data.inputs[1].data, p.bias, p.requant)


KERNEL = KernelChoice("mve-c16", lower, takes)   # Helium, 16 channels a pass, the whole layer in one call
