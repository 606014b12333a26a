"""A board's memory timing for the cycle model (boards.yaml `memory_timing`): the wait states of its
flash and RAM at the board's clock, and the flash accelerator or caches in front of them.

An estimate: each access to a region costs its wait states unless the modelled cache holds its line
(code fetches: the fetch cache, loads: the data cache; least recently used lines replaced) or, with
prefetch, it is the line after the last one fetched. Not modelled: bus contention between fetches
and loads, DMA, write buffers filling up, the flash's own prefetch buffer width beyond one line,
cache misses on stores (write-through/allocate policies), and any cache the YAML does not list.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

ROLES = ("flash", "ram")   # flash: where code and constants are linked; ram: data, arena, stack


@dataclass(frozen=True)
class CacheGeometry:
    bytes: int
    line: int
    ways: int

    def text(self) -> str:
        return f"{self.bytes} {self.line} {self.ways}"


@dataclass(frozen=True)
class MemoryTiming:
    role: str                       # one of ROLES
    wait_states: int                # cycles an access (a line fill) waits at the board's clock
    prefetch: bool = False          # the next sequential fetch line comes free
    icache: CacheGeometry | None = None
    dcache: CacheGeometry | None = None
    source: str = ""                # the datasheet/reference manual figure


def _cache(entry: dict[str, Any] | None) -> CacheGeometry | None:
    if entry is None:
        return None
    geometry = CacheGeometry(int(entry["bytes"]), int(entry["line"]), int(entry["ways"]))
    line_ok = geometry.line > 0 and geometry.line & (geometry.line - 1) == 0
    if not line_ok or geometry.ways < 1 or geometry.bytes < geometry.line * geometry.ways:
        raise ValueError(f"cache {entry} is not bytes/line/ways with a power-of-two line")
    return geometry


def memory_timing_from_yaml(entry: dict[str, Any] | None) -> tuple[MemoryTiming, ...]:
    """boards.yaml's `memory_timing: {flash: {...}, ram: {...}}`; () when absent (zero-wait memory)."""
    if not entry:
        return ()
    unknown = set(entry) - set(ROLES)
    if unknown:
        raise ValueError(f"memory_timing roles {sorted(unknown)} are not among {ROLES}")
    return tuple(MemoryTiming(role, int(e["wait_states"]), bool(e.get("prefetch", False)), _cache(e.get("icache")),
                              _cache(e.get("dcache")), str(e.get("source", "")))
                 for role, e in entry.items())


def plugin_lines(timing: tuple[MemoryTiming, ...], ranges: dict[str, list[tuple[int, int]]]) -> list[str]:
    """The plugin's `region`, `icache`, `dcache` and `param prefetch` lines: each role's timing over the
    address ranges the firmware puts that role in (`ranges`: role -> [(base, size)])."""
    lines = []
    icache = next((t.icache for t in timing if t.icache), None)
    dcache = next((t.dcache for t in timing if t.dcache), None)
    for t in timing:
        for base, size in ranges.get(t.role, []):
            lines.append(f"region {base:#x} {base + size:#x} {t.wait_states} {int(t.icache is not None)} "
                         f"{int(t.dcache is not None)}")
    if icache:
        lines.append(f"icache {icache.text()}")
    if dcache:
        lines.append(f"dcache {dcache.text()}")
    if any(t.prefetch for t in timing):
        lines.append("param prefetch 1")
    return lines
