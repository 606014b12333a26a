"""Which RAM region each arena buffer lives in: a step after the memory plan, for a board whose RAM
comes in several regions (boards.yaml `ram_regions`, fastest first).

The regions are filled in order: a region takes every buffer not placed yet, and while their plan
(memory_plan.plan_memory, offsets within the region's pool) exceeds what the region has for the
arena, the largest of them moves on to the next region. Small, hot buffers (scratch, the narrow
layers' tensors) so stay in the fastest (tightly coupled) region, large ones stream from the bigger
one, and a model whose arena no single region holds is split across them. Each region used gets one
pool: a static array in the library, in the linker input section named after the region (the system
region's in .bss, as a board with one region has it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

from ..boards import RamRegion
from ..errors import ModelError
from .memory_plan import Buffer, MemoryPlan, plan_memory


@dataclass(frozen=True)
class Pool:
    region: str           # a RamRegion's name
    nbytes: int           # the pool's size: its buffers' plan
    capacity: int         # what the region has for the arena
    section: str | None   # the linker input section of its array; None: .bss (the system region)


def constants_region(regions: Sequence[RamRegion], constant_bytes: int, system_reserved: int,
                     what: str) -> RamRegion:
    """The region the model's constants are copied into (--weights-in-ram): the fastest that holds them,
    a tightly coupled one first. `system_reserved` as for place_in_regions. ModelError with the figures
    if none does."""
    room = {r.name: r.size - (system_reserved if r.system else 0) for r in regions}
    fitting = [r for r in sorted(regions, key=lambda r: not r.tcm) if constant_bytes <= room[r.name]]
    if not fitting:
        raise ModelError(f"{what}: its constants ({constant_bytes:,} B, --weights-in-ram) fit in none of its RAM "
                         "regions (room beside the firmware's stack, buffers and data: "
                         + ", ".join(f"{r.name} {max(room[r.name], 0):,} B" for r in regions) + ")",
                         hint="leave out --weights-in-ram: the constants are then read from flash")
    return fitting[0]


def place_in_regions(plan: MemoryPlan, regions: Sequence[RamRegion], system_reserved: int,
                     what: str, taken: Mapping[str, int] | None = None) -> tuple[Pool, ...]:
    """Every buffer of `plan` given a pool (Buffer.pool) and an offset in it; the pools used, in the
    regions' order. `system_reserved`: bytes the system region keeps for the firmware (I/O buffers,
    state, stack, its own data); `taken`: bytes of a region something else holds (the constants copied
    into RAM). ModelError with the figures if the buffers do not fit."""
    taken = taken or {}
    capacity = {r.name: max(r.size - (system_reserved if r.system else 0) - taken.get(r.name, 0), 0)
                for r in regions}
    remaining = sorted(plan.buffers, key=lambda b: (-b.nbytes, b.name))
    pools: list[Pool] = []
    for region in regions:
        here, moved = list(remaining), []
        while here:
            nbytes = plan_memory(here).arena_bytes   # sets the buffers' offsets within the pool
            if nbytes <= capacity[region.name]:
                break
            moved.append(here.pop(0))                # the largest moves on
        for buf in here:
            buf.pool = region.name
        if here:
            pools.append(Pool(region.name, nbytes, capacity[region.name], None if region.system else region.name))
        remaining = moved
    if remaining:
        largest = remaining[0]
        raise ModelError(f"{what}: the arena does not fit the board's RAM regions ("
                         + ", ".join(f"{r.name} {capacity[r.name]:,} B for the arena" for r in regions)
                         + f"); '{largest.name}' alone needs {largest.nbytes:,} B")
    return tuple(pools)


def live_bytes(buffers: Sequence[Buffer], steps: int, pool: str | None = None) -> list[int]:
    """Bytes of the buffers (of `pool`, or all) live at each op step: the memory report's curve (an output
    overlapping the input it overwrites counted once where they overlap)."""
    live = [0] * steps
    for b in buffers:
        if pool is None or b.pool == pool:
            for s in range(b.first_use, b.last_use + 1):
                live[s] += b.nbytes
            if (i := b.overwriting) is not None and i.pool == b.pool:
                live[b.first_use] -= max(0, min(b.offset + b.nbytes, i.offset + i.nbytes) - max(b.offset, i.offset))
    return live
