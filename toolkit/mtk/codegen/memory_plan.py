"""Static memory plan: every intermediate buffer gets a fixed offset in one arena.

Buffers are placed greedily, one at a time, at the lowest aligned offset that does not overlap a
placed buffer whose lifetime intersects; the arena is then the highest end. The greedy result
depends on the order: largest first (TFLM's GreedyMemoryPlanner) is tried, then a few other orders
(longest-lived first, largest size × lifetime first, earliest first), and the smallest arena is kept
(digits CNN: 896 B largest first, 800 B by size × lifetime: the lower bound). When the best of them is
above the lower bound, a depth-first search over placements (each buffer at 0 or at the end of a placed
one, largest first) looks for a smaller arena within a budget of offsets tried (the anomaly
detector's chain of 128 B layers with one 8 B layer in it: 272 B greedy, 256 B found).
The lower bound is the largest total of buffers live at one step: no plan can beat it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

ALIGNMENT = 16
SEARCH_PLACEMENTS = 20_000   # offsets the search tries at most: a few tenths of a second


@dataclass
class Buffer:
    """A buffer of the memory plan: the op steps it lives through and, once placed, its offset in the arena
    (metadata.json's memory.plan: CompiledModel.memory)."""

    name: str           # the tensor's, or scratch:op<index>.<name>
    nbytes: int
    first_use: int      # step (op position) that writes it first
    last_use: int       # last step that reads it
    offset: int = -1    # in its pool
    pool: str = ""      # the RAM region whose pool holds it (regions.py); "": the one arena

    def to_json(self) -> dict[str, Any]:
        out = {"tensor": self.name, "offset": self.offset, "bytes": self.nbytes,
               "first_use": self.first_use, "last_use": self.last_use}
        return {**out, "region": self.pool} if self.pool else out

    @classmethod
    def from_json(cls, e: dict[str, Any]) -> Buffer:
        return cls(str(e["tensor"]), int(e["bytes"]), int(e["first_use"]), int(e["last_use"]), int(e["offset"]),
                   str(e.get("region", "")))

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


def _arena(buffers: list[Buffer], offsets: list[int]) -> int:
    return align(max((o + b.nbytes for o, b in zip(offsets, buffers)), default=0))


def _search(buffers: list[Buffer], arena: int, lower: int, budget: int = SEARCH_PLACEMENTS) -> list[int] | None:
    """Offsets giving an arena below `arena` (the smallest found; stops at `lower`), or None: depth-first,
    buffers largest first, each at 0 or at the (aligned) end of a placed buffer, lowest first; at most
    `budget` offsets tried."""
    order = sorted(range(len(buffers)), key=lambda i: ORDERS[0](buffers[i]))
    overlapping = [[j for j in range(len(buffers)) if j != i and buffers[i].overlaps_in_time(buffers[j])]
                   for i in range(len(buffers))]
    offsets = [-1] * len(buffers)
    best: list[int] | None = None

    def fits(i: int, offset: int) -> bool:
        end = offset + buffers[i].nbytes
        return end <= arena - ALIGNMENT and all(offsets[j] < 0 or end <= offsets[j] or
                                                offsets[j] + buffers[j].nbytes <= offset for j in overlapping[i])

    def candidates(i: int) -> list[int]:
        return sorted({0} | {align(o + b.nbytes) for o, b in zip(offsets, buffers) if o >= 0}, reverse=True)

    pending = [candidates(order[0])]     # per placed depth: the offsets left to try, last first
    while pending and budget > 0:
        i = order[len(pending) - 1]
        if not pending[-1]:
            offsets[i] = -1
            pending.pop()
            continue
        offset = pending[-1].pop()
        budget -= 1
        if not fits(i, offset):
            continue
        offsets[i] = offset
        if len(pending) < len(order):
            pending.append(candidates(order[len(pending)]))
            continue
        best, arena = list(offsets), _arena(buffers, offsets)
        if arena <= lower:
            break
    return best


def plan_memory(buffers: list[Buffer]) -> MemoryPlan:
    plans = [_place(buffers, order) for order in ORDERS]
    arenas = [_arena(buffers, offsets) for offsets in plans]
    best = arenas.index(min(arenas))
    steps = {s for b in buffers for s in (b.first_use, b.last_use)}
    lower = max((sum(align(b.nbytes) for b in buffers if b.first_use <= s <= b.last_use) for s in steps), default=0)
    offsets, arena = plans[best], arenas[best]
    if arena > lower and (searched := _search(buffers, arena, lower)) is not None:
        offsets, arena = searched, _arena(buffers, searched)
    for offset, buf in zip(offsets, buffers):
        buf.offset = offset
    return MemoryPlan(buffers, arena, lower)
