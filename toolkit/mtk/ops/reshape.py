"""RESHAPE, SQUEEZE, EXPAND_DIMS: same bytes, new shape. No kernel: the output aliases the input."""

from __future__ import annotations

from ..graph import Graph, Op
from ..target import Cpu
from .base import Lowered, OpData, OpDef, io
from .common import op_error


class Reshape(OpDef):
    types = ("RESHAPE", "SQUEEZE", "EXPAND_DIMS")

    def prepare(self, op: Op, graph: Graph, cpu: Cpu) -> OpData:
        (x, *_), y = io(op, graph)
        if x.size != y.size or x.dtype != y.dtype:
            raise op_error(op, f"{x.dtype}{list(x.shape)} cannot become {y.dtype}{list(y.shape)}")
        if x.quant and y.quant and (x.quant.s != y.quant.s or x.quant.zp != y.quant.zp):
            raise op_error(op, "input and output quantization differ")
        return OpData.of(op, graph, cpu)

    def lower(self, data: OpData, variant=None) -> Lowered:
        return Lowered(alias_of=data.op.inputs[0])


OPS = [Reshape()]
