"""3x3 stride-1 CONV_2D on DSP cores (Cortex-M4, M7, M33) as exact integer Winograd F(2x2, 3x3) or F(4x4, 3x3): the
layer in one C call (c/dsp/mtk_winograd_s8_dsp.h, mtk_winograd4_s8_dsp.h), 16 int16 products per 2x2 output tile
and input channel instead of 36, or 36 per 4x4 tile instead of 144. The weights' transform U = G' g G'^T (G' a
scaled G, integer) is computed here, laid out as the kernel reads it; the output transform gives `scale` times the
GEMM's sums, exactly, when scale · 128 · Σ|w| of every channel stays below 2^31 (`exact`). It takes a layer the
fused GEMM's requantization computes exactly (every channel shifts right); the GEMM serves the others. F(4x4) does
the fewer products and is the default where its sums stay exact; F(2x2) the others."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from tvm.script import tirx as T

from ..kernels.table import WINOGRAD, WINOGRAD4, Family, KernelSpec, spec
from ..target import Isa
from .base import Const, Kernel, OpData, Scratch, c_call
from .gemm import GemmParams, stream_params
from .variants import Variant

COLS = 3      # output channels per block (MTK_WINO_COLS)
TILES = 2     # tiles sharing the V scratch (MTK_WINO_TILES)
INT32_LIMIT = 1 << 31
# Input channels from which it is the default: the GEMM's work per output grows by 9 products a channel, its by 4
# plus its transforms' fixed share, which the fused GEMM's leaner loop amortizes below about a dozen channels
MIN_CHANNELS = 16


@dataclass(frozen=True, eq=False)   # one object per transform: compared by identity
class Transform:
    """One Winograd F(tile x tile, 3x3): its kernel, G' (the integer rows of G scaled) and Y / Σ w·x."""

    kernel: KernelSpec
    g: np.ndarray
    scale: int

    @property
    def variant(self) -> Variant:
        return Variant(self.kernel.id)

    @property
    def positions(self) -> int:
        """The transformed tile's positions ξ."""
        return self.g.shape[0] ** 2

    @property
    def tile_rows(self) -> int:
        """Output rows of a tile (2 for F(2x2, 3x3), 4 for F(4x4, 3x3))."""
        return self.g.shape[0] - 2


F2 = Transform(spec(Family.WINOGRAD, WINOGRAD), np.array([[2, 0, 0], [1, 1, 1], [1, -1, 1], [0, 0, 2]]), 4)
F4 = Transform(spec(Family.WINOGRAD, WINOGRAD4),
               np.array([[1, 0, 0], [-1, -1, -1], [-1, 1, -1], [1, 2, 4], [1, -2, 4], [0, 0, 1]]), 576)
TRANSFORMS = (F4, F2)   # the default first
BY_VARIANT = {t.variant: t for t in TRANSFORMS}


def transforms(data: OpData) -> list[Transform]:
    """The transforms that take the layer, the default first: a DSP core's 3x3 stride-1 undilated conv over padded
    windows (GemmParams.patches) whose output is not constant and that a fused stream computes exactly
    (gemm.stream_params: every channel shifts right, 2 · (Σ + bias) and the rounding stay within int32), the
    transform's sums too (`exact`)."""
    p = data.params
    if data.cpu.isa is not Isa.DSP or not isinstance(p, GemmParams) or p.patches is None:
        return []
    g = p.patches
    window = (g.k_h, g.k_w, g.stride_h, g.stride_w, g.dil_h, g.dil_w) == (3, 3, 1, 1, 1, 1)
    if not window or p.requant.constant_output is not None:
        return []
    stream = stream_params(p)
    return [] if stream is None else [t for t in TRANSFORMS if exact(stream[0], t.scale)]


def exact(weights: np.ndarray, scale: int) -> bool:
    """Whether scale · Σ w·x of every channel (weights [channels, depth], |x| <= 128) stays within int32."""
    return bool(np.all(scale * 128 * np.abs(weights.astype(np.int64)).sum(axis=1) < INT32_LIMIT))


def transformed(w: np.ndarray, t: Transform) -> np.ndarray:
    """U = G' g G'^T of weights [out_c, 3, 3, in_c]: int64 [out_c, positions (ξ = n·a + b), in_c]."""
    u = np.einsum("ak,ckli,bl->cabi", t.g, w.astype(np.int64), t.g)
    return u.reshape(w.shape[0], t.positions, w.shape[3])


def pairs(in_c: int) -> int:
    """int16 lane pairs per tile position: two per group of 4 input channels, in whole fours (the kernel's loop)."""
    return 4 * -(-in_c // 8)


def pack(w: np.ndarray, t: Transform) -> np.ndarray:
    """The kernel's weights, int16 [block][ξ][pair][channel][lane] (pair 2g: input channels 4g, 4g + 2; pair
    2g + 1: 4g + 1, 4g + 3), from weights [out_c, 3, 3, in_c]; past the channels zero."""
    out_c, in_c = w.shape[0], w.shape[3]
    n_pairs = pairs(in_c)
    blocks = -(-out_c // COLS)
    u = np.zeros((blocks * COLS, t.positions, 2 * n_pairs), np.int64)
    u[:out_c, :, :in_c] = transformed(w, t)
    order = [4 * (p // 2) + p % 2 + 2 * lane for p in range(n_pairs) for lane in range(2)]
    u = u[:, :, order].reshape(blocks, COLS, t.positions, n_pairs, 2).transpose(0, 2, 3, 1, 4)
    return np.ascontiguousarray(u).astype(np.int16).reshape(-1)


def channel_params(bias: np.ndarray, multiplier: np.ndarray, shift: np.ndarray, out_zp: int) -> np.ndarray:
    """int32 [blocks · COLS][4]: per output channel 2 · bias (−in_zp·Σw folded in), the multiplier, the rounding
    term k = 2^(e−1) + out_zp · 2^e and the right shift e (mtk_wino_requantize); past the channels zero."""
    e = np.where(multiplier == 0, 1, -shift.astype(np.int64))
    k = (np.int64(1) << (e - 1)) + out_zp * (np.int64(1) << e)
    q = np.zeros((-(-bias.size // COLS) * COLS, 4), np.int64)
    q[:bias.size] = np.stack([2 * bias.astype(np.int64), multiplier, k, e], axis=1)
    return q.astype(np.int32).reshape(-1)


def scratch_bytes(in_c: int, t: Transform) -> int:
    """V of TILES tiles ([ξ][pair][tile] words), then a block's sums ([ξ][tile][channel] int32)."""
    return t.positions * (pairs(in_c) * TILES + TILES * COLS) * 4


def weight_bytes(data: OpData, variant: Variant) -> int:
    """Flash of the transformed weights and the per-channel parameters."""
    g, t = data.params.patches, BY_VARIANT[variant]
    return -(-g.out_c // COLS) * COLS * (t.positions * pairs(g.in_c) * 2 * 2 + 4 * 4)


def lower(data: OpData, variant: Variant) -> Kernel:
    """The layer (GemmParams over patches, `transforms`) as the variant's kernel computes it."""
    p: GemmParams = data.params
    g, rq, t = p.patches, p.requant, BY_VARIANT[variant]
    weights, bias, multiplier, shift = stream_params(p)   # (dead channels as zero weights and a constant's bias)
    u, q = pack(weights.reshape(g.out_c, 3, 3, g.in_c), t), channel_params(bias, multiplier, shift, rq.out_zp)
    pad = np.full(4 * -(-g.in_c // 4), g.in_zp, np.int8)
    scratch = scratch_bytes(g.in_c, t)

    @T.prim_func
    def winograd(x: T.Buffer((g.in_h * g.in_w * g.in_c,), "int8"), weights: T.Buffer((u.size,), "int16"),
                 params: T.Buffer((q.size,), "int32"), pad_pixel: T.Buffer((pad.size,), "int8"),
                 out: T.Buffer((g.out_h * g.out_w * g.out_c,), "int8"), v: T.Buffer((scratch,), "int8")):
        T.evaluate(c_call(t.kernel.function, x=T.address_of(x[0]), u=T.address_of(weights[0]),
                          q=T.address_of(params[0]), pad=T.address_of(pad_pixel[0]), out=T.address_of(out[0]),
                          scratch=T.address_of(v[0]), in_h=g.in_h, in_w=g.in_w, in_c=g.in_c, out_h=g.out_h,
                          out_w=g.out_w, out_c=g.out_c, pad_top=g.pad_top, pad_left=g.pad_left, act_min=rq.act_min,
                          act_max=rq.act_max))

    args = [data.op.inputs[0], Const("u", u), Const("params", q), Const("pad", pad), data.op.outputs[0],
            Scratch(scratch)]
    return Kernel(p.name, args, func=winograd, headers=(t.kernel.header,), c_calls=(t.kernel.name,))
