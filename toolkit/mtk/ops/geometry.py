"""The geometry of a 2-D convolution window over an NHWC input (CONV_2D, DEPTHWISE_CONV_2D)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..graph import Op, Tensor
from .base import Axis, Band, Rows

# per axis, the fields of its (input extent, output extent, kernel, dilation, stride, leading padding)
_AXIS_FIELDS = {Axis.ROWS: ("in_h", "out_h", "k_h", "dil_h", "stride_h", "pad_top"),
                Axis.COLS: ("in_w", "out_w", "k_w", "dil_w", "stride_w", "pad_left")}


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

    def axis_map(self, axis: Axis) -> Rows:
        """How the output's rows (columns) read the input's."""
        size_in, size_out, k, dil, stride, pad = (getattr(self, f) for f in _AXIS_FIELDS[axis])
        return Rows(size_in, size_out, (k - 1) * dil + 1, stride, pad)

    def band(self, band: Band) -> ConvGeometry:
        """The geometry of the convolution computing `band`."""
        size_in, size_out, _, _, _, pad = _AXIS_FIELDS[band.axis]
        return replace(self, **{size_in: band.size_in, size_out: band.size_out, pad: band.pad})


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
