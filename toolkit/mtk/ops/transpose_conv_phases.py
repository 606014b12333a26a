"""int8 TRANSPOSE_CONV (batch 1) as stride-1 convolutions on the int8 GEMM: one per stride phase on Helium (MVE) cores,
a stride-1 layer's one on the others.

The output pixels (oy, ox) with oy + pad_h ≡ py (mod stride_h), ox + pad_w ≡ px (mod stride_w) form phase (py, px),
a lattice of the output stride apart from (first_y, first_x) = ((py − pad_h) mod stride_h, (px − pad_w) mod stride_w).
Output row oy of the phase takes the filter rows fy = py + k·stride_h from input rows (oy + pad_h − py)/stride_h − k
(k < t_h, the phase's taps): with the taps in reverse order (the filter rotated 180°, as CMSIS-NN's
arm_transpose_conv_wrapper_s8 does for stride 1) that is a convolution of stride 1, its window's top row
(oy + pad_h − py)/stride_h − (t_h − 1), and the same along the width. Each phase is then a CONV_2D on mtk's Helium GEMM
(gemm_mve.py: im2col rows, the input's zero point where a tap leaves the image and −in_zp·Σw folded into the bias, so
that each sum is TFLM's Σ (x − in_zp)·w over the taps inside; requantization fused), its rows written to the
phase's pixels (gemm_mve.Lattice). A phase with no taps (a filter smaller than the stride) takes one zero tap: its
outputs are the bias requantized, as TFLM's. On other cores a stride-1 layer (one phase, every output pixel) is the
CONV_2D it equals on the GEMM of their CONV_2D (gemm.py's default variant).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..kernels.table import GEMM_BY_ID
from .base import Kernel, OpData
from .gemm import GemmParams, Patches
from .gemm_mve import Lattice, gemm_mve_kernel

MVE_GEMM = GEMM_BY_ID["2x4/int8"]   # mtk_gemm_mve.h


def phase_weights(w: np.ndarray, phase: tuple[int, int], stride: tuple[int, int]) -> np.ndarray:
    """The filter [out_c, f_h, f_w, in_c]'s taps of `phase`, rotated 180° ([out_c, t_h, t_w, in_c]; one zero tap
    along an axis where the phase has none)."""
    taps = w[:, phase[0]::stride[0], phase[1]::stride[1]][:, ::-1, ::-1]
    rotated = np.zeros((w.shape[0], max(taps.shape[1], 1), max(taps.shape[2], 1), w.shape[3]), np.int8)
    rotated[:, :taps.shape[1], :taps.shape[2]] = taps
    return rotated


def phase_gemm(data: OpData, phase: tuple[int, int], stride: tuple[int, int], pad: tuple[int, int],
               bias: np.ndarray) -> tuple[GemmParams, Lattice] | None:
    """The GEMM of stride phase `phase` (a stride-1 convolution's, im2col rows) and the output pixels its rows go to;
    None when the phase has none."""
    _, w, x, *_ = data.inputs
    _, in_h, in_w, in_c = x.shape
    _, out_h, out_w, channels = data.output.shape
    (py, px), in_zp = phase, x.quant.zp
    first = ((py - pad[0]) % stride[0], (px - pad[1]) % stride[1])
    shape = (-(-(out_h - first[0]) // stride[0]), -(-(out_w - first[1]) // stride[1]))
    if min(shape) <= 0:
        return None
    taps = phase_weights(w.data, phase, stride)
    # the window's top (left) input row of phase row 0, less (t − 1): its padding
    origin = ((first[0] + pad[0] - py) // stride[0], (first[1] + pad[1] - px) // stride[1])
    patches = Patches(1, in_h, in_w, in_c, *shape, channels, taps.shape[1], taps.shape[2], 1, 1, 1, 1,
                      taps.shape[1] - 1 - origin[0], taps.shape[2] - 1 - origin[1], in_zp)
    folded = (bias.astype(np.int64) - in_zp * taps.astype(np.int64).sum(axis=(1, 2, 3))).astype(np.int32)
    params = GemmParams("transpose_conv", taps.reshape(channels, -1), folded, data.params.requant, patches)
    return params, Lattice(first, stride, shape, out_w)


def transpose_conv_mve_kernels(data: OpData, stride: tuple[int, int], pad: tuple[int, int],
                               bias: np.ndarray) -> list[Kernel]:
    """A kernel per stride phase with output pixels (gemm_mve_kernel over the phase's Lattice)."""
    phases = (phase_gemm(data, (py, px), stride, pad, bias) for py in range(stride[0]) for px in range(stride[1]))
    return [gemm_mve_kernel(replace(data, params=params), MVE_GEMM, lattice)
            for params, lattice in filter(None, phases)]


def as_convolution(data: OpData, pad: tuple[int, int], bias: np.ndarray) -> OpData:
    """A stride-1 layer as the CONV_2D it equals (GemmParams, its input first)."""
    params, _ = phase_gemm(data, (0, 0), (1, 1), pad, bias)
    op = data.op
    conv = replace(op, type="CONV_2D", inputs=[op.inputs[2], op.inputs[1], *op.inputs[3:]])
    return replace(data, op=conv, inputs=(data.inputs[2], data.inputs[1], *data.inputs[3:]), params=params)
