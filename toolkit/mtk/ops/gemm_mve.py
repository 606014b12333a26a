"""The GEMM on Helium (MVE) cores, requantization fused (c/mtk_gemm_mve.h): out[p, c] = requant(Σ_k a[p, k]·w[c, k] + bias[c]).

TIR walks the rows two at a time (the last alone when there is an odd one); a row is the input's own
(fully connected, 1×1 stride-1 unpadded conv) or an im2col row gathered into the scratch (mtk_im2col_s8).
One C call then computes both rows against every output channel, 4 channels at a time: VMLADAVA over 16
int8 values of a row and of 4 channels' weights (interleaved offline, pack_weights(w, 4, 16); a last tile of
1-3 channels only multiplies theirs, skipping the padding), then the
sums as vectors through TFLM's MultiplyByQuantizedMultiplier and stored 4 bytes at a time. When every
channel shifts right (requant.rshift_table) the params are bias, multiplier and shift per channel; otherwise
the "_lshift" kernels read the right and the left shift apart (one more vector shift per tile). A transpose
convolution's stride phase (transpose_conv_phases.py) writes its rows to its pixels of the output (Lattice), two rows
a call into output rows apart (the "_apart" kernels).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from tvm.script import tirx as T

from .base import Const, Kernel, OpData, Scratch, c_call
from ..kernels.signature import CFunction
from ..kernels.table import DOT_HEADER, GEMM_MVE_HEADER, IM2COL, IM2COL_HEADER, KernelSpec
from .microkernels import HELIUM_CHUNK, pad_to_groups
from .requant import Requant

TILE = 4          # output channels per vector


def requant_params(bias: np.ndarray, rq: Requant) -> np.ndarray:
    """int32 [channel tiles][bias, multiplier, shift][4]: what the kernel loads per tile, zero-padded; when a
    channel shifts left, [bias, multiplier, right shift (<= 0), left shift (>= 0)][4]."""
    multiplier, shift = rq.multiplier, rq.shift
    fields = [bias, multiplier, shift] if rq.rshift_table is not None else \
        [bias, multiplier, np.minimum(shift, 0), np.maximum(shift, 0)]
    params = pad_to_groups(np.stack(fields).astype(np.int32), TILE)
    return np.ascontiguousarray(params.reshape(len(fields), -1, TILE).transpose(1, 0, 2)).reshape(-1)


def kernel_functions(mk: KernelSpec, rq: Requant) -> tuple[CFunction, CFunction]:
    """The C functions of two rows and of one computing the fused GEMM for the requantization `rq`."""
    one_row, two_rows_lshift, one_row_lshift = mk.helpers[:3]
    return (mk.function, one_row) if rq.rshift_table is not None else (two_rows_lshift, one_row_lshift)


def apart_function(mk: KernelSpec, rq: Requant) -> CFunction:
    """The C function of two rows into output rows apart (Lattice) for the requantization `rq`."""
    return mk.helpers[3] if rq.rshift_table is not None else mk.helpers[4]


@dataclass(frozen=True)
class Lattice:
    """Output pixels (first_y + i·step_y, first_x + j·step_x), i < shape[0], j < shape[1], of an image `width` pixels
    wide, GEMM row i·shape[1] + j each: a transpose convolution's stride phase (transpose_conv_phases.py)."""

    first: tuple[int, int]
    step: tuple[int, int]
    shape: tuple[int, int]
    width: int

    def pixel(self, row):
        return ((self.first[0] + row // self.shape[1] * self.step[0]) * self.width
                + self.first[1] + row % self.shape[1] * self.step[1])


def gemm_mve_kernel(data: OpData, mk: KernelSpec, lattice: Lattice | None = None) -> Kernel:
    """The kernel computing the GEMM op `data` holds (gemm.GemmParams) with the fused Helium micro-kernel `mk`; with a
    `lattice` (im2col rows: patches), its rows go to the lattice's pixels of the output (the op a TRANSPOSE_CONV, its
    input the third)."""
    p = data.params
    op, y, w, rq, pt = data.op, data.output, p.weights, p.requant, p.patches
    C, K = w.shape
    P = y.size // C if lattice is None else lattice.shape[0] * lattice.shape[1]
    pairs, odd = P // 2, P % 2 == 1
    in_size = pt.in_h * pt.in_w * pt.in_c if pt else P * K
    packed = mk.pack(w, TILE, HELIUM_CHUNK)
    params = requant_params(p.bias, rq)
    two_rows, one_row = kernel_functions(mk, rq)
    apart = apart_function(mk, rq)
    i32 = "int32"

    def pixel(row):
        return row if lattice is None else lattice.pixel(row)

    # gathered rows end in zeros up to whole chunks (the weights' padding): no predicated last chunk
    row_bytes = -(-K // HELIUM_CHUNK) * HELIUM_CHUNK if pt else K

    def call(kernel: CFunction, row_ptr, wp, qp, out, row, **step):
        """The micro-kernel call for the row(s) at row_ptr, whose first output row is `row`."""
        return c_call(kernel, x=row_ptr, w=T.address_of(wp[0]), depth=row_bytes, channels=C,
                      params=T.address_of(qp[0]), out_zp=rq.out_zp, act_min=rq.act_min, act_max=rq.act_max,
                      out=T.address_of(out[pixel(row) * C]), **step)

    def call_pair(rows, wp, qp, out, row):
        """The call for rows `row` and `row` + 1 gathered into the scratch."""
        if lattice is None:
            return call(two_rows, T.address_of(rows[0]), wp, qp, out, row)
        return call(apart, T.address_of(rows[0]), wp, qp, out, row, out_step=(pixel(row + 1) - pixel(row)) * C)

    def gather(x, rows, row, slot):
        """im2col row `row` into the scratch's slot."""
        iy = (row // pt.out_w) * pt.stride_h - pt.pad_top
        ix = (row % pt.out_w) * pt.stride_w - pt.pad_left
        return c_call(IM2COL, x=T.address_of(x[0]), iy=iy, ix=ix, in_h=pt.in_h, in_w=pt.in_w, in_c=pt.in_c, c0=0,
                      cn=pt.in_c, kh=pt.k_h, kw=pt.k_w, dil_h=pt.dil_h, dil_w=pt.dil_w, pad=pt.in_zp,
                      tail=row_bytes - K, dst=T.address_of(rows[slot * row_bytes]))

    x_index = op.inputs[2] if op.type == "TRANSPOSE_CONV" else op.inputs[0]
    args = [x_index, Const("w", packed), Const("requant", params), op.outputs[0]]
    if pt is None:
        @T.prim_func
        def gemm_rows(x: T.Buffer((in_size,), "int8"), wp: T.Buffer((packed.size,), "int8"),
                      qp: T.Buffer((params.size,), i32), out: T.Buffer((P * C,), "int8")):
            for pb in T.serial(pairs):
                T.evaluate(call(two_rows, T.address_of(x[pb * 2 * K]), wp, qp, out, pb * 2))
            if odd:
                T.evaluate(call(one_row, T.address_of(x[(P - 1) * K]), wp, qp, out, P - 1))

        return Kernel(p.name, args, func=gemm_rows, headers=(GEMM_MVE_HEADER,), c_calls=(two_rows.name,))

    @T.prim_func
    def gemm_patches(x: T.Buffer((in_size,), "int8"), wp: T.Buffer((packed.size,), "int8"),
                     qp: T.Buffer((params.size,), i32), out: T.Buffer((y.size,), "int8"),
                     rows: T.Buffer((2 * row_bytes,), "int8")):
        for pb in T.serial(pairs):
            T.evaluate(gather(x, rows, pb * 2, 0))
            T.evaluate(gather(x, rows, pb * 2 + 1, 1))
            T.evaluate(call_pair(rows, wp, qp, out, pb * 2))
        if odd:
            T.evaluate(gather(x, rows, P - 1, 0))
            T.evaluate(call(one_row, T.address_of(rows[0]), wp, qp, out, P - 1))

    pair_kernel = two_rows if lattice is None else apart
    return Kernel(p.name, [*args, Scratch(2 * row_bytes)], func=gemm_patches,
                  headers=(GEMM_MVE_HEADER, DOT_HEADER, IM2COL_HEADER), c_calls=(pair_kernel.name,))
