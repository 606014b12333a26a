"""Static memory plan: every intermediate buffer gets a fixed offset in one arena.

Buffers are placed greedily by size (largest first) at the lowest aligned offset that does
not overlap a placed buffer whose lifetime intersects; the arena is then the highest end.
The lower bound is the largest total of buffers live at one step: no plan can beat it.
"""

from __future__ import annotations

from dataclasses import dataclass

ALIGNMENT = 16


@dataclass
class Buffer:
    name: str
    nbytes: int
    first_use: int      # step (op position) that writes it first
    last_use: int       # last step that reads it
    offset: int = -1

    def overlaps_in_time(self, other: "Buffer") -> bool:
        return self.first_use <= other.last_use and other.first_use <= self.last_use


@dataclass
class MemoryPlan:
    buffers: list[Buffer]
    arena_bytes: int
    lower_bound_bytes: int


def align(n: int, alignment: int = ALIGNMENT) -> int:
    return (n + alignment - 1) // alignment * alignment


def plan_memory(buffers: list[Buffer]) -> MemoryPlan:
    placed: list[Buffer] = []
    for buf in sorted(buffers, key=lambda b: (-b.nbytes, b.first_use, b.name)):
        conflicts = sorted((b for b in placed if b.overlaps_in_time(buf)), key=lambda b: b.offset)
        offset = 0
        for other in conflicts:
            if offset + buf.nbytes <= other.offset:
                break
            offset = max(offset, align(other.offset + other.nbytes))
        buf.offset = offset
        placed.append(buf)
    arena = align(max((b.offset + b.nbytes for b in buffers), default=0))
    steps = {s for b in buffers for s in (b.first_use, b.last_use)}
    lower = max((sum(align(b.nbytes) for b in buffers if b.first_use <= s <= b.last_use) for s in steps), default=0)
    return MemoryPlan(buffers, arena, lower)
