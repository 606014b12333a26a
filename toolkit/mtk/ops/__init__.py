"""Op families, one module each. Each module lists its definitions (OpDef, base.py) in OPS."""

from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache
from typing import Any

from ..errors import ModelError
from ..graph import Graph, Op
from ..target import Cpu
from .base import Axis, Band, Lowered, OpData, OpDef, Rows
from .common import at_op


class ByInputType(OpDef):
    """An op type several families compute, each for the element types of the first input it declares
    (OpDef.input_dtypes); `default` (None: no family) for the others."""

    def __init__(self, default: OpDef | None, by_dtype: dict[str, OpDef]) -> None:
        self.default, self.by_dtype = default, by_dtype

    def family(self, dtype: str) -> OpDef | None:
        return self.by_dtype.get(dtype, self.default)

    def _of(self, data: OpData) -> OpDef:
        return self.family(data.inputs[0].dtype)

    def prepare(self, op: Op, graph: Graph, cpu: Cpu) -> OpData:
        dtype = graph.tensors[op.inputs[0]].dtype
        opdef = self.family(dtype)
        if opdef is None:
            raise ModelError(at_op(op, f"{op.type} of {dtype}; mtk computes it for {', '.join(self.by_dtype)}"))
        return opdef.prepare(op, graph, cpu)

    def macs(self, data: OpData) -> int:
        return self._of(data).macs(data)

    def variants(self, data: OpData) -> list[Any]:
        return self._of(data).variants(data)

    def weight_bytes(self, data: OpData, variant: Any) -> int:
        return self._of(data).weight_bytes(data, variant)

    def lower(self, data: OpData, variant: Any = None) -> Lowered:
        return self._of(data).lower(data, variant)

    def axis_map(self, data: OpData, axis: Axis) -> Rows | None:
        return self._of(data).axis_map(data, axis)

    def band_params(self, data: OpData, band: Band) -> Any:
        return self._of(data).band_params(data, band)

    def chunked(self, data: OpData, variant: Any) -> Any:
        return self._of(data).chunked(data, variant)

    def leaner(self, data: OpData, variant: Any) -> Any:
        return self._of(data).leaner(data, variant)

    def constant_passes(self, data: OpData, variant: Any) -> int:
        return self._of(data).constant_passes(data, variant)

    def band_row_block(self, data: OpData, variant: Any) -> int:
        return self._of(data).band_row_block(data, variant)


@lru_cache(maxsize=None)
def registry() -> dict[str, OpDef]:
    families: dict[str, list[OpDef]] = {}
    for info in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{info.name}")
        for opdef in getattr(module, "OPS", []):
            for op_type in opdef.types:
                families.setdefault(op_type, []).append(opdef)
    table: dict[str, OpDef] = {}
    for op_type, defs in families.items():
        special = [d for d in defs if d.input_dtypes]
        if not special:
            table[op_type] = defs[-1]
            continue
        default = next((d for d in defs if not d.input_dtypes), None)
        table[op_type] = ByInputType(default, {dtype: d for d in special for dtype in d.input_dtypes})
    return table


def computes(op_type: str, dtype: str) -> bool:
    """Whether a family of its own computes `op_type` on a first input of `dtype` (float32 MUL, say)."""
    opdef = op_def(op_type)
    return isinstance(opdef, ByInputType) and dtype in opdef.by_dtype


def op_def(op_type: str) -> OpDef | None:
    return registry().get(op_type)


def prepare_ops(graph: Graph, cpu: Cpu) -> list[OpData]:
    """Every op prepared (base.OpDef.prepare), in order; one ModelError listing every op mtk cannot compile."""
    prepared, problems, unknown_type = [], [], False
    for op in graph.ops:
        opdef = op_def(op.type)
        if opdef is None:
            problems.append(f"op {op.index}: {op.type} ({op_dtypes(op, graph)}) is not supported")
            unknown_type = True
            continue
        try:
            prepared.append(opdef.prepare(op, graph, cpu))
        except ModelError as err:
            problems.append(at_op(op, err.message))
    if problems:
        where = graph.source or graph.name
        hint = "supported ops: " + ", ".join(sorted(registry())) if unknown_type else None
        if len(problems) == 1:
            raise ModelError(f"{where}: {problems[0]}", hint=hint)
        raise ModelError(f"{where}: {len(problems)} unsupported ops:\n    " + "\n    ".join(problems), hint=hint)
    return prepared


def op_dtypes(op: Op, graph: Graph) -> str:
    """The element types an op computes on, as an error message names them: 'int16', 'int8 -> int32'."""
    def names(indices) -> list[str]:
        tensors = [graph.tensors[i] for i in indices if i is not None]
        return list(dict.fromkeys(t.dtype for t in tensors if not t.is_constant)) or \
            list(dict.fromkeys(t.dtype for t in tensors))
    ins, outs = names(op.inputs), names(op.outputs)
    return "/".join(ins) if ins == outs or not ins else f"{'/'.join(ins)} -> {'/'.join(outs)}"
