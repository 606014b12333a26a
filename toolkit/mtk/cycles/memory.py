"""A board's memory timing for the cycle model (boards.yaml `memory_timing`): the wait states of its
flash and RAM at the board's clock, and the flash accelerator or caches in front of them.

An estimate: each access to a region costs its wait states (one line fill) unless the modelled cache
holds its line (code fetches: the fetch cache, loads: the data cache, or both through one shared cache
such as the RP2040/RP2350 XIP cache or the STM32U5's ICACHE; least recently used lines replaced) or, with
prefetch, it is the line after the last one fetched: read while the core ran that one, it waits only for
the rest of its read. A region with `sequential_wait_states` charges that instead for a fill of the line
right after its last fill, fetch or load (a QSPI controller that extends its burst, as RP2350's QMI
within its cooldown). Code copied into a board's code RAM (boards.yaml `code_ram`, which --emulate maps outside the
flash's range) is in no region: its fetches wait for nothing and go through no cache. Not modelled: bus contention between fetches and loads, DMA, write buffers filling
up, the flash's own prefetch buffer width beyond one line, a flash's current line buffer serving loads
(without a data cache each load waits), critical-word-first refill (a fill costs the whole line), how
long a QSPI burst stays open, a QSPI controller's own cycles beyond its SCK count, cache misses on stores
(write-through/allocate policies), and any cache the YAML does not list.
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
    prefetch: bool = False          # the next sequential fetch line is read while the core runs the last one
    icache: CacheGeometry | None = None
    dcache: CacheGeometry | None = None
    source: str = ""                # the datasheet/reference manual figure
    cache: CacheGeometry | None = None          # one cache for code fetches and loads (instead of icache/dcache)
    sequential_wait_states: int | None = None   # a fill of the line after the region's last fill; None: wait_states

    @property
    def load_cache(self) -> CacheGeometry | None:
        """The cache in front of loads (constants): the data cache or the shared one."""
        return self.dcache or self.cache

    @property
    def fetch_cache(self) -> CacheGeometry | None:
        """The cache in front of code fetches: the instruction cache or the shared one."""
        return self.icache or self.cache

    def fill_waits(self) -> tuple[int, int]:
        """(wait states of a fill, of a fill of the line after the last one)."""
        sequential = self.wait_states if self.sequential_wait_states is None else self.sequential_wait_states
        return self.wait_states, sequential


def _cache(entry: dict[str, Any] | None) -> CacheGeometry | None:
    if entry is None:
        return None
    geometry = CacheGeometry(int(entry["bytes"]), int(entry["line"]), int(entry["ways"]))
    line_ok = geometry.line > 0 and geometry.line & (geometry.line - 1) == 0
    if not line_ok or geometry.ways < 1 or geometry.bytes < geometry.line * geometry.ways:
        raise ValueError(f"cache {entry} is not bytes/line/ways with a power-of-two line")
    return geometry


def _timing_from_yaml(role: str, e: dict[str, Any]) -> MemoryTiming:
    sequential = e.get("sequential_wait_states")
    return MemoryTiming(role, int(e["wait_states"]), bool(e.get("prefetch", False)), _cache(e.get("icache")),
                        _cache(e.get("dcache")), str(e.get("source", "")), _cache(e.get("cache")),
                        None if sequential is None else int(sequential))


def memory_timing_from_yaml(entry: dict[str, Any] | None) -> tuple[MemoryTiming, ...]:
    """boards.yaml's `memory_timing: {flash: {...}, ram: {...}}`; () when absent (zero-wait memory)."""
    if not entry:
        return ()
    unknown = set(entry) - set(ROLES)
    if unknown:
        raise ValueError(f"memory_timing roles {sorted(unknown)} are not among {ROLES}")
    timing = tuple(_timing_from_yaml(role, e) for role, e in entry.items())
    if any(t.cache for t in timing) and any(t.icache or t.dcache for t in timing):
        raise ValueError("memory_timing: a shared `cache` and an icache/dcache are exclusive")
    return timing


def plugin_lines(timing: tuple[MemoryTiming, ...], ranges: dict[str, list[tuple[int, int]]]) -> list[str]:
    """The plugin's `region`, `icache`, `dcache`, `cache` and `param prefetch` lines: each role's timing over
    the address ranges the firmware puts that role in (`ranges`: role -> [(base, size)]). A region line
    carries its sequential fill's wait states only when they differ from a fill's."""
    lines = []
    caches = {kind: next((getattr(t, kind) for t in timing if getattr(t, kind)), None)
              for kind in ("icache", "dcache", "cache")}
    for t in timing:
        waits, sequential = t.fill_waits()
        fetches, loads = t.icache or t.cache, t.dcache or t.cache
        for base, size in ranges.get(t.role, []):
            lines.append(f"region {base:#x} {base + size:#x} {waits} {int(fetches is not None)} "
                         f"{int(loads is not None)}" + (f" {sequential}" if sequential != waits else ""))
    lines += [f"{kind} {geometry.text()}" for kind, geometry in caches.items() if geometry]
    if any(t.prefetch for t in timing):
        lines.append("param prefetch 1")
    return lines
