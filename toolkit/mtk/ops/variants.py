"""A layer's variant (one type for every family), and the kernel variants of op families other than the GEMM
(depthwise, pooling) as data: per family a table of the kernels it has on each instruction set, the default
first (what microkernels.CHOICES is for the GEMM). An op module lists its kernels (KernelChoice: a name, the
lowering, the layers it takes), its OpDef's `variants` and `lower` read the table, `mtk tune` measures every
variant a layer takes, and tuning files and metadata.json hold the chosen one as {"kernel": name}.

To add a variant: write its lowering `(OpData) -> Kernel` in the op module, make a KernelChoice of it
(`takes`: the layers it can compute, when not all), and put it in the family's table for the
instruction sets it has code for; the first choice that takes a layer is its default.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from .base import Kernel, Lowered, OpData
from .microkernels import isa_of


@dataclass(frozen=True)
class Variant:
    """How a layer runs: the id of its kernel in its family's table (a GEMM's micro-kernel label, "2x2/int16":
    microkernels.py; a depthwise or pooling kernel's name in the family's VariantTable), what tuning files and
    metadata.json hold as its "schedule"; and, for a GEMM packing a chunk of a row at a time with partial sums
    (the compiler's choice where the whole row's scratch would raise the arena: OpDef.chunked, not a tuning
    one), the chunk's k values (0: whole rows)."""

    kernel: str
    chunk: int = 0

    @property
    def label(self) -> str:
        return self.kernel

    def to_json(self) -> dict[str, str | int]:
        return {"kernel": self.kernel, **({"chunk": self.chunk} if self.chunk else {})}

    @classmethod
    def from_json(cls, schedule: Any) -> Variant | None:
        """The variant a tuning file's "schedule" names: {"kernel": id}, or as files of older mtk versions hold
        a GEMM's, {"block": "2x2", "weights": "int16"}; None if it names none."""
        if not isinstance(schedule, dict) or not all(isinstance(v, str) for v in schedule.values()):
            return None
        if set(schedule) == {"kernel"}:
            return cls(schedule["kernel"])
        if set(schedule) == {"block", "weights"}:
            return cls(f"{schedule['block']}/{schedule['weights']}")
        return None


def _every_layer(data: OpData) -> bool:
    return True


@dataclass(frozen=True)
class KernelChoice:
    name: str
    lower: Callable[[OpData], Kernel]
    takes: Callable[[OpData], bool] = _every_layer


@dataclass(frozen=True)
class VariantTable:
    """An op family's kernels by instruction set (microkernels.isa_of), the default first."""

    by_isa: dict[str, tuple[KernelChoice, ...]]

    def choices(self, data: OpData) -> list[KernelChoice]:
        return [c for c in self.by_isa[isa_of(data.cpu)] if c.takes(data)]

    def variants(self, data: OpData) -> list[Variant]:
        """The variants the layer takes, the default first."""
        return [Variant(c.name) for c in self.choices(data)]

    def lower(self, data: OpData, variant: Variant | None = None) -> Lowered:
        """The layer's kernel as `variant` (one of `variants`, checked by tuning.Tuning; None: the default)
        computes it. Found by name among the instruction set's, so a band of a tiled layer (codegen/tiling.py)
        lowers as the whole layer does."""
        if variant is None:
            choice = self.choices(data)[0]
        else:
            choice = next(c for c in self.by_isa[isa_of(data.cpu)] if c.name == variant.kernel)
        return Lowered([choice.lower(data)], variant=Variant(choice.name))
