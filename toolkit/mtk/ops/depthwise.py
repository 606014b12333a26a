"""DEPTHWISE_CONV_2D with more than one input channel, as TIR around C micro-kernels (on DSP cores the default is
depthwise_dsp.py's where it takes the layer: conv.DEPTHWISE_KERNELS).

Per output pixel and group of 4 output channels, mtk_dw_s8 (c/mtk_depthwise_s8.h) sums the taps. With
depth multiplier 1 the group's inputs are 4 consecutive channels: one 4-byte load per tap, SXTB16 and
SMLABB/SMLATT on DSP cores against weights prepared offline as int16 in SXTB16 order, a 4-lane widening
multiply on Helium cores, scalar elsewhere. Other groups (a multiplier above 1, where output channel c
reads input channel c / multiplier, and the last group of a channel count that is not a multiple of 4)
load each lane's byte on its own, weights int16 in lane order; they run in a loop of their own, so
that the consecutive groups' lane offsets are constants. On the Cortex-M3 an even multiplier's groups, whose
lanes read their inputs in pairs, take mtk_dw_pairs_s8: one SMLAL a pair of lanes (weights packed w0 + w1·2^23).
(One input channel: a convolution, conv.py; few channels on DSP cores dsp-3x3.) Pixels whose window lies inside
the image call the kernel with the full tap range (constants: the bounds checks fold away); border pixels pass the
range of taps inside, the others read the input zero point (cancelled by the folded bias, as in conv.py). The
requantization epilogue follows each group (requant.py).
"""

from __future__ import annotations

import numpy as np
from tvm.script import tirx as T

from ..graph import Op
from ..kernels.table import DOT_HEADER, Family, spec
from ..target import Cpu, Isa
from .base import Const, Kernel, OpData, c_call, jit, specialize
from .microkernels import SXTB16_ORDER, pad_to_groups
from .requant import RSHIFT_FIELDS, Requant
from .variants import KernelChoice

KERNEL_SPEC = spec(Family.DEPTHWISE, "c4")
DW_PAIRS, DW2, DW_REQUANT_MVE = KERNEL_SPEC.helpers
LANES = 4
PAIR_TAPS = 255   # mtk_depthwise_s8.h MTK_DW_PAIR_TAPS


def consecutive_groups(channels: int, multiplier: int) -> int:
    """The groups of 4 output channels that read 4 consecutive input channels (weights in SXTB16 order): the first."""
    return channels // LANES if multiplier == 1 else 0


def pack_weights(w: np.ndarray, multiplier: int, helium: bool = False, paired: bool = False) -> np.ndarray:
    """w [1, kh, kw, C] → int16 [ceil(C/4)][kh·kw][4], zero-padded to whole groups: the consecutive groups
    in SXTB16 order (0, 2, 1, 3) unless on Helium (MVE) cores, which widen 4 input bytes into a vector;
    the others in order. `paired` (mtk_dw_pairs_s8): each tap's lanes as two int32 w0 + w1·2^23, w2 + w3·2^23
    (little-endian halves)."""
    channels = w.shape[-1]
    groups = -(-channels // LANES)
    taps = pad_to_groups(w.reshape(-1, channels).astype(np.int16), LANES).reshape(-1, groups, LANES)
    sxtb16 = slice(0, 0 if helium else consecutive_groups(channels, multiplier))
    taps[:, sxtb16] = taps[:, sxtb16][:, :, SXTB16_ORDER]
    if paired:
        wide = taps.astype(np.int64)
        taps = (wide[:, :, 0::2] + wide[:, :, 1::2] * 2**23).astype("<i4").view("<i2")
    return np.ascontiguousarray(taps.transpose(1, 0, 2)).reshape(-1)


def paired_lanes(cpu: Cpu, multiplier: int, taps: int) -> bool:
    """Whether the Cortex-M3 sums a layer's groups by pairs of lanes (mtk_dw_pairs_s8): an even multiplier (each
    pair reads one input byte) and few enough taps for a pair's low sum."""
    return cpu.isa is Isa.M3 and multiplier % 2 == 0 and taps <= PAIR_TAPS


def _inside_range(size: int, out: int, k: int, stride: int, dil: int, pad: int) -> tuple[int, int]:
    """Output positions [lo, hi) whose k taps all fall inside an input of `size`."""
    inside = [o for o in range(out) if o * stride - pad >= 0 and o * stride - pad + (k - 1) * dil < size]
    return (inside[0], inside[-1] + 1) if inside else (0, 0)


def depthwise_kernel(op: Op, g, in_zp: int, w: np.ndarray, bias: np.ndarray, rq: Requant, cpu: Cpu) -> Kernel:
    """`g` is the op's ConvGeometry (geometry.py); w its [1, kh, kw, C] weights."""
    C, M = g.out_c, g.out_c // g.in_c
    groups, consecutive = -(-C // LANES), consecutive_groups(C, M)
    taps = g.k_h * g.k_w
    oy_lo, oy_hi = _inside_range(g.in_h, g.out_h, g.k_h, g.stride_h, g.dil_h, g.pad_top)
    ox_lo, ox_hi = _inside_range(g.in_w, g.out_w, g.k_w, g.stride_w, g.dil_w, g.pad_left)
    row_step, col_step = g.dil_h * g.in_w * g.in_c, g.dil_w * g.in_c
    i32 = "int32"
    padded = groups * LANES
    # Helium: a group's requantization as 4-lane vectors (mtk_dw_requant_mve_s8) when every channel shifts right
    vector_requant = cpu.mve and rq.rshift_table is not None
    # Cortex-M3: pairs of inside rows, the consecutive groups of both in one call (mtk_dw2_s8)
    row_pairs = (oy_hi - oy_lo) // 2 if consecutive and cpu.isa is Isa.M3 else 0
    paired = paired_lanes(cpu, M, taps)

    def first_tap(o, stride: int, pad: int, dil: int):
        return T.max(0, (pad - o * stride + dil - 1) // dil)

    def end_tap(o, size: int, stride: int, pad: int, dil: int, k: int):
        return T.min(k, T.max(0, (size + pad - o * stride + dil - 1) // dil))

    def lane_offset(q, j: int):
        """Input channel of output channel 4q+j minus that of 4q (0 past the last channel)."""
        c = q * LANES + j
        return T.if_then_else(c < C, c // M - q * LANES // M, 0) if C % LANES else c // M - q * LANES // M

    def window_sum(x, wp, acc, oy, ox, q, consecutive_inputs: bool, tap_ranges):
        """The call summing the taps of channels 4q..4q+3 at (oy, ox); tap_ranges = (ky_lo, ky_hi, kx_lo, kx_hi)."""
        corner = ((oy * g.stride_h - g.pad_top) * g.in_w + ox * g.stride_w - g.pad_left) * g.in_c + q * LANES // M
        common = dict(zip(("ky_lo", "ky_hi", "kx_lo", "kx_hi"), tap_ranges), x=T.address_of(x[corner]),
                      row_step=row_step, col_step=col_step, w=T.address_of(wp[q * taps * LANES]), kh=g.k_h, kw=g.k_w,
                      pad=in_zp, acc=acc.access_ptr("rw"))
        if paired:
            return c_call(DW_PAIRS, **common, off2=lane_offset(q, 2))
        offsets = range(1, LANES) if consecutive_inputs else [lane_offset(q, j) for j in range(1, LANES)]
        return c_call(KERNEL_SPEC.function, **common, **{f"off{j}": off for j, off in enumerate(offsets, 1)})

    def vector_outputs(acc, bias, mult, shift, out, oy, ox, q):
        """The call requantizing and storing the group's outputs (vector_requant)."""
        real = T.min(C - q * LANES, LANES) if C % LANES else LANES
        return c_call(DW_REQUANT_MVE, acc=acc.access_ptr("r"), bias=T.address_of(bias[q * LANES]),
                      mult=T.address_of(mult[q * LANES]), shift=T.address_of(shift[q * LANES]), out_zp=rq.out_zp,
                      act_min=rq.act_min, act_max=rq.act_max, n=real,
                      out=T.address_of(out[(oy * g.out_w + ox) * C + q * LANES]))

    def in_output(q, j: int):
        return q * LANES + j < C if C % LANES else True

    @T.macro
    def group(x, wp, acc, out, bias, table, mult, shift, oy, ox, q, consecutive_inputs: bool):
        if oy >= oy_lo and oy < oy_hi and ox >= ox_lo and ox < ox_hi:
            T.evaluate(window_sum(x, wp, acc, oy, ox, q, consecutive_inputs, (0, g.k_h, 0, g.k_w)))
        else:
            T.evaluate(window_sum(x, wp, acc, oy, ox, q, consecutive_inputs, (
                first_tap(oy, g.stride_h, g.pad_top, g.dil_h),
                end_tap(oy, g.in_h, g.stride_h, g.pad_top, g.dil_h, g.k_h),
                first_tap(ox, g.stride_w, g.pad_left, g.dil_w),
                end_tap(ox, g.in_w, g.stride_w, g.pad_left, g.dil_w, g.k_w))))
        if vector_requant:
            T.evaluate(vector_outputs(acc, bias, mult, shift, out, oy, ox, q))
        else:
            for j in T.unroll(LANES):
                if in_output(q, j):
                    out[(oy * g.out_w + ox) * C + q * LANES + j] = rq.output(
                        acc[j] + bias[q * LANES + j], q * LANES + j, table, mult, shift)

    def pair_sum(x, wp, acc, oy, ox, q):
        """The call summing the consecutive group q at (oy, ox) and (oy + 1, ox), both windows inside."""
        corner = ((oy * g.stride_h - g.pad_top) * g.in_w + ox * g.stride_w - g.pad_left) * g.in_c + q * LANES
        return c_call(DW2, x=T.address_of(x[corner]), row_step=row_step, col_step=col_step,
                      pair_step=g.stride_h * g.in_w * g.in_c, w=T.address_of(wp[q * taps * LANES]), kh=g.k_h, kw=g.k_w,
                      acc=acc.access_ptr("w"))

    @T.macro
    def pixel(x, wp, acc, out, bias, table, mult, shift, oy, ox):
        if consecutive > 0:
            for q in T.serial(consecutive):
                group(x, wp, acc, out, bias, table, mult, shift, oy, ox, q, True)
        if consecutive < groups:
            for q in T.serial(consecutive, groups):
                group(x, wp, acc, out, bias, table, mult, shift, oy, ox, q, False)

    @jit
    def depthwise(x: T.Buffer((g.in_h * g.in_w * g.in_c,), "int8"), wp: T.Buffer((taps * groups * LANES,), "int16"),
                  bias: T.Buffer((padded,), i32), table: T.Optional(T.Buffer((C * RSHIFT_FIELDS,), i32)),
                  mult: T.Optional(T.Buffer((padded,), i32)), shift: T.Optional(T.Buffer((padded,), i32)),
                  out: T.Buffer((g.out_h * g.out_w * C,), "int8")):
        acc = T.alloc_buffer((LANES * (1 + (row_pairs > 0)),), i32)
        for oy in T.serial(g.out_h):
            if row_pairs == 0 or oy < oy_lo or oy >= oy_lo + 2 * row_pairs:
                for ox in T.serial(g.out_w):
                    pixel(x, wp, acc, out, bias, table, mult, shift, oy, ox)
        for r in T.serial(row_pairs):   # inside rows two at a time: their consecutive groups' weights loaded once
            for ox in T.serial(g.out_w):
                if ox >= ox_lo and ox < ox_hi:
                    for q in T.serial(consecutive):
                        T.evaluate(pair_sum(x, wp, acc, oy_lo + 2 * r, ox, q))
                        for i in T.unroll(2):
                            for j in T.unroll(LANES):
                                out[((oy_lo + 2 * r + i) * g.out_w + ox) * C + q * LANES + j] = rq.output(
                                    acc[i * LANES + j] + bias[q * LANES + j], q * LANES + j, table, mult, shift)
                    if consecutive < groups:
                        for i in T.unroll(2):
                            for q in T.serial(consecutive, groups):
                                group(x, wp, acc, out, bias, table, mult, shift, oy_lo + 2 * r + i, ox, q, False)
                else:
                    for i in T.unroll(2):
                        pixel(x, wp, acc, out, bias, table, mult, shift, oy_lo + 2 * r + i, ox)

    # mtk_dw_requant_mve_s8 loads whole groups of multipliers and shifts
    requant = ({"mult": Const("mult", rq.multiplier), "shift": Const("shift", rq.shift)} if vector_requant
               else rq.consts())
    requant = {k: c if k == "table" else Const(c.name, pad_to_groups(c.data, LANES)) for k, c in requant.items()}
    args = [op.inputs[0], Const("w", pack_weights(w, M, cpu.mve, paired)), Const("bias", pad_to_groups(bias, LANES)),
            *requant.values(), op.outputs[0]]
    called = [DW_PAIRS if paired else KERNEL_SPEC.function] + [DW_REQUANT_MVE] * vector_requant + [DW2] * (row_pairs > 0)
    c_calls = tuple(f.name for f in called)
    return Kernel("depthwise_conv2d", args, func=specialize(depthwise, requant), headers=(DOT_HEADER, KERNEL_SPEC.header),
                  c_calls=c_calls)


def lower(data: OpData) -> Kernel:
    """The layer (conv.DepthwiseParams) as depthwise_kernel computes it."""
    p = data.params
    return depthwise_kernel(data.op, p.geometry, data.inputs[0].quant.zp, data.inputs[1].data, p.bias, p.requant,
                            data.cpu)


KERNEL = KernelChoice("c4", lower)   # 4 channels a call, every instruction set
