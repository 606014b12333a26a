"""The GEMM on Helium (MVE) cores, requantization fused (c/mtk_gemm_mve.h): out[p, c] = requant(Σ_k a[p, k]·w[c, k] + bias[c]).

TIR walks the rows two at a time (the last alone when there is an odd one); a row is the input's own
(fully connected, 1×1 stride-1 unpadded conv) or an im2col row gathered into the scratch (mtk_im2col_s8).
One C call then computes both rows against every output channel, 4 channels at a time: VMLADAVA over 16
int8 values of a row and of 4 channels' weights (interleaved offline, pack_weights(w, 4, 16); a last tile of
1-3 channels only multiplies theirs, skipping the padding), then the
sums as vectors through TFLM's MultiplyByQuantizedMultiplier and stored 4 bytes at a time. When every
channel shifts right (requant.rshift_table) the params are bias, multiplier and shift per channel; otherwise
the "_lshift" kernels read the right and the left shift apart (one more vector shift per tile).
"""

from __future__ import annotations

import numpy as np
from tvm.script import tirx as T

from .base import Const, Kernel, OpData, Scratch
from .microkernels import DOT_HEADER, HELIUM_CHUNK, MicroKernel, pad_to_groups
from .requant import Requant

GEMM_MVE_HEADER = "gemm_mve"
IM2COL_HEADER = "im2col_s8"
TILE = 4          # output channels per vector
ONE_ROW = "mtk_gemm_mve_1x4_s8"


def requant_params(bias: np.ndarray, rq: Requant) -> np.ndarray:
    """int32 [channel tiles][bias, multiplier, shift][4]: what the kernel loads per tile, zero-padded; when a
    channel shifts left, [bias, multiplier, right shift (<= 0), left shift (>= 0)][4]."""
    multiplier, shift = rq.multiplier, rq.shift
    fields = [bias, multiplier, shift] if rq.rshift_table is not None else \
        [bias, multiplier, np.minimum(shift, 0), np.maximum(shift, 0)]
    params = pad_to_groups(np.stack(fields).astype(np.int32), TILE)
    return np.ascontiguousarray(params.reshape(len(fields), -1, TILE).transpose(1, 0, 2)).reshape(-1)


def kernel_name(name: str, rq: Requant) -> str:
    """The C function computing the fused GEMM `name` for the requantization `rq`."""
    return name if rq.rshift_table is not None else name.replace("_s8", "_lshift_s8")


def gemm_mve_kernel(data: OpData, mk: MicroKernel) -> Kernel:
    """The kernel computing the GEMM op `data` holds (gemm.GemmParams) with the fused Helium micro-kernel `mk`."""
    p = data.params
    op, y, w, rq, pt = data.op, data.output, p.weights, p.requant, p.patches
    C, K = w.shape
    P = y.size // C
    pairs, odd = P // 2, P % 2 == 1
    in_size = pt.in_h * pt.in_w * pt.in_c if pt else P * K
    packed = mk.pack(w, TILE, HELIUM_CHUNK)
    params = requant_params(p.bias, rq)
    two_rows, one_row = kernel_name(mk.name, rq), kernel_name(ONE_ROW, rq)
    i32 = "int32"

    # gathered rows end in zeros up to whole chunks (the weights' padding): no predicated last chunk
    row_bytes = -(-K // HELIUM_CHUNK) * HELIUM_CHUNK if pt else K

    def call(kernel: str, row_ptr, wp, qp, out, row):
        """The micro-kernel call for the row(s) at row_ptr, whose first output row is `row`."""
        return T.call_extern(i32, kernel, row_ptr, T.address_of(wp[0]), row_bytes, C, T.address_of(qp[0]), rq.out_zp,
                             rq.act_min, rq.act_max, T.address_of(out[row * C]))

    def gather(x, rows, row, slot):
        """im2col row `row` into the scratch's slot."""
        iy = (row // pt.out_w) * pt.stride_h - pt.pad_top
        ix = (row % pt.out_w) * pt.stride_w - pt.pad_left
        return T.call_extern(i32, "mtk_im2col_s8", T.address_of(x[0]), iy, ix, pt.in_h, pt.in_w, pt.in_c, 0, pt.in_c,
                             pt.k_h, pt.k_w, pt.dil_h, pt.dil_w, pt.in_zp, row_bytes - K,
                             T.address_of(rows[slot * row_bytes]))

    args = [op.inputs[0], Const("w", packed), Const("requant", params), op.outputs[0]]
    if pt is None:
        @T.prim_func
        def gemm_rows(x: T.Buffer((in_size,), "int8"), wp: T.Buffer((packed.size,), "int8"),
                      qp: T.Buffer((params.size,), i32), out: T.Buffer((P * C,), "int8")):
            for pb in T.serial(pairs):
                T.evaluate(call(two_rows, T.address_of(x[pb * 2 * K]), wp, qp, out, pb * 2))
            if odd:
                T.evaluate(call(one_row, T.address_of(x[(P - 1) * K]), wp, qp, out, P - 1))

        return Kernel(p.name, args, func=gemm_rows, headers=(GEMM_MVE_HEADER,), c_calls=(two_rows,))

    @T.prim_func
    def gemm_patches(x: T.Buffer((in_size,), "int8"), wp: T.Buffer((packed.size,), "int8"),
                     qp: T.Buffer((params.size,), i32), out: T.Buffer((P * C,), "int8"),
                     rows: T.Buffer((2 * row_bytes,), "int8")):
        for pb in T.serial(pairs):
            T.evaluate(gather(x, rows, pb * 2, 0))
            T.evaluate(gather(x, rows, pb * 2 + 1, 1))
            T.evaluate(call(two_rows, T.address_of(rows[0]), wp, qp, out, pb * 2))
        if odd:
            T.evaluate(gather(x, rows, P - 1, 0))
            T.evaluate(call(one_row, T.address_of(rows[0]), wp, qp, out, P - 1))

    return Kernel(p.name, [*args, Scratch(2 * row_bytes)], func=gemm_patches, headers=(GEMM_MVE_HEADER, DOT_HEADER, IM2COL_HEADER),
                  c_calls=(two_rows,))
