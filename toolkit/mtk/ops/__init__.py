"""Op families, one module each. Each module lists its definitions (OpDef, base.py) in OPS."""

from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache

from ..errors import ModelError
from ..graph import Graph, Op
from ..target import Cpu
from .base import OpData, OpDef
from .common import at_op


@lru_cache(maxsize=None)
def registry() -> dict[str, OpDef]:
    table: dict[str, OpDef] = {}
    for info in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{info.name}")
        for opdef in getattr(module, "OPS", []):
            for op_type in opdef.types:
                table[op_type] = opdef
    return table


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
