"""SPLIT, SPLIT_V, PACK, UNPACK, SPACE_TO_DEPTH, DEPTH_TO_SPACE: bytes moved, never looked at.

References (tensorflow/tflite-micro): micro/kernels/split.cc (SplitImpl), split_v.cc,
pack.cc (PackImpl), unpack.cc (UnpackImpl), space_to_depth.cc with
kernels/internal/reference/space_to_depth.h, depth_to_space.cc with reference/depth_to_space.h.

None of these kernels reads the quantization parameters: outputs are copies of input bytes
whatever the tensors' scales say (TFLM checks none of them), so mtk copies the bytes too. Each
op is a few loop nests of layout.py's kind; the element types are those TFLM's Eval accepts.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from ..graph import Graph, Op, Tensor
from .common import const_int32, op_error
from .movement import Nest, _Movement

_MAX_RANK = 5   # RuntimeShape::kMaxSmallSize is 6; 5 keeps every nest within what TFLM tests


def _prod(dims) -> int:
    return int(np.prod(dims, dtype=np.int64))


def _axis(op: Op, value: int, rank: int) -> int:
    axis = value + rank if value < 0 else value
    if not 0 <= axis < rank:
        raise op_error(op, f"axis {value} is out of range for a {rank}-D tensor")
    return axis


class _Rearrange(_Movement):
    """Checks shared by these ops: every data tensor of one element type TFLM's kernel copies."""

    dtypes: ClassVar[tuple[str, ...]] = ("int8", "int16")

    def check_dtypes(self, op: Op, tensors: list[Tensor]) -> None:
        dtypes = sorted({t.dtype for t in tensors})
        if len(dtypes) != 1 or dtypes[0] not in self.dtypes:
            raise op_error(op, f"{'/'.join(dtypes)} tensors; mtk supports {' or '.join(self.dtypes)} here")
        for t in tensors:
            if len(t.shape) > _MAX_RANK or t.size == 0:
                raise op_error(op, f"tensor '{t.name}' of shape {list(t.shape)}: 1-D to {_MAX_RANK}-D, non-empty")


def _split_nests(op: Op, x: Tensor, outs: list[Tensor], axis: int, first_output: int) -> list[Nest]:
    """SplitImpl: for each outer index, each output's block in turn, read from consecutive input."""
    if any(len(y.shape) != len(x.shape) or any(a != b for d, (a, b) in enumerate(zip(x.shape, y.shape)) if d != axis)
           for y in outs) or sum(y.shape[axis] for y in outs) != x.shape[axis]:
        raise op_error(op, f"outputs {[list(y.shape) for y in outs]} do not split input {list(x.shape)} "
                           f"along axis {axis}")
    outer, inner = _prod(x.shape[:axis]), _prod(x.shape[axis + 1:])
    row = x.shape[axis] * inner
    nests, offset = [], 0
    for k, y in enumerate(outs):
        block = y.shape[axis] * inner
        nests.append(Nest((outer, block), first_output + k, 0, (block, 1), 0, offset, (row, 1)))
        offset += block
    return nests


class Split(_Rearrange):
    types = ("SPLIT",)
    kernel_name = "split"

    def plan(self, op: Op, graph: Graph) -> tuple[list[int], list[Nest]]:
        inputs, outs = graph.input_tensors(op), graph.output_tensors(op)
        axis_t, x = inputs
        self.check_dtypes(op, [x, *outs])
        axis = _axis(op, int(const_int32(op, axis_t, "axis")[0]), len(x.shape))
        if len({y.shape for y in outs}) != 1 or x.shape[axis] != outs[0].shape[axis] * len(outs):
            raise op_error(op, f"{len(outs)} outputs {[list(y.shape) for y in outs]} do not split "
                               f"{list(x.shape)} evenly along axis {axis}")
        return [op.inputs[1]], _split_nests(op, x, outs, axis, first_output=1)


class SplitV(_Rearrange):
    types = ("SPLIT_V",)
    kernel_name = "split_v"

    def plan(self, op: Op, graph: Graph) -> tuple[list[int], list[Nest]]:
        inputs, outs = graph.input_tensors(op), graph.output_tensors(op)
        x, _, axis_t = inputs   # TFLM takes the sizes from the output shapes, not from size_splits
        self.check_dtypes(op, [x, *outs])
        axis = _axis(op, int(const_int32(op, axis_t, "axis")[0]), len(x.shape))
        return [op.inputs[0]], _split_nests(op, x, outs, axis, first_output=1)


def _stack_check(op: Op, parts: list[Tensor], whole: Tensor, axis: int, count: int) -> tuple[int, int]:
    """PACK/UNPACK: `whole` is `count` tensors shaped like each of `parts` stacked on `axis`:
    (outer, copy) sizes of PackImpl / UnpackImpl."""
    expected = [*parts[0].shape[:axis], count, *parts[0].shape[axis:]]
    if len(parts) != count or any(p.shape != parts[0].shape for p in parts) or list(whole.shape) != expected:
        raise op_error(op, f"{[list(p.shape) for p in parts]} stacked on axis {axis} are not {list(whole.shape)}")
    return _prod(whole.shape[:axis]), _prod(whole.shape[axis + 1:])


class Pack(_Rearrange):
    types = ("PACK",)
    kernel_name = "pack"

    def plan(self, op: Op, graph: Graph) -> tuple[list[int], list[Nest]]:
        xs, (y,) = graph.input_tensors(op), graph.output_tensors(op)
        if any(x is None for x in xs):
            raise op_error(op, "an input is missing")
        self.check_dtypes(op, [*xs, y])
        axis = _axis(op, int(op.options.get("axis", 0)), len(y.shape))
        n = int(op.options.get("values_count") or len(xs))
        outer, copy = _stack_check(op, xs, y, axis, n)
        return list(op.inputs), [Nest((outer, copy), n, i * copy, (n * copy, 1), i, 0, (copy, 1))
                                 for i in range(n)]


class Unpack(_Rearrange):
    types = ("UNPACK",)
    kernel_name = "unpack"

    def plan(self, op: Op, graph: Graph) -> tuple[list[int], list[Nest]]:
        (x, *_), outs = graph.input_tensors(op), graph.output_tensors(op)
        self.check_dtypes(op, [x, *outs])
        axis = _axis(op, int(op.options.get("axis", 0)), len(x.shape))
        n = int(op.options.get("num") or len(outs))
        outer, copy = _stack_check(op, outs, x, axis, n)
        return [op.inputs[0]], [Nest((outer, copy), 1 + i, 0, (copy, 1), 0, i * copy, (n * copy, 1))
                                for i in range(n)]


class SpaceDepth(_Rearrange):
    """SPACE_TO_DEPTH moves each block_size² patch of pixels into the channels, DEPTH_TO_SPACE back:
    one nest over the output in row-major order, [b, h, dy, w, dx, c] on the spatial side."""

    types = ("SPACE_TO_DEPTH", "DEPTH_TO_SPACE")
    kernel_name = "space_depth"
    dtypes = ("int8",)   # the TFLM kernels take float32 and int8 only

    def plan(self, op: Op, graph: Graph) -> tuple[list[int], list[Nest]]:
        (x, *_), (y,) = graph.input_tensors(op), graph.output_tensors(op)
        self.check_dtypes(op, [x, y])
        bs = int(op.options.get("block_size", 0))
        to_depth = op.type == "SPACE_TO_DEPTH"
        space, depth = (x, y) if to_depth else (y, x)
        if len(space.shape) != 4 or len(depth.shape) != 4 or bs < 1:
            raise op_error(op, f"4-D input and output and a block size ≥ 1 needed "
                               f"({list(x.shape)} -> {list(y.shape)}, block size {bs})")
        b, h, w, c = space.shape
        if h % bs or w % bs or tuple(depth.shape) != (b, h // bs, w // bs, c * bs * bs):
            raise op_error(op, f"{list(x.shape)} -> {list(y.shape)} is not a {op.type} by block size {bs}")
        oh, ow = h // bs, w // bs
        # the same element in both layouts, loops ordered (b, oh, ow, dy, dx, c) ...
        depth_steps = (oh * ow * c * bs * bs, ow * c * bs * bs, c * bs * bs, bs * c, c, 1)
        space_steps = (h * w * c, bs * w * c, bs * c, w * c, c, 1)
        extents = (b, oh, ow, bs, bs, c)
        if not to_depth:   # ... and (b, oh, dy, ow, dx, c) when the output is the spatial side
            order = (0, 1, 3, 2, 4, 5)
            extents = tuple(extents[k] for k in order)
            depth_steps, space_steps = (tuple(s[k] for k in order) for s in (depth_steps, space_steps))
        dst_steps, src_steps = (depth_steps, space_steps) if to_depth else (space_steps, depth_steps)
        return [op.inputs[0]], [Nest(extents, 1, 0, dst_steps, 0, 0, src_steps)]


OPS = [Split(), SplitV(), Pack(), Unpack(), SpaceDepth()]
