"""A C function's signature as data: the generated C declares each hand-written function from it (so gcc checks
the header's definition and every call against the same types), and the lowering passes its arguments by name."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any


TIR_TYPES = {"int32_t": "int32", "void": "void"}


@dataclass(frozen=True)
class Param:
    c_type: str     # "int8_t*", "const void*", "int32_t"
    name: str


@dataclass(frozen=True)
class CFunction:
    name: str
    params: tuple[Param, ...]
    returns: str = "int32_t"

    @classmethod
    def of(cls, name: str, params: str, returns: str = "int32_t") -> CFunction:
        """From its C parameter list: "const void* x, int32_t k"."""
        parsed = []
        for decl in params.split(","):
            c_type, param = re.fullmatch(r"\s*(.*?[\s*])(\w+)\s*", decl).groups()
            parsed.append(Param(re.sub(r"\s*\*", "*", c_type.strip()), param))
        return cls(name, tuple(parsed), returns)

    def renamed(self, name: str) -> CFunction:
        return CFunction(name, self.params, self.returns)

    @property
    def tir_returns(self) -> str:
        """Its return type as TIR names it."""
        return TIR_TYPES[self.returns]

    @property
    def head(self) -> str:
        """`returns name(params)`: a prototype without its semicolon, or a definition's first line."""
        return f"{self.returns} {self.name}({', '.join(f'{p.c_type} {p.name}' for p in self.params)})"

    @property
    def prototype(self) -> str:
        return self.head + ";"

    def ordered(self, **args: Any) -> list[Any]:
        """`args`, given by parameter name (each parameter exactly once), in the parameters' order."""
        names = [p.name for p in self.params]
        if set(args) != set(names):
            raise TypeError(f"{self.name}({', '.join(names)}) called with ({', '.join(args)})")
        return [args[n] for n in names]
