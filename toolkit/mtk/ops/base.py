"""What an op family provides: checks, prepared parameters (host side) and kernels (TE/TIR or C).

Mirrors TFLM's split: `prepare` computes everything that does not depend on the input
values (multipliers, shifts, activation ranges, folded biases, tables); `lower` turns that
into one or more kernels the code generator emits and the run function calls in order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Union

import numpy as np

from ..graph import Graph, Op, Tensor
from ..target import Cpu

@dataclass(frozen=True)
class Const:
    """A constant array a kernel needs beyond the model's own tensors (prepared weights, tables)."""

    name: str
    data: np.ndarray


@dataclass(frozen=True)
class Scratch:
    """Working memory a kernel needs while it runs; the memory planner places it in the arena."""

    nbytes: int


Operand = Union[int, Const, Scratch]   # int: index of a graph tensor


@dataclass
class Kernel:
    """One call in the generated run function.

    `func` is a TIR PrimFunc whose buffer parameters match `args` in order; or `c_source` is
    a hand-written C function named `c_name` taking pointers in the order of `args`.
    `headers` names C helper headers in mtk/ops/c/ the kernel calls into (extern calls).
    """

    name: str
    args: list[Operand]
    func: Any = None
    c_source: str | None = None
    c_name: str | None = None
    headers: tuple[str, ...] = ()

    @property
    def impl(self) -> str:
        return "tvm" if self.func is not None else "c"


@dataclass
class Lowered:
    kernels: list[Kernel] = field(default_factory=list)
    alias_of: int | None = None   # output shares this input tensor's memory (no copy)


class OpDef:
    """An op family. Subclasses set `types` and implement the methods below."""

    types: ClassVar[tuple[str, ...]] = ()

    def check(self, op: Op, graph: Graph) -> None:
        """Raise ModelError for configurations mtk does not support."""

    def macs(self, op: Op, graph: Graph) -> int:
        return 0

    def lower(self, op: Op, graph: Graph, cpu: Cpu) -> Lowered:
        raise NotImplementedError


def io(op: Op, graph: Graph) -> tuple[list[Tensor | None], Tensor]:
    """The op's input tensors and its (single) output tensor."""
    return graph.input_tensors(op), graph.tensors[op.outputs[0]]


def constant_kernel(op: Op, y: Tensor, value: int) -> Kernel:
    """The output does not depend on the inputs (a fused activation range of one value, or a zero
    multiplier): TVM would fold the inputs away and leave unused parameters (-Wunused-parameter),
    so a small C kernel fills the output instead."""
    inputs = [i for i in op.inputs if i is not None]
    name = f"fill_i8_{len(inputs)}_{y.size}_{'m' if value < 0 else ''}{abs(value)}"
    params = ", ".join([f"void* in{k}" for k in range(len(inputs))] + ["void* out"])
    unused = " ".join(f"(void)in{k};" for k in range(len(inputs)))
    src = (f"int32_t {name}({params}) {{\n"
           f"  {unused}\n"
           f"  for (size_t i = 0; i < {y.size}u; ++i) ((int8_t*)out)[i] = (int8_t)({value});\n"
           "  return 0;\n}\n")
    return Kernel("fill", [*inputs, op.outputs[0]], c_source=src, c_name=name)
