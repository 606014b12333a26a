"""The cycle model's figures for one run: estimated cycles per inference (and per layer) at a board's
clock and memory, next to the exact instruction count QEMU gives, and how many of those cycles code fetches
and loads waited for their memory."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..transport.protocol import CycleStats
from .model import UNIT, CycleTrace, Measured, median


@dataclass(frozen=True)
class MemoryWaits:
    """Cycles code fetches (`fetch`) and loads (`data`) waited for their memory: flash or QSPI wait states, cache
    misses, what of a prefetched read the core did not cover."""
    fetch: int = 0
    data: int = 0

    @classmethod
    def of(cls, measured: Measured) -> MemoryWaits:
        return cls(measured.fetch_waits, measured.data_waits)

    @property
    def total(self) -> int:
        return self.fetch + self.data

    def to_json(self) -> dict[str, int]:
        return {"fetch": self.fetch, "data": self.data}


@dataclass(frozen=True)
class Estimate:
    board: str                  # the board whose core, clock and memory the estimate is for
    core: str                   # the cost table's core
    clock_hz: int
    per_inference: CycleStats   # estimated cycles
    instructions: int           # the plugin's exact instruction count of the median inference's run function
    layers: dict[int, int] | None = None   # op index -> estimated cycles (profiling builds), the first sample's
    sample_layers: tuple[dict[int, int], ...] = ()   # the same for each input sample
    emulated_on: str | None = None         # the QEMU board that ran the code, when another board is estimated
    memory_waits: MemoryWaits = MemoryWaits()   # of the median inference's cycles
    layer_memory_waits: dict[int, MemoryWaits] | None = None   # of `layers`' cycles

    @property
    def time_ms(self) -> float:
        return self.per_inference.median / self.clock_hz * 1e3

    def label(self) -> str:
        where = f"{self.board}, emulated on {self.emulated_on}" if self.emulated_on else self.board
        return f"estimate for {where} ({self.core} table)"

    def line(self) -> str:
        """`mtk run`'s line: median estimated cycles and time at the estimated board's clock."""
        s = self.per_inference
        return (f"{s.median:,} cycles median (min {s.min:,}, max {s.max:,}), {self.time_ms:.3f} ms at "
                f"{self.clock_hz / 1e6:g} MHz: {self.label()}")

    def to_json(self) -> dict[str, Any]:
        s = self.per_inference
        return {"unit": UNIT, "board": self.board, "core": self.core, "clock_hz": self.clock_hz,
                "emulated_on": self.emulated_on, "min": s.min, "median": s.median, "max": s.max, "runs": s.count,
                "time_ms_at_clock": round(self.time_ms, 4),
                "instructions_of_run": {"unit": "instructions", "value": self.instructions},
                "memory_wait_cycles": self.memory_waits.to_json(),
                "layers": None if self.layers is None else
                [{"index": i, "cycles": c, "memory_wait_cycles": self.layer_memory_waits[i].to_json()}
                 for i, c in sorted(self.layers.items())]}


def estimate_of(trace: CycleTrace, measured: list[Measured], sample_layers: list[dict[int, Measured]] | None,
                emulated_on: str | None, timed_layers: dict[int, Measured] | None = None) -> Estimate | None:
    """The estimate from the inferences `measured` (one `mtk-stats` run), each sample's layers and the layers
    of the last timed inference (its `layers`: those of the runs whose total it gives; else the first sample's)."""
    if not measured:
        return None
    cycles = [m.cycles for m in measured]
    mid = median(cycles)
    model = trace.model
    median_run = min(measured, key=lambda m: abs(m.cycles - mid))
    layers = timed_layers or (sample_layers[0] if sample_layers else None)
    return Estimate(model.label, model.table.name, model.clock_hz,
                    CycleStats(len(cycles), min(cycles), mid, max(cycles)), median_run.insns,
                    None if layers is None else {i: m.cycles for i, m in layers.items()},
                    tuple({i: m.cycles for i, m in sample.items()} for sample in sample_layers or []), emulated_on,
                    MemoryWaits.of(median_run),
                    None if layers is None else {i: MemoryWaits.of(m) for i, m in layers.items()})
