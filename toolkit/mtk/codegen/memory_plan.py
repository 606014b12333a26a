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

An op whose output rows are written in order after the input rows under them were read for the last
time may have its output overlap that input (`Buffer.overwrites`): it may start `below` bytes or more
under the input's start (the op writes ascending), or `above` bytes or more over it (descending); the
op reads which one the plan chose (`placed_above`) and orders its calls. A chain of such ops then
alternates down and up instead of needing two whole tensors at every step.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
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
    overwrites: Buffer | None = field(default=None, repr=False, compare=False)
    # the input (read for the last time at first_use) this buffer may overlap, placed at least `below`
    # bytes under its start or `above` bytes over it (None: not that way)
    below: int | None = None
    above: int | None = None
    align: int = ALIGNMENT   # bytes its offset is a multiple of (a multiple of ALIGNMENT)

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

    @property
    def overwriting(self) -> Buffer | None:
        """The input this buffer may overlap: one whose last read is this buffer's first write."""
        o = self.overwrites
        return o if o is not None and o.last_use == self.first_use and o is not self else None

    def placed_above(self) -> bool:
        """The plan put this buffer over the input it overwrites, overlapping its end (the op computes its rows
        descending). An output placed wholly above its input overlaps nothing: its rows go in either order."""
        o = self.overwriting
        return o is not None and o.offset < self.offset < o.offset + o.nbytes


def compatible(a: Buffer, at: int, b: Buffer, bt: int) -> bool:
    """Buffers `a` at offset `at` and `b` at `bt` may share the arena: not live at once, apart, or one
    overwriting the other from far enough below or above."""
    if not a.overlaps_in_time(b) or at + a.nbytes <= bt or bt + b.nbytes <= at:
        return True
    out, o, i, it = (a, at, b, bt) if a.overwriting is b else (b, bt, a, at) if b.overwriting is a else (None,) * 4
    if out is None:
        return False
    return (out.below is not None and o <= it - out.below) or (out.above is not None and o >= it + out.above)


def _partner_offsets(buf: Buffer, other: Buffer, offset: int) -> list[int]:
    """Offsets of `buf` where it may overlap `other` (placed at `offset`), one being the other's overwriter."""
    out: list[int] = []
    if buf.overwriting is other:
        out += [] if buf.below is None else [(offset - buf.below) // ALIGNMENT * ALIGNMENT]
        out += [] if buf.above is None else [align(offset + buf.above)]
    elif other.overwriting is buf:
        out += [] if other.below is None else [align(offset + other.below)]
        out += [] if other.above is None else [(offset - other.above) // ALIGNMENT * ALIGNMENT]
    return [o for o in out if o >= 0]


def room_under(buffers: list[Buffer]) -> list[int]:
    """The bytes each buffer may leave free under its start for the chain of outputs overwriting it from below
    (one overwriting it, one overwriting that one, ...): an offset worth trying besides 0 and the placed ends."""
    out: dict[int, int] = {}
    below_of = {id(b.overwriting): b for b in buffers if b.overwriting is not None and b.below is not None}

    def under(b: Buffer) -> int:
        if id(b) not in out:
            out[id(b)] = 0    # a cycle (none in a plan) stops here
            writer = below_of.get(id(b))
            out[id(b)] = 0 if writer is None else max(0, align(writer.below) + under(writer))
        return out[id(b)]

    return [under(b) for b in buffers]


def footprint(out: Buffer) -> int:
    """The fewest bytes `out` and the input it overwrites can take together (both aligned)."""
    i = out.overwriting
    assert i is not None
    n_in, n_out = align(i.nbytes), align(out.nbytes)
    spans = [n_in + n_out]
    # out at `rel` bytes from the input's start: at most -below (at best 0 where below is negative), at least above
    rels = ([] if out.below is None else [min(0, -align(out.below))]) + \
        ([] if out.above is None else [max(0, align(out.above))])
    for rel in rels:
        spans.append(max(n_in, rel + n_out) - min(0, rel))
    return min(spans)


@dataclass
class MemoryPlan:
    buffers: list[Buffer]
    arena_bytes: int
    lower_bound_bytes: int


def align(n: int, alignment: int = ALIGNMENT) -> int:
    return (n + alignment - 1) // alignment * alignment


def packed_offsets(sizes: list[int]) -> list[int]:
    """Where buffers of `sizes` bytes start, one after another in one block, each at a multiple of ALIGNMENT."""
    offsets, end = [], 0
    for n in sizes:
        offsets.append(align(end))
        end = align(end) + n
    return offsets


# Orders tried, the first kept on ties (the name breaks remaining ties, so plans are reproducible).
ORDERS: tuple[Callable[[Buffer], tuple], ...] = (
    lambda b: (-b.nbytes, b.first_use, b.name),
    lambda b: (-b.nbytes * b.steps, -b.nbytes, b.first_use, b.name),
    lambda b: (-b.steps, -b.nbytes, b.first_use, b.name),
    lambda b: (b.first_use, -b.nbytes, b.name),
    lambda b: (-b.last_use, -b.nbytes, b.name),    # an overwriting output before the input it overlaps
)


def _place(buffers: list[Buffer], order: Callable[[Buffer], tuple]) -> list[int]:
    """The offsets of `buffers` placed greedily in `order`."""
    offsets = [-1] * len(buffers)
    placed: list[int] = []
    for i in sorted(range(len(buffers)), key=lambda i: order(buffers[i])):
        buf = buffers[i]
        live = [j for j in placed if buffers[j].overlaps_in_time(buf)]
        candidates = {0} | {align(offsets[j] + buffers[j].nbytes, buf.align) for j in live} | \
            {o for j in live for o in _partner_offsets(buf, buffers[j], offsets[j])}
        offsets[i] = min(o for o in candidates if all(compatible(buf, o, buffers[j], offsets[j]) for j in live))
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
    under = room_under(buffers)
    best: list[int] | None = None

    def fits(i: int, offset: int) -> bool:
        return offset + buffers[i].nbytes <= arena - ALIGNMENT and \
            all(offsets[j] < 0 or compatible(buffers[i], offset, buffers[j], offsets[j]) for j in overlapping[i])

    def candidates(i: int) -> list[int]:
        ends = {0} | {align(o + b.nbytes, buffers[i].align) for o, b in zip(offsets, buffers) if o >= 0}
        return sorted(ends | {o + under[i] for o in ends} |
                      {o for j in overlapping[i] if offsets[j] >= 0
                       for o in _partner_offsets(buffers[i], buffers[j], offsets[j])}, reverse=True)

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


def lower_bound(buffers: list[Buffer]) -> int:
    """The most bytes live at one step, an overwriting pair counted at its footprint."""
    steps = {s for b in buffers for s in (b.first_use, b.last_use)}
    live = {s: [b for b in buffers if b.first_use <= s <= b.last_use] for s in steps}
    return max((sum(align(b.nbytes) for b in bs) - sum(align(b.nbytes) + align(b.overwriting.nbytes) - footprint(b)
                                                         for b in bs if b.overwriting is not None and b.first_use == s)
                for s, bs in live.items()), default=0)


def plan_memory(buffers: list[Buffer]) -> MemoryPlan:
    plans = [_place(buffers, order) for order in ORDERS]
    arenas = [_arena(buffers, offsets) for offsets in plans]
    best = arenas.index(min(arenas))
    lower = lower_bound(buffers)
    offsets, arena = plans[best], arenas[best]
    if arena > lower and (searched := _search(buffers, arena, lower)) is not None:
        offsets, arena = searched, _arena(buffers, searched)
    for offset, buf in zip(offsets, buffers):
        buf.offset = offset
    return MemoryPlan(buffers, arena, lower)
