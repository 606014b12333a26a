"""int8 TRANSPOSE_CONV with few output channels, scattered as TFLM's reference does, one output row at a time.

Output row oy takes the filter rows fy ≡ oy + pad_h (mod stride_h) from input row (oy + pad_h − fy) / stride_h
(a gather along the height). Along the width each such input row scatters: its pixels' values less the input zero
point (int16, mtk_im2col_s8_s16) times the weights of filter row fy, every (fx, c) of it one GEMM column, go into
an int32 row of sums at column ix·stride_w + fx (the row reaches from −pad_w to the last tap), 2 pixels × 2 columns
a call of the 16x8 micro-kernel (int16x8.gemm_dot). The GEMM's columns are fw·out_c, not out_c: three output
channels leave one column in 16 unused instead of one in four, and no pixel is gathered per tap. The row is then
requantized as TFLM does (bias, per-channel multiplier, output zero point, clamp); sums as TFLM's int32 ones.
"""

from __future__ import annotations

import numpy as np
import tvm
from tvm.script import tirx as T

from .base import Const, Kernel, OpData, Scratch, jit, specialize
from .int16x8 import DOT_S16_HEADER, gemm_dot
from .requant import RSHIFT_FIELDS

# up to here the scatter is the faster (measured): the per-phase GEMM shares each gathered pixel among few channels
SCATTER_MAX_CHANNELS = 8


def scatters(out_channels: int) -> bool:
    """Whether a batch-1 int8 transpose convolution of `out_channels` takes the scatter kernel."""
    return out_channels <= SCATTER_MAX_CHANNELS


def transpose_conv_scatter_kernel(data: OpData, stride: tuple[int, int], pad: tuple[int, int],
                                  bias: np.ndarray) -> Kernel:
    """The layer (batch 1, int8) in one kernel: scratch for an input row as int16 and an output row's int32 sums."""
    op, rq = data.op, data.params.requant
    _, w, x, *_ = data.inputs
    y = data.output
    channels, f_h, f_w, in_c = w.shape
    _, in_h, in_w, _ = x.shape
    _, out_h, out_w, _ = y.shape
    (s_h, s_w), (p_h, p_w) = stride, pad
    dot = gemm_dot(data.cpu)
    columns = f_w * channels                  # column fx·channels + c of filter row fy: w[c, fy, fx, :]
    col_blocks = -(-columns // 2)
    block = dot.block_len(in_c)
    weights = np.concatenate([dot.pack(w.data[:, fy].transpose(1, 0, 2).reshape(columns, in_c))
                              for fy in range(f_h)])
    row_len = in_c + in_c % 2                 # each pixel's values word-aligned
    sums_w = max((in_w - 1) * s_w + f_w, out_w + p_w)
    taps_h = -(-f_h // s_h)
    requant = rq.consts()
    zp = x.quant.zp
    i32 = "int32"

    def filter_row(oy, ky):
        """The ky-th filter row that reaches output row oy."""
        return T.floormod(oy + p_h, s_h) + ky * s_h

    def input_row(oy, ky):
        """The input row it reaches oy from."""
        return T.floordiv(oy + p_h, s_h) - ky

    def real(px, col):
        """Whether pixel px and column col of a micro-kernel call are real (an odd count pads the last call)."""
        checks = ([px < in_w] if in_w % 2 else []) + ([col < columns] if columns % 2 else [])
        return tvm.tirx.all(*checks) if checks else True

    @jit
    def scatter(xb: T.Buffer((x.size,), "int8"), wp: T.Buffer((weights.size,), "int8"),
                bias: T.Buffer((channels,), i32), table: T.Optional(T.Buffer((channels * RSHIFT_FIELDS,), i32)),
                mult: T.Optional(T.Buffer((channels,), i32)), shift: T.Optional(T.Buffer((channels,), i32)),
                out: T.Buffer((y.size,), "int8"), scratch: T.Buffer((in_w * row_len,), "int16"),
                sums: T.Buffer((sums_w * channels,), i32)):
        acc = T.alloc_buffer((4,), i32)
        for oy in T.serial(out_h):
            for i in T.serial(sums_w * channels):
                sums[i] = 0
            for ky in T.serial(taps_h):
                if filter_row(oy, ky) < f_h and input_row(oy, ky) >= 0 and input_row(oy, ky) < in_h:
                    if row_len == in_c:   # the row's pixels one after the other
                        T.evaluate(T.call_extern(i32, "mtk_im2col_s8_s16", T.address_of(xb[0]), input_row(oy, ky), 0,
                                                 in_h, in_w, in_c, 1, in_w, 1, 1, zp, T.address_of(scratch[0])))
                    else:
                        for ix in T.serial(in_w):
                            T.evaluate(T.call_extern(i32, "mtk_im2col_s8_s16", T.address_of(xb[0]), input_row(oy, ky),
                                                     ix, in_h, in_w, in_c, 1, 1, 1, 1, zp,
                                                     T.address_of(scratch[ix * row_len])))
                    for pb, cb in T.grid((in_w + 1) // 2, col_blocks):
                        T.evaluate(T.call_extern(i32, dot.two_rows, T.address_of(scratch[pb * 2 * row_len]),
                                                 T.address_of(scratch[T.min(pb * 2 + 1, in_w - 1) * row_len]),
                                                 T.address_of(wp[(filter_row(oy, ky) * col_blocks + cb) * block]), in_c,
                                                 acc.access_ptr("w")))
                        for i in T.unroll(2):
                            for j in T.unroll(2):
                                if real(pb * 2 + i, cb * 2 + j):
                                    sums[(pb * 2 + i) * s_w * channels + cb * 2 + j] = (
                                        sums[(pb * 2 + i) * s_w * channels + cb * 2 + j] + acc[i * 2 + j])
            for ox, c in T.grid(out_w, channels):
                out[(oy * out_w + ox) * channels + c] = rq.output(sums[(ox + p_w) * channels + c] + bias[c], c,
                                                                  table, mult, shift)

    args = [op.inputs[2], Const("w", weights), Const("bias", bias), *requant.values(), op.outputs[0],
            Scratch(in_w * row_len * 2, "rows"), Scratch(sums_w * channels * 4, "sums")]
    return Kernel("transpose_conv", args, func=specialize(scatter, requant), headers=(DOT_S16_HEADER,),
                  c_calls=(dot.two_rows,))
