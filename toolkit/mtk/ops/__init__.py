"""Op families, one module each. Each module lists its definitions in OPS."""

from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache

from .base import OpDef


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
