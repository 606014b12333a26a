"""A layer's variant (one type for every family), and the lowerings of the depthwise and pooling kernels of
kernels/table.py: an op module binds each of its family's kernel ids to a lowering (KernelChoice: the id, the
lowering, the layers it takes), its OpDef's `variants` and `lower` read them in the table's order for the core's
instruction set, `mtk tune` measures every variant a layer takes, and tuning files and metadata.json hold the chosen
one as {"kernel": id}.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from ..kernels.table import ORDER, Family
from ..target import Isa
from .base import Kernel, Lowered, OpData


@dataclass(frozen=True)
class Variant:
    """How a layer runs: the id of its kernel in kernels/table.py ("2x2/int16" for a GEMM, "dsp-c4" for a depthwise
    layer), what tuning files and
    metadata.json hold as its "schedule"; and, for a GEMM packing a chunk of a row at a time with partial sums
    (the compiler's choice where the whole row's scratch would raise the arena: OpDef.chunked, not a tuning
    one), the chunk's k values (0: whole rows); `lean`: the kernel's form in less scratch for more cycles, which
    OpDef.leaner picks under a RAM limit (2x4/fused: a row pair a call; dsp-few: its stream read from flash, not
    copied to RAM)."""

    kernel: str
    chunk: int = 0
    lean: bool = False

    @property
    def label(self) -> str:
        return self.kernel

    def to_json(self) -> dict[str, str | int]:
        return {"kernel": self.kernel, **({"chunk": self.chunk} if self.chunk else {}),
                **({"lean": True} if self.lean else {})}

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


class VariantTable:
    """An op family's kernels on each instruction set (kernels/table.ORDER), the default first."""

    def __init__(self, family: Family, choices: tuple[KernelChoice, ...]):
        by_id = {c.name: c for c in choices}
        self.by_isa: dict[Isa, tuple[KernelChoice, ...]] = {
            isa: tuple(by_id[kernel_id] for kernel_id in ids) for isa, ids in ORDER[family].items()}

    def choices(self, data: OpData) -> list[KernelChoice]:
        return [c for c in self.by_isa[data.cpu.isa] if c.takes(data)]

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
            choice = next(c for c in self.by_isa[data.cpu.isa] if c.name == variant.kernel)
        return Lowered([choice.lower(data)], variant=Variant(choice.name))
