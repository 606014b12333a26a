"""What a run of a model on a target gives back: timings, outputs, sizes, and where it ran."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .boards import Board
from .compiled import RamConstants
from .cycles.estimate import Estimate
from .elfsize import ElfSizes
from .graph import Graph
from .lab import target_name
from .samples import Sample
from .transport.protocol import CycleStats


@dataclass(frozen=True)
class LayerTime:
    index: int
    type: str
    units: int
    macs: int
    tiled: bool = False   # in a tiled stage, whose units its first op reports (codegen/tiling.py)
    code_bytes: int | None = None   # the code its layer's kernels take as if alone (compiled.CompiledOp)
    variant: str | None = None      # a tunable layer's: the label of the variant it took (compiled.CompiledOp)


@dataclass
class RunResult:
    board: Board
    model: str
    unit: str                          # "instructions" (QEMU) or "cycles"
    per_inference: CycleStats
    macs: int
    arena_bytes: int
    constant_bytes: int
    sizes: ElfSizes
    inputs: list[Sample]               # the samples sent, as the int8 model takes them
    outputs: list[Sample]              # per input sample, the model's outputs
    int8_model: bytes                  # the model compiled (quantized on the way if it was float)
    layers: list[LayerTime] | None = None   # the first sample's
    platform: str = "baremetal"
    tuning: str | None = None          # the tuning file the kernels' variants came from
    float_model: Path | None = None    # the float model quantized on the way into int8_model, if it was
    place: str | None = None           # the labgrid place it ran on (`mtk bench --lab labgrid`)
    host: str | None = None            # the exporter serving that place
    sample_layers: list[list[int]] | None = None   # per input sample, units per op (profiling builds)
    estimate: Estimate | None = None   # the cycle model's (QEMU runs)
    profiling: RunResult | None = None  # the profiling build's run, when `layers` come from one beside this plain build
    graph: Graph | None = None         # int8_model, as read to compile it (evaluation reads its tensors)
    stack_used_bytes: int | None = None   # the firmware's main stack high-water mark, where it can tell
    constants_in_ram: tuple[RamConstants, ...] = ()   # --weights-in-ram: by region, where the board's build copies them

    @property
    def target_name(self) -> str:
        """The board, or for a lab's place `place (board)`: what reports tell results apart by."""
        return target_name(self.board.name, self.place)

    @property
    def code_bytes(self) -> int:
        """Flash minus the model's constants: the firmware's and the kernels' code."""
        return self.sizes.flash_bytes - self.constant_bytes

    @property
    def time_ms(self) -> float:
        """Median time per inference at the board's clock (one instruction a cycle under QEMU)."""
        return self.per_inference.median / self.board.clock_hz * 1e3

    def to_json(self) -> dict[str, Any]:
        return {
            **({"place": self.place, "host": self.host} if self.place is not None else {}),
            "board": self.board.name, "cpu": self.board.cpu.name, "platform": self.platform, "model": self.model,
            "tuning": self.tuning, "unit": self.unit,
            "per_inference": {"min": self.per_inference.min, "median": self.per_inference.median,
                              "max": self.per_inference.max, "runs": self.per_inference.count},
            "time_ms_at_clock": round(self.time_ms, 4), "clock_hz": self.board.clock_hz,
            "macs": self.macs, "macs_per_unit": round(self.macs / max(self.per_inference.median, 1), 4),
            "arena_bytes": self.arena_bytes, "ram_bytes": self.sizes.ram_bytes,
            "code_ram_bytes": self.sizes.code_ram_bytes,
            "stack_bytes": self.sizes.stack_bytes, "stack_used_bytes": self.stack_used_bytes,
            "flash_bytes": self.sizes.flash_bytes, "constant_bytes": self.constant_bytes,
            "constants_in_ram": [r.summary() for r in self.constants_in_ram],
            "code_bytes": self.code_bytes,
            "outputs": [sample[0].reshape(-1).astype(int).tolist() for sample in self.outputs],
            "layers": None if self.layers is None else [
                {"index": layer.index, "type": layer.type, "units": layer.units, "macs": layer.macs}
                for layer in self.layers],
            "estimated_cycles": self.estimate.to_json() if self.estimate else None,
            **({"profiling_build": {"per_inference_median": self.profiling.per_inference.median,
                                    "flash_bytes": self.profiling.sizes.flash_bytes}} if self.profiling else {}),
        }
