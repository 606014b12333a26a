"""Static memory plan: every intermediate buffer gets a fixed offset in one arena.

Buffers are placed greedily, one at a time, at the lowest aligned offset that does not overlap a
placed buffer whose lifetime intersects; the arena is then the highest end. The greedy result
depends on the order: largest first (TFLM's GreedyMemoryPlanner) is tried, then a few other orders
(longest-lived first, largest size × lifetime first, earliest first), and the smallest arena is kept
(digits CNN: 896 B largest first, 800 B by size × lifetime: the lower bound).
The lower bound is the largest total of buffers live at one step: no plan can beat it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

ALIGNMENT = 16


@dataclass
class Buffer:
    name: str
    nbytes: int
    first_use: int      # step (op position) that writes it first
    last_use: int       # last step that reads it
    offset: int = -1    # in its pool
    pool: str = ""      # the RAM region whose pool holds it (regions.py); "": the one arena

    def overlaps_in_time(self, other: "Buffer") -> bool:
        return self.first_use <= other.last_use and other.first_use <= self.last_use

    @property
    def steps(self) -> int:
        return self.last_use - self.first_use + 1


@dataclass
class MemoryPlan:
    buffers: list[Buffer]
    arena_bytes: int
    lower_bound_bytes: int


def align(n: int, alignment: int = ALIGNMENT) -> int:
    return (n + alignment - 1) // alignment * alignment


# Orders tried, the first kept on ties (the name breaks remaining ties, so plans are reproducible).
ORDERS: tuple[Callable[[Buffer], tuple], ...] = (
    lambda b: (-b.nbytes, b.first_use, b.name),
    lambda b: (-b.nbytes * b.steps, -b.nbytes, b.first_use, b.name),
    lambda b: (-b.steps, -b.nbytes, b.first_use, b.name),
    lambda b: (b.first_use, -b.nbytes, b.name),
)


def _place(buffers: list[Buffer], order: Callable[[Buffer], tuple]) -> list[int]:
    """The offsets of `buffers` placed greedily in `order`."""
    offsets = [-1] * len(buffers)
    placed: list[int] = []
    for i in sorted(range(len(buffers)), key=lambda i: order(buffers[i])):
        buf = buffers[i]
        offset = 0
        for j in sorted((j for j in placed if buffers[j].overlaps_in_time(buf)), key=lambda j: offsets[j]):
            if offset + buf.nbytes <= offsets[j]:
                break
            offset = max(offset, align(offsets[j] + buffers[j].nbytes))
        offsets[i] = offset
        placed.append(i)
    return offsets


def plan_memory(buffers: list[Buffer]) -> MemoryPlan:
    plans = [_place(buffers, order) for order in ORDERS]
    arenas = [align(max((o + b.nbytes for o, b in zip(offsets, buffers)), default=0)) for offsets in plans]
    best = arenas.index(min(arenas))
    for offset, buf in zip(plans[best], buffers):
        buf.offset = offset
    steps = {s for b in buffers for s in (b.first_use, b.last_use)}
    lower = max((sum(align(b.nbytes) for b in buffers if b.first_use <= s <= b.last_use) for s in steps), default=0)
    return MemoryPlan(buffers, arenas[best], lower)
