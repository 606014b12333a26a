"""RESIZE_NEAREST_NEIGHBOR (int8, int16) and RESIZE_BILINEAR (int8), as TFLM computes them.

References (tensorflow/tflite-micro): micro/kernels/resize_nearest_neighbor.cc with
kernels/internal/reference/resize_nearest_neighbor.h (GetNearestNeighbor: float scale,
floor or TfLiteRound); micro/kernels/resize_bilinear.cc with reference/resize_bilinear.h
(int8: ResizeBilinearInteger, Q10 source coordinates, a Q20 sum rounded half away from zero).

Where each output row and column reads from depends only on the shapes: it is computed here on
the host, in float32 exactly as GetNearestNeighbor does or in ComputeInterpolationValuesInteger's
integers, and the kernel reads it from small per-row and per-column int32 tables. The bilinear
sum stays within int32 (weights in [-512, 1536], |sum| < 2^30), so no 64-bit multiply.
Neither kernel reads the quantization: TFLM copies/interpolates raw values whatever the scales.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from tvm import te, tirx

from ..graph import Graph, Op
from .base import Const, Kernel, Lowered, OpData, OpDef, io
from .common import const_int32, op_error

ONE_Q10 = 1 << 10


@dataclass(frozen=True)
class ResizePlan:
    batches: int
    in_hw: tuple[int, int]
    out_hw: tuple[int, int]
    depth: int
    align_corners: bool
    half_pixel_centers: bool


def nearest_indices(in_size: int, out_size: int, align_corners: bool, half_pixel_centers: bool) -> np.ndarray:
    """GetNearestNeighbor for every output index, in float32 arithmetic."""
    f32 = np.float32
    scale = f32(in_size - 1) / f32(out_size - 1) if align_corners and out_size > 1 else f32(in_size) / f32(out_size)
    offset = f32(0.5) if half_pixel_centers else f32(0.0)
    scaled = (np.arange(out_size, dtype=f32) + offset) * scale
    index = np.sign(scaled) * np.floor(np.abs(scaled) + f32(0.5)) if align_corners else np.floor(scaled)
    index = np.minimum(index.astype(np.int64), in_size - 1)
    return np.maximum(index, 0) if half_pixel_centers else index


def bilinear_taps(in_size: int, out_size: int, align_corners: bool, half_pixel_centers: bool) -> np.ndarray:
    """ComputeInterpolationValuesInteger for every output index: int32 [out_size, 3] of
    (lower, upper, weight of upper in Q10)."""
    if align_corners and out_size > 1:
        scale = (ONE_Q10 * (in_size - 1) + (out_size - 1) // 2) // (out_size - 1)
    else:
        scale = (ONE_Q10 * in_size + out_size // 2) // out_size
    rows = []
    for v in range(out_size):
        scaled = v * scale + scale // 2 - (1 << 9) if half_pixel_centers else v * scale
        lower = max(int(scaled / ONE_Q10), 0)                               # C division: toward zero
        upper = min(int((scaled + ONE_Q10 - 1) / ONE_Q10), in_size - 1)
        rows.append((lower, upper, scaled - ONE_Q10 * lower))
    return np.array(rows, dtype=np.int32)


class Resize(OpDef):
    types = ("RESIZE_NEAREST_NEIGHBOR", "RESIZE_BILINEAR")

    def plan(self, op: Op, graph: Graph) -> ResizePlan:
        inputs, y = io(op, graph)
        x, size_t = inputs
        dtypes = ("int8", "int16") if op.type == "RESIZE_NEAREST_NEIGHBOR" else ("int8",)
        if x.dtype != y.dtype or x.dtype not in dtypes:
            raise op_error(op, f"{x.dtype} -> {y.dtype}; mtk supports {' or '.join(dtypes)} here")
        size = const_int32(op, size_t, "size")
        if size.size != 2 or tuple(y.shape) != (x.shape[0], int(size[0]), int(size[1]), x.shape[3]) or x.size == 0 \
                or y.size == 0:
            raise op_error(op, f"output {list(y.shape)} is not input {list(x.shape)} resized to {size.tolist()}")
        align, half = bool(op.options.get("align_corners")), bool(op.options.get("half_pixel_centers"))
        if op.type == "RESIZE_BILINEAR" and align and half:
            raise op_error(op, "half_pixel_centers and align_corners both set (TFLM rejects it)")
        return ResizePlan(x.shape[0], (x.shape[1], x.shape[2]), (y.shape[1], y.shape[2]), x.shape[3], align, half)

    def lower(self, data: OpData, variant=None) -> Lowered:
        op, p = data.op, data.params
        x, _ = data.inputs
        y = data.output
        X = te.placeholder(x.shape, x.dtype, name="x")
        if op.type == "RESIZE_NEAREST_NEIGHBOR":
            maps = [nearest_indices(i, o, p.align_corners, p.half_pixel_centers) for i, o in zip(p.in_hw, p.out_hw)]
            rows, cols = (te.placeholder((len(m),), "int32", name=n) for m, n in zip(maps, ("rows", "cols")))
            out = te.compute(y.shape, lambda b, i, j, c: X[b, rows[i], cols[j], c], name="out")
            consts = [Const("rows", maps[0].astype(np.int32)), Const("cols", maps[1].astype(np.int32))]
        else:
            taps = [bilinear_taps(i, o, p.align_corners, p.half_pixel_centers) for i, o in zip(p.in_hw, p.out_hw)]
            rows, cols = (te.placeholder((t.size,), "int32", name=n) for t, n in zip(taps, ("rows", "cols")))
            consts = [Const("rows", taps[0].reshape(-1)), Const("cols", taps[1].reshape(-1))]
            one = tirx.const(ONE_Q10, "int32")

            def interpolate(b, i, j, c):
                y0, y1, wy = rows[3 * i], rows[3 * i + 1], rows[3 * i + 2]
                x0, x1, wx = cols[3 * j], cols[3 * j + 1], cols[3 * j + 2]

                def at(yy, xx):
                    return X[b, yy, xx, c].astype("int32")
                total = (at(y0, x0) * (one - wx) + at(y0, x1) * wx) * (one - wy) + \
                        (at(y1, x0) * (one - wx) + at(y1, x1) * wx) * wy
                half = tirx.Select(total > 0, tirx.const(1 << 19, "int32"), tirx.const(-(1 << 19), "int32"))
                return tirx.truncdiv(total + half, tirx.const(1 << 20, "int32")).astype(x.dtype)
            out = te.compute(y.shape, interpolate, name="out")
        func = te.create_prim_func([X, rows, cols, out])
        return Lowered([Kernel(op.type.lower(), [op.inputs[0], *consts, op.outputs[0]], func=func)])


OPS = [Resize()]
