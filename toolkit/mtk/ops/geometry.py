"""The geometry of a 2-D convolution window over an NHWC input (CONV_2D, DEPTHWISE_CONV_2D)."""

from __future__ import annotations

from dataclasses import dataclass

from ..graph import Op, Tensor


@dataclass(frozen=True)
class ConvGeometry:
    n: int
    in_h: int
    in_w: int
    in_c: int
    out_h: int
    out_w: int
    out_c: int
    k_h: int
    k_w: int
    stride_h: int
    stride_w: int
    dil_h: int
    dil_w: int
    pad_top: int
    pad_left: int


def _same_padding(in_size: int, out_size: int, k: int, stride: int, dilation: int) -> int:
    effective = (k - 1) * dilation + 1
    return max(0, (out_size - 1) * stride + effective - in_size) // 2


def conv_geometry(op: Op, x: Tensor, w: Tensor, y: Tensor) -> ConvGeometry:
    o = op.options
    n, in_h, in_w, in_c = x.shape
    _, out_h, out_w, out_c = y.shape
    k_h, k_w = w.shape[1], w.shape[2]
    sh, sw = o.get("stride_h", 1), o.get("stride_w", 1)
    dh, dw = o.get("dilation_h_factor", 1), o.get("dilation_w_factor", 1)
    same = o.get("padding", "SAME") == "SAME"
    return ConvGeometry(
        n, in_h, in_w, in_c, out_h, out_w, out_c, k_h, k_w, sh, sw, dh, dw,
        _same_padding(in_h, out_h, k_h, sh, dh) if same else 0,
        _same_padding(in_w, out_w, k_w, sw, dw) if same else 0,
    )
