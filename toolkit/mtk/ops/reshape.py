"""RESHAPE, SQUEEZE, EXPAND_DIMS: same bytes, new shape. No kernel: the output aliases the input."""

from __future__ import annotations

from ..errors import ModelError
from ..graph import Graph, Op
from ..target import Cpu
from .base import Lowered, OpDef, io


class Reshape(OpDef):
    types = ("RESHAPE", "SQUEEZE", "EXPAND_DIMS")

    def check(self, op: Op, graph: Graph) -> None:
        (x, *_), y = io(op, graph)
        if x.size != y.size or x.dtype != y.dtype:
            raise ModelError(f"op {op.index} ({op.type}): {x.dtype}{list(x.shape)} cannot become {y.dtype}{list(y.shape)}")
        if x.quant and y.quant and (x.quant.s != y.quant.s or x.quant.zp != y.quant.zp):
            raise ModelError(f"op {op.index} ({op.type}): input and output quantization differ")

    def lower(self, op: Op, graph: Graph, cpu: Cpu) -> Lowered:
        return Lowered(alias_of=op.inputs[0])


OPS = [Reshape()]
