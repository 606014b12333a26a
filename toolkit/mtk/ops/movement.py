"""CONCATENATION, PAD, PADV2, STRIDED_SLICE, TRANSPOSE: int8 and int16 data movement as TFLM does it (int32 too
for CONCATENATION and STRIDED_SLICE).

References (tensorflow/tflite-micro): micro/kernels/concatenation.cc with
kernels/internal/reference/concatenation.h; micro/kernels/pad.cc, pad_common.cc with
reference/pad.h; micro/kernels/strided_slice.cc, strided_slice_common.cc with
reference/strided_slice.h and kernels/internal/strided_slice_logic.h; micro/kernels/transpose.cc,
transpose_common.cc with reference/transpose.h.

None of them looks at the values: every output element is an input element (or the pad
value). Int8 concatenation requires every input quantized exactly like the output, int16 zero
points 0 (TFLM's Prepare rejects anything else); pad copies bytes even when input and output
quantization differ, and so do we, and pads int16 with 0 (TFLM: not the zero point). All index
math (masks, clamping, negative strides, paddings) is done here on the host; each op becomes one TIR kernel made of plain loop nests
`dst[base + Σ i·step] = src[base' + Σ i·step']` (or `= pad value`), with adjacent loops merged
where both sides are contiguous, so the C is a few flat copy loops and uses no stack.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from tvm import tirx
from tvm.script import ir_builder as IB
from tvm.script.ir_builder import tirx as T

from ..graph import Graph, Op, Tensor
from ..target import Cpu
from .base import Kernel, Lowered, OpData, OpDef, io
from .common import const_int32, op_error


# ---- the kernel shape shared by every op here ------------------------------------------------

@dataclass(frozen=True)
class Nest:
    """One loop nest: for i over `extents`, buf[dst][dst_base + i·dst_steps] = buf[src][src_base + i·src_steps].

    `src` None means the stored value is the int8 constant `fill`.
    """

    extents: tuple[int, ...]
    dst: int
    dst_base: int
    dst_steps: tuple[int, ...]
    src: int | None = None
    src_base: int = 0
    src_steps: tuple[int, ...] = ()
    fill: int = 0

    def collapsed(self) -> "Nest":
        """The same copy with size-1 loops dropped and loops merged where both sides are contiguous."""
        src_steps = self.src_steps if self.src is not None else (0,) * len(self.extents)
        dims = [(e, d, s) for e, d, s in zip(self.extents, self.dst_steps, src_steps) if e != 1]
        merged: list[tuple[int, int, int]] = []
        for e, d, s in dims:
            if merged:
                pe, pd, ps = merged[-1]
                if pd == d * e and ps == s * e:
                    merged[-1] = (pe * e, d, s)
                    continue
            merged.append((e, d, s))
        merged = merged or [(1, 0, 0)]
        return Nest(tuple(m[0] for m in merged), self.dst, self.dst_base, tuple(m[1] for m in merged),
                    self.src, self.src_base, tuple(m[2] for m in merged) if self.src is not None else (), self.fill)


def row_major_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    strides = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        strides[i] = strides[i + 1] * shape[i + 1]
    return tuple(strides)


def movement_func(buffers: list[tuple[str, int]], nests: list[Nest], dtype: str = "int8") -> tirx.PrimFunc:
    """A PrimFunc over flat buffers (name, elements), in order, running `nests` one after the other."""
    with IB.IRBuilder() as ib:
        with T.prim_func():
            T.func_name("main")
            bufs = [T.arg(name, T.buffer((size,), dtype)) for name, size in buffers]
            for nest in (n.collapsed() for n in nests):
                with T.grid(*nest.extents) as loop_vars:
                    idx = list(loop_vars) if not isinstance(loop_vars, tirx.Var) else [loop_vars]

                    def offset(base: int, steps: tuple[int, ...]):
                        expr = tirx.const(base, "int32")
                        for v, step in zip(idx, steps):
                            if step:
                                expr = expr + v * tirx.const(step, "int32")
                        return expr

                    value = bufs[nest.src][offset(nest.src_base, nest.src_steps)] if nest.src is not None \
                        else tirx.const(nest.fill, dtype)
                    T.buffer_store(bufs[nest.dst], value, [offset(nest.dst_base, nest.dst_steps)])
    return ib.get()


def _check_int8_io(op: Op, x: Tensor, y: Tensor, max_rank: int, dtypes: tuple[str, ...] = ("int8", "int16")) -> None:
    if x.dtype != y.dtype or x.dtype not in dtypes:
        raise op_error(op, f"{x.dtype} -> {y.dtype}; mtk supports {', '.join(dtypes)}")
    if len(x.shape) > max_rank or len(y.shape) > max_rank:
        raise op_error(op, f"{len(x.shape)}-D input; TFLM supports at most {max_rank} dimensions")
    if x.size == 0 or y.size == 0:
        raise op_error(op, f"empty tensor ({list(x.shape)} -> {list(y.shape)})")


@dataclass(frozen=True)
class MovementPlan:
    inputs: list[int]                  # the data inputs, in kernel parameter order (the outputs follow)
    buffers: list[tuple[str, int]]     # every kernel parameter: name, elements
    nests: list[Nest]


class _Movement(OpDef):
    """An op whose kernel is a list of loop nests over its data inputs and its output.

    `plan` checks the op as TFLM's Prepare does (raising ModelError) and returns the data
    inputs (in kernel parameter order; the output buffers, one per output, come after them)
    and the nests. Every data tensor has the output's element type.
    """

    kernel_name: ClassVar[str] = ""

    def plan(self, op: Op, graph: Graph) -> tuple[list[int], list[Nest]]:
        raise NotImplementedError

    def prepare(self, op: Op, graph: Graph, cpu: Cpu) -> OpData:
        inputs, nests = self.plan(op, graph)
        buffers = [(f"x{i}", graph.tensors[t].size) for i, t in enumerate(inputs)]
        buffers += [(f"y{i}", graph.tensors[t].size) for i, t in enumerate(op.outputs)]
        return OpData.of(op, graph, cpu, MovementPlan(inputs, buffers, nests))

    def lower(self, data: OpData, variant=None) -> Lowered:
        p: MovementPlan = data.params
        func = movement_func(p.buffers, p.nests, data.output.dtype)
        return Lowered([Kernel(self.kernel_name, [*p.inputs, *data.op.outputs], func=func)])


# ---- CONCATENATION ---------------------------------------------------------------------------

_WITH_INT32 = ("int8", "int16", "int32")   # what CONCATENATION and STRIDED_SLICE take (TFLM: float32, bool too)
_CONCAT_MAX_INPUTS = 10   # concatenation.cc kMaxInputNum
_CONCAT_MAX_RANK = 6      # RuntimeShape::kMaxSmallSize


class Concatenation(_Movement):
    types = ("CONCATENATION",)
    kernel_name = "concatenation"

    def plan(self, op: Op, graph: Graph) -> tuple[list[int], list[Nest]]:
        xs, y = io(op, graph)
        if op.options.get("fused_activation_function", "NONE") != "NONE":
            raise op_error(op, "a fused activation is not allowed (TFLM requires NONE)")
        if not 1 <= len(xs) <= _CONCAT_MAX_INPUTS or any(x is None for x in xs):
            raise op_error(op, f"{len(xs)} inputs; TFLM supports 1 to {_CONCAT_MAX_INPUTS}")
        for x in xs:
            _check_int8_io(op, x, y, max_rank=_CONCAT_MAX_RANK, dtypes=_WITH_INT32)
            if y.dtype == "int32":   # TFLM copies int32 values, whatever their quantization
                continue
            if x.quant is None or y.quant is None or x.quant.per_channel:
                raise op_error(op, f"input '{x.name}' needs per-tensor quantization")
            if y.dtype == "int16" and (x.quant.zp != 0 or y.quant.zp != 0):   # the int16 kernel copies too
                raise op_error(op, "int16 inputs and output need zero point 0 (TFLM requires it)")
            if y.dtype == "int8" and (np.float32(x.quant.s) != np.float32(y.quant.s) or x.quant.zp != y.quant.zp):
                raise op_error(op, f"input '{x.name}' is quantized unlike the output; TFLM's int8 concatenation "
                                "does not rescale")
        axis = int(op.options.get("axis", 0))
        axis = axis + len(y.shape) if axis < 0 else axis   # CalculatePositiveAxis
        if not 0 <= axis < len(y.shape):
            raise op_error(op, f"axis {op.options.get('axis')} is out of range for a {len(y.shape)}-D output")
        for x in xs:
            if len(x.shape) != len(y.shape) or any(a != b for i, (a, b) in enumerate(zip(x.shape, y.shape))
                                                   if i != axis):
                raise op_error(op, f"input {list(x.shape)} does not fit output {list(y.shape)} along axis {axis}")
        if sum(x.shape[axis] for x in xs) != y.shape[axis]:
            raise op_error(op, f"inputs add up to {sum(x.shape[axis] for x in xs)} along axis {axis}, "
                            f"output has {y.shape[axis]}")
        outer = int(np.prod(y.shape[:axis], dtype=np.int64))
        inner = int(np.prod(y.shape[axis + 1:], dtype=np.int64))
        row = y.shape[axis] * inner
        nests, offset = [], 0
        for i, x in enumerate(xs):   # reference Concatenation: per outer index, each input's block in turn
            block = x.shape[axis] * inner
            nests.append(Nest((outer, block), len(xs), offset, (row, 1), i, 0, (block, 1)))
            offset += block
        return list(op.inputs), nests


# ---- PAD / PADV2 -----------------------------------------------------------------------------

_PAD_MAX_RANK = 5   # reference_ops::PadKernelMaxDimensionCount


class Pad(_Movement):
    types = ("PAD", "PADV2")
    kernel_name = "pad"

    def _params(self, op: Op, graph: Graph) -> tuple[np.ndarray, int]:
        """(paddings [rank, 2], the int8 pad value), checked as PadPrepare does."""
        inputs, y = io(op, graph)
        x, paddings = inputs[0], inputs[1] if len(inputs) > 1 else None
        constant = inputs[2] if len(inputs) > 2 else None
        if len(inputs) not in (2, 3) or (op.type == "PAD" and constant is not None):
            raise op_error(op, f"{len(inputs)} inputs")
        _check_int8_io(op, x, y, max_rank=_PAD_MAX_RANK)
        pads = const_int32(op, paddings, "paddings")
        if pads.size != 2 * len(y.shape) or len(x.shape) != len(y.shape):
            raise op_error(op, f"{pads.size} padding values for a {len(y.shape)}-D output")
        pads = pads.reshape(-1, 2)
        if np.any(pads < 0):
            raise op_error(op, f"negative paddings {pads.tolist()} are not supported by TFLM's kernel")
        if any(o != i + int(a) + int(b) for o, i, (a, b) in zip(y.shape, x.shape, pads)):
            raise op_error(op, f"output {list(y.shape)} is not input {list(x.shape)} padded by {pads.tolist()}")
        zp = y.quant.zp if y.quant is not None and y.dtype == "int8" else 0   # int16 pads with 0, not the zp
        if constant is None:
            if not -128 <= zp <= 127:
                raise op_error(op, f"output zero point {zp} is outside int8")
            return pads, zp
        if constant.dtype != y.dtype or not constant.is_constant or constant.size != 1:
            raise op_error(op, f"the pad value must be a constant {y.dtype} scalar")
        c_zp = constant.quant.zp if constant.quant is not None else 0
        c_scale = constant.quant.s if constant.quant is not None else 0.0
        if c_zp != zp or np.float32(c_scale) != np.float32(y.quant.s if y.quant is not None else 0.0):
            raise op_error(op, "the pad value must be quantized like the output (TFLM requires it)")
        return pads, int(constant.data.reshape(-1)[0])

    def plan(self, op: Op, graph: Graph) -> tuple[list[int], list[Nest]]:
        (x, *_), y = io(op, graph)
        pads, value = self._params(op, graph)
        out_steps = row_major_strides(y.shape)
        left = [int(p) for p in pads[:, 0]]
        # The border, without overlaps: in region d, axes before d are inside the input and
        # axis d is in its left or right padding; axes after d run over the whole output.
        nests = []
        for d in range(len(y.shape)):
            for start, length in ((0, left[d]), (left[d] + x.shape[d], y.shape[d] - left[d] - x.shape[d])):
                if length == 0:
                    continue
                extents = (*x.shape[:d], length, *y.shape[d + 1:])
                base = sum(left[k] * out_steps[k] for k in range(d)) + start * out_steps[d]
                nests.append(Nest(extents, 1, base, out_steps, fill=value))
        interior = sum(l * s for l, s in zip(left, out_steps))
        nests.append(Nest(x.shape, 1, interior, out_steps, 0, 0, row_major_strides(x.shape)))
        return [op.inputs[0]], nests


# ---- STRIDED_SLICE ---------------------------------------------------------------------------

_SLICE_MAX_RANK = 4   # strided_slice_common.cc kMaxDim


def _clamp(v: int, lo: int, hi: int) -> int:
    return hi if v > hi else lo if v < lo else v


@dataclass(frozen=True)
class SliceAxis:
    start: int
    stride: int
    count: int      # loop iterations of the reference kernel
    shrink: bool


def slice_axes(begin: np.ndarray, end: np.ndarray, strides: np.ndarray, shape: tuple[int, ...],
               begin_mask: int, end_mask: int, shrink_mask: int) -> list[SliceAxis]:
    """StridedSliceStartForAxis / StridedSliceEndForAxis (offset is never set by TFLM) and the loop count."""
    axes = []
    for d, size in enumerate(shape):
        stride = int(strides[d])
        start = int(begin[d])
        if start < 0:
            start += size
        start = _clamp(start, 0, size) if stride > 0 else _clamp(start, -1, size - 1)
        if begin_mask & (1 << d):
            start = 0 if stride > 0 else size - 1
        shrink = bool(shrink_mask & (1 << d))
        if shrink:
            stop = start if start >= size else start + 1
        else:
            stop = int(end[d])
            if stop < 0:
                stop += size
            stop = _clamp(stop, 0, size) if stride > 0 else _clamp(stop, -1, size - 1)
            if end_mask & (1 << d):
                stop = size if stride > 0 else -1
        span = stop - start if stride > 0 else start - stop
        count = max(0, -(-span // abs(stride)))
        axes.append(SliceAxis(start, stride, count, shrink))
    return axes


class StridedSlice(_Movement):
    types = ("STRIDED_SLICE",)
    kernel_name = "strided_slice"

    def plan(self, op: Op, graph: Graph) -> tuple[list[int], list[Nest]]:
        inputs, y = io(op, graph)
        x, begin_t, end_t, strides_t = inputs
        _check_int8_io(op, x, y, max_rank=_SLICE_MAX_RANK, dtypes=_WITH_INT32)
        rank = len(x.shape)
        begin, end, strides = (const_int32(op, t, name) for t, name in
                               ((begin_t, "begin"), (end_t, "end"), (strides_t, "strides")))
        if not begin.size == end.size == strides.size == rank:
            raise op_error(op, f"begin/end/strides have {begin.size}/{end.size}/{strides.size} values "
                            f"for a {rank}-D input")
        if np.any(strides == 0):
            raise op_error(op, "stride value has to be non-zero")
        o = op.options
        for mask in ("ellipsis_mask", "new_axis_mask"):
            if o.get(mask, 0):
                raise op_error(op, f"{mask} is not supported (TFLM ignores it and would compute another slice)")
        if o.get("offset", False) and np.any(begin != 0):
            raise op_error(op, "offset=true is not supported (TFLM ignores it and would compute another slice)")
        axes = slice_axes(begin, end, strides, x.shape, int(o.get("begin_mask", 0)), int(o.get("end_mask", 0)),
                          int(o.get("shrink_axis_mask", 0)))
        for d, a in enumerate(axes):
            if a.shrink and a.count != 1:   # TFLM writes nothing for this axis: the output stays stale
                raise op_error(op, f"shrunk axis {d} selects no element (begin {int(begin[d])}, stride {a.stride})")
        expected = [a.count for a in axes if not a.shrink]
        if list(y.shape) != expected:   # CheckOutputSize
            raise op_error(op, f"output shape {list(y.shape)} does not match the slice {expected}")
        in_steps = row_major_strides(x.shape)
        counts = tuple(a.count for a in axes)
        nest = Nest(counts, 1, 0, row_major_strides(counts), 0, sum(a.start * s for a, s in zip(axes, in_steps)),
                    tuple(a.stride * s for a, s in zip(axes, in_steps)))
        return [op.inputs[0]], [nest]


# ---- TRANSPOSE -------------------------------------------------------------------------------

_TRANSPOSE_MAX_RANK = 5   # transpose_common.cc


class Transpose(_Movement):
    types = ("TRANSPOSE",)
    kernel_name = "transpose"

    def plan(self, op: Op, graph: Graph) -> tuple[list[int], list[Nest]]:
        inputs, y = io(op, graph)
        x = inputs[0]
        _check_int8_io(op, x, y, max_rank=_TRANSPOSE_MAX_RANK)
        perm = [int(p) for p in const_int32(op, inputs[1], "perm")]
        if sorted(perm) != list(range(len(x.shape))):
            raise op_error(op, f"perm {perm} is not a permutation of the input's {len(x.shape)} axes")
        if list(y.shape) != [x.shape[p] for p in perm]:
            raise op_error(op, f"output {list(y.shape)} is not input {list(x.shape)} permuted by {perm}")
        in_steps = row_major_strides(x.shape)
        # reference TransposeImpl: output in row-major order, input stride of axis perm[d] per output axis d
        return [op.inputs[0]], [Nest(y.shape, 1, 0, row_major_strides(y.shape), 0, 0,
                                     tuple(in_steps[p] for p in perm))]


OPS = [Concatenation(), Pad(), StridedSlice(), Transpose()]
