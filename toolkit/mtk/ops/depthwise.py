"""DEPTHWISE_CONV_2D with depth multiplier 1 and channels in groups of 4, as TIR around a C micro-kernel.

Per output pixel and group of 4 channels, mtk_dw_4ch_s8 (c/mtk_dot_s8.h) sums the taps: one
4-byte load per tap, SXTB16 and SMLABB/SMLATT on DSP cores against weights prepared offline as
int16 in SXTB16 order, a 4-lane widening multiply on Helium cores, scalar elsewhere. Pixels whose window lies inside the image call it with
the full tap range (constants: the bounds checks fold away); border pixels pass the range of
taps inside, the others read the input zero point (cancelled by the folded bias, as in conv.py).
The requantization epilogue follows each group (requant.py).
"""

from __future__ import annotations

import numpy as np
from tvm.script import tirx as T

from ..graph import Op
from ..target import Cpu
from .base import Const, Kernel
from .gemm import DOT_HEADER, SXTB16_ORDER
from .requant import RSHIFT_FIELDS, Requant

LANES = 4


def supports(in_c: int, out_c: int) -> bool:
    return in_c == out_c and out_c % LANES == 0


def pack_weights(w: np.ndarray, helium: bool = False) -> np.ndarray:
    """w [1, kh, kw, C] → int16 [C/4][kh·kw][4]: each group of 4 channels in SXTB16 order (0, 2, 1, 3),
    or in order for Helium (MVE) cores, which widen 4 input bytes into a vector."""
    taps = w.reshape(-1, w.shape[-1] // LANES, LANES)[:, :, [0, 1, 2, 3] if helium else SXTB16_ORDER]
    return np.ascontiguousarray(taps.transpose(1, 0, 2)).astype(np.int16).reshape(-1)


def _inside_range(size: int, out: int, k: int, stride: int, dil: int, pad: int) -> tuple[int, int]:
    """Output positions [lo, hi) whose k taps all fall inside an input of `size`."""
    inside = [o for o in range(out) if o * stride - pad >= 0 and o * stride - pad + (k - 1) * dil < size]
    return (inside[0], inside[-1] + 1) if inside else (0, 0)


def depthwise_kernel(op: Op, g, in_zp: int, w: np.ndarray, bias: np.ndarray, rq: Requant, cpu: Cpu) -> Kernel:
    """`g` is the op's ConvGeometry (geometry.py); w its [1, kh, kw, C] weights."""
    C = g.out_c
    groups = C // LANES
    taps = g.k_h * g.k_w
    oy_lo, oy_hi = _inside_range(g.in_h, g.out_h, g.k_h, g.stride_h, g.dil_h, g.pad_top)
    ox_lo, ox_hi = _inside_range(g.in_w, g.out_w, g.k_w, g.stride_w, g.dil_w, g.pad_left)
    row_step, col_step = g.dil_h * g.in_w * C, g.dil_w * C
    i32 = "int32"

    def first_tap(o, stride: int, pad: int, dil: int):
        return T.max(0, (pad - o * stride + dil - 1) // dil)

    def end_tap(o, size: int, stride: int, pad: int, dil: int, k: int):
        return T.min(k, T.max(0, (size + pad - o * stride + dil - 1) // dil))

    def window_sum(x, wp, acc, oy, ox, q, tap_ranges):
        """The call summing the taps of channels 4q..4q+3 at (oy, ox); tap_ranges = (ky_lo, ky_hi, kx_lo, kx_hi)."""
        corner = ((oy * g.stride_h - g.pad_top) * g.in_w + ox * g.stride_w - g.pad_left) * C + q * LANES
        return T.call_extern(i32, "mtk_dw_4ch_s8", T.address_of(x[corner]), row_step, col_step,
                             T.address_of(wp[q * taps * LANES]), g.k_h, g.k_w, *tap_ranges, in_zp,
                             acc.access_ptr("rw"))

    @T.prim_func
    def depthwise(x: T.Buffer((g.in_h * g.in_w * C,), "int8"), wp: T.Buffer((taps * C,), "int16"),
                  bias: T.Buffer((C,), i32), table: T.Buffer((C * RSHIFT_FIELDS,), i32), mult: T.Buffer((C,), i32),
                  shift: T.Buffer((C,), i32), out: T.Buffer((g.out_h * g.out_w * C,), "int8")):
        acc = T.alloc_buffer((LANES,), i32)
        for oy in T.serial(g.out_h):
            for ox in T.serial(g.out_w):
                for q in T.serial(groups):
                    if oy >= oy_lo and oy < oy_hi and ox >= ox_lo and ox < ox_hi:
                        T.evaluate(window_sum(x, wp, acc, oy, ox, q, (0, g.k_h, 0, g.k_w)))
                    else:
                        T.evaluate(window_sum(x, wp, acc, oy, ox, q, (
                            first_tap(oy, g.stride_h, g.pad_top, g.dil_h),
                            end_tap(oy, g.in_h, g.stride_h, g.pad_top, g.dil_h, g.k_h),
                            first_tap(ox, g.stride_w, g.pad_left, g.dil_w),
                            end_tap(ox, g.in_w, g.stride_w, g.pad_left, g.dil_w, g.k_w))))
                    for j in T.unroll(LANES):
                        out[(oy * g.out_w + ox) * C + q * LANES + j] = rq.output(
                            acc[j] + bias[q * LANES + j], q * LANES + j, table, mult, shift)

    args = [op.inputs[0], Const("w", pack_weights(w, cpu.mve)), Const("bias", bias), *rq.consts(), op.outputs[0]]
    return Kernel("depthwise_conv2d", args, func=depthwise, headers=(DOT_HEADER,))
