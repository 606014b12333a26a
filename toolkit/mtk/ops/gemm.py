"""The int8 GEMM behind CONV_2D and FULLY_CONNECTED, as TIR: out[p, c] = requant(Σ_k a[p, k]·w[c, k] + bias[c]).

Rows `a` are either the input itself (fully connected, 1×1 stride-1 unpadded conv) or
im2col patches gathered two output pixels at a time into a small arena scratch buffer
(padding written as the input zero point, which the folded bias cancels). The
k-reduction of each 2×2 (pixels × channels) or 1×4 block is an extern call to a C
micro-kernel (c/mtk_dot_s8.h: SMLAD/SXTB16 on DSP cores, scalar elsewhere); TVM generates
the loops, the patch gathering and the requantization epilogue around it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import tvm
from tvm.script import tirx as T

from ..graph import Op, Tensor
from .base import Const, Kernel, Scratch, constant_kernel
from .fixedpoint import clamp, multiply_by_quantized_multiplier

DOT_HEADER = "mtk_dot_s8.h"


@dataclass(frozen=True)
class Patches:
    """How an output pixel's im2col row is gathered from an NHWC input."""

    in_h: int
    in_w: int
    in_c: int
    out_h: int
    out_w: int
    k_h: int
    k_w: int
    stride_h: int
    stride_w: int
    dil_h: int
    dil_w: int
    pad_top: int
    pad_left: int
    in_zp: int


@dataclass(frozen=True)
class Requant:
    multiplier: np.ndarray   # int32 [cols]
    shift: np.ndarray        # int32 [cols]
    out_zp: int
    act_min: int
    act_max: int

    @property
    def per_tensor(self) -> bool:
        return bool(np.all(self.multiplier == self.multiplier[0]) and np.all(self.shift == self.shift[0]))

    @property
    def constant_output(self) -> int | None:
        """The one value every output takes when the activation range or the multipliers leave no other."""
        if self.act_min == self.act_max:
            return self.act_min
        if not np.any(self.multiplier):
            return min(max(self.out_zp, self.act_min), self.act_max)
        return None


def _epilogue(rq: Requant):
    """acc + bias → int8, with per-tensor parameters folded in as immediates."""
    def output(acc, c, mult, shift):
        if rq.per_tensor:
            scaled = multiply_by_quantized_multiplier(acc, int(rq.multiplier[0]), int(rq.shift[0]))
        else:
            scaled = multiply_by_quantized_multiplier(acc, mult[c], shift[c])
        return clamp(scaled + tvm.tirx.const(rq.out_zp, "int32"), rq.act_min, rq.act_max).astype("int8")
    return output


def gemm_kernel(name: str, op: Op, y: Tensor, rows: int, depth: int, bias: np.ndarray, rq: Requant,
                patches: Patches | None) -> Kernel:
    """The kernel computing `op` (inputs x, w): the TIR GEMM, or a fill when the output is constant."""
    if rq.constant_output is not None:
        return constant_kernel(op, y, rq.constant_output)
    in_size = patches.in_h * patches.in_w * patches.in_c if patches else rows * depth
    func = gemm_func(rows, len(bias), depth, in_size, rq, patches)
    args = [op.inputs[0], op.inputs[1], Const("bias", bias), Const("mult", rq.multiplier), Const("shift", rq.shift),
            op.outputs[0], Scratch(2 * depth if patches else 0)]
    return Kernel(name, args, func=func, headers=(DOT_HEADER,))


def gemm_func(rows: int, cols: int, depth: int, in_size: int, rq: Requant, patches: Patches | None):
    """The PrimFunc with parameters (x, w, bias, mult, shift, out, col). `col` is 2·depth bytes of scratch
    for the im2col rows (unused without patches); mult/shift are unused when requantization is per tensor:
    the compiler drops parameters a kernel never reads."""
    P, C, K = rows, cols, depth
    g = patches
    gathered = g is not None
    quad = P == 1
    out_of = _epilogue(rq)
    i32 = "int32"

    def in_y(p, ky):
        return (p // g.out_w) * g.stride_h + ky * g.dil_h - g.pad_top

    def in_x(p, kx):
        return (p % g.out_w) * g.stride_w + kx * g.dil_w - g.pad_left

    def in_image(p, ky, kx):
        return tvm.tirx.all(in_y(p, ky) >= 0, in_y(p, ky) < g.in_h, in_x(p, kx) >= 0, in_x(p, kx) < g.in_w)

    def source_pixel(p, ky, kx):
        return in_y(p, ky) * g.in_w + in_x(p, kx)

    @T.prim_func
    def gemm(x: T.Buffer((in_size,), "int8"), w: T.Buffer((C * K,), "int8"), bias: T.Buffer((C,), i32),
             mult: T.Buffer((C,), i32), shift: T.Buffer((C,), i32), out: T.Buffer((P * C,), "int8"),
             col: T.Buffer((2 * K,), "int8")):
        acc = T.alloc_buffer((4,), i32)
        for pb in T.serial((P + 1) // 2):
            if gathered:
                for slot in T.serial(2):
                    for ky in T.serial(g.k_h):
                        for kx in T.serial(g.k_w):
                            if in_image(T.min(pb * 2 + slot, P - 1), ky, kx):
                                for c in T.serial(g.in_c):
                                    col[slot * K + (ky * g.k_w + kx) * g.in_c + c] = x[
                                        source_pixel(T.min(pb * 2 + slot, P - 1), ky, kx) * g.in_c + c]
                            else:
                                for c in T.serial(g.in_c):
                                    col[slot * K + (ky * g.k_w + kx) * g.in_c + c] = T.int8(g.in_zp)
            if quad:
                for cq in T.serial((C + 3) // 4):
                    if gathered:
                        T.evaluate(T.call_extern(i32, "mtk_dot_1x4_s8", T.address_of(col[0]),
                                                 T.address_of(w[T.min(cq * 4, C - 1) * K]),
                                                 T.address_of(w[T.min(cq * 4 + 1, C - 1) * K]),
                                                 T.address_of(w[T.min(cq * 4 + 2, C - 1) * K]),
                                                 T.address_of(w[T.min(cq * 4 + 3, C - 1) * K]), K, acc.access_ptr("rw")))
                    else:
                        T.evaluate(T.call_extern(i32, "mtk_dot_1x4_s8", T.address_of(x[0]),
                                                 T.address_of(w[T.min(cq * 4, C - 1) * K]),
                                                 T.address_of(w[T.min(cq * 4 + 1, C - 1) * K]),
                                                 T.address_of(w[T.min(cq * 4 + 2, C - 1) * K]),
                                                 T.address_of(w[T.min(cq * 4 + 3, C - 1) * K]), K, acc.access_ptr("rw")))
                    for j in T.serial(4):
                        if cq * 4 + j < C:
                            out[cq * 4 + j] = out_of(acc[j] + bias[cq * 4 + j], cq * 4 + j, mult, shift)
            else:
                for cp in T.serial((C + 1) // 2):
                    if gathered:
                        T.evaluate(T.call_extern(i32, "mtk_dot_2x2_s8", T.address_of(col[0]), T.address_of(col[K]),
                                                 T.address_of(w[cp * 2 * K]), T.address_of(w[T.min(cp * 2 + 1, C - 1) * K]),
                                                 K, acc.access_ptr("rw")))
                    else:
                        T.evaluate(T.call_extern(i32, "mtk_dot_2x2_s8", T.address_of(x[pb * 2 * K]),
                                                 T.address_of(x[T.min(pb * 2 + 1, P - 1) * K]),
                                                 T.address_of(w[cp * 2 * K]), T.address_of(w[T.min(cp * 2 + 1, C - 1) * K]),
                                                 K, acc.access_ptr("rw")))
                    for i in T.serial(2):
                        for j in T.serial(2):
                            if pb * 2 + i < P and cp * 2 + j < C:
                                out[(pb * 2 + i) * C + cp * 2 + j] = out_of(acc[i * 2 + j] + bias[cp * 2 + j],
                                                                              cp * 2 + j, mult, shift)

    return gemm
