"""AVERAGE_POOL_2D, MAX_POOL_2D, MEAN and SUM on int8 and int16: TFLite's reference kernels, bit for bit.

Pooling copies reference/integer_ops/pooling.h (AveragePool, MaxPool) with the padding and
activation range of micro/kernels/pooling_common.cc. Input and output share one quantization
(TFLM checks it), so there is no requantization: the average of the in-bounds taps is rounded
half away from zero with C's truncating division, `(sum ± count/2) / count`; the max starts
at the type's minimum. Both are then clamped to the fused activation range (int16: within int16).

MEAN and SUM copy reference/reduce.h QuantizedMeanOrSum as micro/kernels/reduce_common.cc calls
it for int8 and int16 (EvalMeanHelper, EvalSumHelper): an int32 sum over the axes, minus in_zp·N,
requantized by in_scale/out_scale (MEAN: with 1/N folded into the multiplier, multiplier·2^k / N,
shift − k, k = floor(log2 N) capped), + out_zp, clamped to the element type. TFLM uses this one path for every axes set and keep_dims (its
4-D axes {1, 2} fast path is float only), and so does mtk, for inputs up to 6-D.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from tvm import te, tirx
from tvm.script import tirx as T

from ..graph import Graph, Op, Tensor
from ..kernels.table import Family, spec
from ..target import Cpu
from .base import Axis, Band, Kernel, Lowered, OpData, OpDef, Rows, c_call, constant_kernel, io
from .common import i32, let, op_error, require_per_tensor
from .elementwise import clamp_int
from .fixedpoint import INT8_MAX, INT8_MIN, activation_range, clamp, multiply_by_quantized_multiplier, \
    quantize_multiplier
from .schedules import schedule_per_output
from .variants import KernelChoice, Variant, VariantTable

MAX_RANK = 6
MVE_AVERAGE_MAX_TAPS = 4096   # mtk_pool_mve.h divides exactly up to there
C_AVERAGE_MAX_TAPS = {"int8": 2**23, "int16": 2**16 - 1}   # int32 sums (and sum ± count/2) exact up to there
_LIMITS = {"int8": (INT8_MIN, INT8_MAX), "int16": (-32768, 32767)}


# ---- AVERAGE_POOL_2D, MAX_POOL_2D -----------------------------------------------------------

@dataclass(frozen=True)
class Window:
    """One spatial axis of a pooling window, as ComputePaddingHeightWidth (kernels/padding.h) sets it up."""

    size: int      # input extent
    filter: int
    stride: int
    out: int       # output extent TFLM derives from the input
    pad: int       # leading padding

    @classmethod
    def of(cls, size: int, filter_size: int, stride: int, padding: str) -> "Window":
        out = (size + stride - 1) // stride if padding == "SAME" else (size + stride - filter_size) // stride
        pad = max(0, (out - 1) * stride + filter_size - size) // 2
        return cls(size, filter_size, stride, out, pad)

    def origin(self, o):
        return o * self.stride - self.pad

    def taps(self, origin):
        """Number of in-bounds taps: min(filter, size − origin) − max(0, −origin)."""
        return tirx.Min(i32(self.filter), i32(self.size) - origin) - tirx.Max(i32(0), i32(0) - origin)


def pool_windows(op: Op, x: Tensor) -> tuple[Window, Window]:
    o = op.options
    padding = o.get("padding", "SAME")
    return (Window.of(x.shape[1], o.get("filter_height", 1), o.get("stride_h", 1), padding),
            Window.of(x.shape[2], o.get("filter_width", 1), o.get("stride_w", 1), padding))


@dataclass(frozen=True)
class PoolParams:
    rows: Window
    cols: Window
    act_min: int
    act_max: int

    def window(self, axis: Axis) -> Window:
        return self.rows if axis is Axis.ROWS else self.cols

    def with_window(self, axis: Axis, window: Window) -> PoolParams:
        return replace(self, rows=window) if axis is Axis.ROWS else replace(self, cols=window)


class Pool2D(OpDef):
    types = ("AVERAGE_POOL_2D", "MAX_POOL_2D")

    def prepare(self, op: Op, graph: Graph, cpu: Cpu) -> OpData:
        (x, *_), y = io(op, graph)
        require_per_tensor(op, x, y, dtypes=("int8", "int16"))
        if len(x.shape) != 4 or len(y.shape) != 4:
            raise op_error(op, "input and output must be 4-D (NHWC)")
        # pooling_common.cc: |in_scale − out_scale| ≤ 1e-6 (in float) and equal zero points.
        if abs(np.float32(x.quant.s) - np.float32(y.quant.s)) > 1.0e-6 or x.quant.zp != y.quant.zp:
            raise op_error(op, "input and output quantization differ; TFLM requires them equal")
        wy, wx = pool_windows(op, x)
        if min(wy.filter, wx.filter, wy.stride, wx.stride) < 1 or wy.out < 1 or wx.out < 1:
            raise op_error(op, f"filter {wy.filter}x{wx.filter}, stride {wy.stride}x{wx.stride} "
                               f"do not fit the {x.shape[1]}x{x.shape[2]} input")
        if (y.shape[0], y.shape[3]) != (x.shape[0], x.shape[3]) or y.shape[1] > wy.out or y.shape[2] > wx.out:
            raise op_error(op, f"output shape {list(y.shape)} does not match the input and window")
        activation = activation_range(op.options.get("fused_activation_function", "NONE"), y.quant, *_LIMITS[x.dtype])
        return OpData.of(op, graph, cpu, PoolParams(wy, wx, *activation))

    def variants(self, data: OpData) -> list[Variant]:
        return [] if _constant_output(data) else POOL_KERNELS.variants(data)

    def axis_map(self, data: OpData, axis: Axis) -> Rows:
        w = data.params.window(axis)
        return Rows(w.size, data.output.shape[axis.value], w.filter, w.stride, w.pad)

    def band_params(self, data: OpData, band: Band) -> PoolParams:
        p = data.params
        window = replace(p.window(band.axis), size=band.size_in, out=band.size_out, pad=band.pad)
        return p.with_window(band.axis, window)

    def lower(self, data: OpData, variant: Variant | None = None) -> Lowered:
        p = data.params
        if _constant_output(data):
            return Lowered([constant_kernel(data, p.act_min)])
        return POOL_KERNELS.lower(data, variant)


def _constant_output(data: OpData) -> bool:
    """A fused activation range of one value: int8 outputs that value whatever the input."""
    return data.params.act_min == data.params.act_max and data.inputs[0].dtype == "int8"


def pool_te_kernel(data: OpData) -> Kernel:
    """Any pooling layer, int8 or int16: TVM's loops from the reference kernels' arithmetic (TE)."""
    op, p = data.op, data.params
    x, *_ = data.inputs
    y = data.output
    wy, wx, lo, hi = p.rows, p.cols, p.act_min, p.act_max
    lowest, _ = _LIMITS[x.dtype]
    average = op.type == "AVERAGE_POOL_2D"
    X = te.placeholder(x.shape, x.dtype, name="x")
    ky = te.reduce_axis((0, wy.filter), "ky")
    kx = te.reduce_axis((0, wx.filter), "kx")

    def tap(n, oy, ox, c, outside):
        iy, ix = wy.origin(oy) + ky, wx.origin(ox) + kx
        inside = tirx.all(iy >= 0, iy < wy.size, ix >= 0, ix < wx.size)
        dtype = "int32" if average else x.dtype
        return tirx.if_then_else(inside, X[n, iy, ix, c].astype(dtype), tirx.const(outside, dtype))

    if average:
        acc = te.compute(y.shape, lambda n, oy, ox, c: te.sum(tap(n, oy, ox, c, 0), axis=[ky, kx]), name="acc")
    else:   # te.max starts from the type's minimum, as MaxPool does
        acc = te.compute(y.shape, lambda n, oy, ox, c: te.max(tap(n, oy, ox, c, lowest), axis=[ky, kx]),
                         name="acc")

    def finish(n, oy, ox, c):
        if not average:
            return clamp(acc[n, oy, ox, c].astype("int32"), lo, hi).astype(x.dtype)
        count = wy.taps(wy.origin(oy)) * wx.taps(wx.origin(ox))
        return let(count, lambda k: clamp(rounded_average(acc[n, oy, ox, c], k), lo, hi).astype(x.dtype), "count")

    out = te.compute(y.shape, finish, name="out")
    func = schedule_per_output(te.create_prim_func([X, out]))
    return Kernel(op.type.lower(), [op.inputs[0], op.outputs[0]], func=func)


def _pool_call(data: OpData, kernel_id: str) -> Kernel:
    """The layer as one call of a hand-written C pooling function (kernels/table.py)."""
    op, p, x, y = data.op, data.params, data.inputs[0], data.output
    kernel = spec(Family.POOL, kernel_id)
    function = kernel.function
    average = op.type == "AVERAGE_POOL_2D"
    n, h, w, c = x.shape
    _, oh, ow, _ = y.shape
    wy, wx = p.rows, p.cols

    @T.prim_func
    def pool(xb: T.Buffer((x.size,), x.dtype), out: T.Buffer((y.size,), y.dtype)):
        for b in T.serial(n):
            T.evaluate(c_call(function, x=T.address_of(xb[b * h * w * c]), out=T.address_of(out[b * oh * ow * c]),
                              in_h=h, in_w=w, C=c, out_h=oh, out_w=ow, kh=wy.filter, kw=wx.filter,
                              stride_h=wy.stride, stride_w=wx.stride, pad_top=wy.pad, pad_left=wx.pad,
                              act_min=p.act_min, act_max=p.act_max, average=int(average),
                              int16=int(x.dtype == "int16")))

    return Kernel(op.type.lower(), [op.inputs[0], op.outputs[0]], func=pool, headers=(kernel.header,),
                  c_calls=(function.name,))


def pool_mve_kernel(data: OpData) -> Kernel:
    """int8/int16 pooling on Helium cores: one call for the layer (c/mtk_pool_mve.h)."""
    return _pool_call(data, "mve")


def pool_c_kernel(data: OpData) -> Kernel:
    """int8/int16 pooling on cores without Helium: one call for the layer (c/mtk_pool.h; SIMD words on DSP cores, int8
    max words on the M3 too)."""
    return _pool_call(data, "c")


def mve_pool_fits(data: OpData) -> bool:
    """A max, or an average over few enough taps for its division (int8) and its int32 sums (int16)."""
    p = data.params
    limit = MVE_AVERAGE_MAX_TAPS if data.inputs[0].dtype == "int8" else C_AVERAGE_MAX_TAPS["int16"]
    return data.op.type == "MAX_POOL_2D" or p.rows.filter * p.cols.filter <= limit


def c_pool_fits(data: OpData) -> bool:
    """A max, or an average whose int32 sums cannot overflow."""
    p = data.params
    return data.op.type == "MAX_POOL_2D" or p.rows.filter * p.cols.filter <= C_AVERAGE_MAX_TAPS[data.inputs[0].dtype]


TE_POOL = KernelChoice("tvm", pool_te_kernel)
C_POOL = KernelChoice("c", pool_c_kernel, c_pool_fits)
POOL_KERNELS = VariantTable(Family.POOL, (KernelChoice("mve", pool_mve_kernel, mve_pool_fits), C_POOL, TE_POOL))


def rounded_average(total, count):
    """AveragePool's rounding: (sum + count/2) / count if sum > 0 else (sum − count/2) / count, truncating."""
    half = tirx.truncdiv(count, i32(2))
    return tirx.Select(total > 0, tirx.truncdiv(total + half, count), tirx.truncdiv(total - half, count))


# ---- MEAN ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class MeanParams:
    axes: tuple[int, ...]     # resolved: non-negative, no duplicates, in the given order
    count: int                # N: elements summed into each output
    multiplier: int
    shift: int
    in_zp: int
    out_zp: int


def wrap_int32(v: int) -> int:
    """static_cast<int32_t> of an int64, as QuantizedMeanOrSum applies it to in_zp·N."""
    return (v + 2**31) % 2**32 - 2**31


def resolve_axes(op: Op, graph: Graph) -> tuple[int, ...]:
    """reduce.h ResolveAxis: negative axes count from the end, duplicates dropped."""
    x, axis = graph.input_tensors(op)[:2]
    if axis is None or axis.dtype != "int32" or not (axis.is_constant or axis.size == 0):
        raise op_error(op, "the axes must be a constant int32 tensor")
    rank = len(x.shape)
    resolved: list[int] = []
    for a in ([] if axis.size == 0 else axis.data.reshape(-1).tolist()):   # an empty buffer reads as no data
        if not -rank <= a < rank:
            raise op_error(op, f"axis {a} is out of range for a {rank}-D input")
        a = a + rank if a < 0 else a
        if a not in resolved:
            resolved.append(a)
    return tuple(resolved)


def mean_params(op: Op, graph: Graph) -> MeanParams:
    """PrepareMeanOrSumHelper, then (MEAN) QuantizedMeanOrSum's folding of 1/N into the multiplier."""
    (x, *_), y = io(op, graph)
    axes = resolve_axes(op, graph)
    count = int(np.prod([x.shape[a] for a in axes], dtype=np.int64))
    multiplier, shift = quantize_multiplier(float(np.float64(x.quant.s) / np.float64(y.quant.s)))
    if op.type == "SUM":
        return MeanParams(axes, count, multiplier, shift, x.quant.zp, y.quant.zp)
    k = min(count.bit_length() - 1, 32, 31 + shift)   # 63 − CountLeadingZeros(N), capped
    multiplier = (multiplier << k) // count
    return MeanParams(axes, count, multiplier, shift - k, x.quant.zp, y.quant.zp)


class Mean(OpDef):
    types = ("MEAN", "SUM")

    def prepare(self, op: Op, graph: Graph, cpu: Cpu) -> OpData:
        (x, *_), y = io(op, graph)
        require_per_tensor(op, x, y, dtypes=("int8", "int16"))
        if not 1 <= len(x.shape) <= MAX_RANK or x.size == 0:
            raise op_error(op, f"input shape {list(x.shape)} is not supported (1-D to {MAX_RANK}-D, non-empty)")
        axes = resolve_axes(op, graph)
        kept = [s for i, s in enumerate(x.shape) if i not in axes]
        if y.size != int(np.prod(kept, dtype=np.int64)):
            raise op_error(op, f"output shape {list(y.shape)} does not match the input {list(x.shape)} "
                               f"reduced over axes {list(axes)}")
        return OpData.of(op, graph, cpu, mean_params(op, graph))

    def lower(self, data: OpData, variant=None) -> Lowered:
        op, p = data.op, data.params
        x, *_ = data.inputs
        lo, hi = _LIMITS[x.dtype]
        if p.multiplier == 0 and x.dtype == "int8":
            return Lowered([constant_kernel(data, clamp_int(p.out_zp, lo, hi))])
        kept = [d for d in range(len(x.shape)) if d not in p.axes]
        out_shape = tuple(x.shape[d] for d in kept) or (1,)
        # No axes: N = 1 and every element is its own sum; a unit reduce axis keeps one code path.
        reduced = [d for d in range(len(x.shape)) if d in p.axes] or [None]
        rs = {d: te.reduce_axis((0, x.shape[d] if d is not None else 1), f"r{i}") for i, d in enumerate(reduced)}

        X = te.placeholder(x.shape, x.dtype, name="x")

        def total(*o):
            position = dict(zip(kept, o))
            index = tuple(position[d] if d in position else rs[d] for d in range(len(x.shape)))
            return te.sum(X[index].astype("int32"), axis=list(rs.values()))

        acc = te.compute(out_shape, total, name="acc")

        def requant(*o):
            shifted = acc[o] - i32(wrap_int32(p.in_zp * p.count))
            scaled = multiply_by_quantized_multiplier(shifted, p.multiplier, p.shift)
            return clamp(scaled + i32(p.out_zp), lo, hi).astype(x.dtype)

        out = te.compute(out_shape, requant, name="out")
        func = schedule_per_output(te.create_prim_func([X, out]))
        return Lowered([Kernel(op.type.lower(), [op.inputs[0], op.outputs[0]], func=func)])


OPS = [Pool2D(), Mean()]
