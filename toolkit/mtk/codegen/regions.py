"""Which RAM region each arena buffer lives in: a step after the memory plan, for a board whose RAM
comes in several regions (boards.yaml `ram_regions`, fastest first).

The regions are filled in order: a region takes every buffer not placed yet, and while their plan
(memory_plan.plan_memory, offsets within the region's pool) exceeds what the region has for the
arena, the largest of them moves on to the next region. Small, hot buffers (scratch, the narrow
layers' tensors) so stay in the fastest (tightly coupled) region, large ones stream from the bigger
one, and a model whose arena no single region holds is split across them. Each region used gets one
pool: a static array in the library, in the linker input section named after the region (the system
region's in .bss, as a board with one region has it). The constants --weights-in-ram copies into RAM are
placed first (constants_regions), the room they take left out of the arena's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

from ..boards import RamRegion
from ..errors import DoesNotFit
from .memory_plan import ALIGNMENT, Buffer, MemoryPlan, plan_memory


@dataclass(frozen=True)
class Pool:
    region: str           # a RamRegion's name
    nbytes: int           # the pool's size: its buffers' plan
    capacity: int         # what the region has for the arena
    section: str | None   # the linker input section of its array; None: .bss (the system region)
    align: int = ALIGNMENT   # bytes its array's start is a multiple of: its buffers' strictest alignment


def constants_section(region: str) -> str:
    """The linker input section of the constants copied into a RAM region other than the system one."""
    return f".mtk_constants.{region}"


def footprint(nbytes: int, align: int) -> int:
    """The bytes a constant array of `nbytes` whose address is a multiple of `align` can take in a region's
    section: itself and the padding before it."""
    return nbytes + align - 1


def constants_regions(footprints: Mapping[str, int], constant_bytes: int, regions: Sequence[RamRegion],
                      system_reserved: int, what: str) -> dict[str, str]:
    """The region each constant array (by name: its footprint) is copied into (--weights-in-ram). All of them
    in the fastest region that holds them all, a tightly coupled one first; when none does, split, each
    array whole in one region: the largest first, each into the fastest region with room left for it
    (first-fit decreasing: the tightly coupled region fills with the largest arrays it takes, the rest
    stream from the next). `system_reserved` as for place_in_regions; `constant_bytes`: the arrays' bytes,
    for the message. DoesNotFit with the figures if they do not fit even split."""
    room = {r.name: max(r.size - (system_reserved if r.system else 0), 0) for r in regions}
    fastest = sorted(regions, key=lambda r: not r.tcm)
    whole = next((r for r in fastest if sum(footprints.values()) <= room[r.name]), None)
    if whole is not None:
        return dict.fromkeys(footprints, whole.name)
    left = dict(room)
    placed: dict[str, str] = {}
    for name in sorted(footprints, key=lambda n: (-footprints[n], n)):
        region = next((r for r in fastest if footprints[name] <= left[r.name]), None)
        if region is None:
            split = ", whole or split across them" if len(regions) > 1 else ""
            raise DoesNotFit(f"{what}: its constants ({constant_bytes:,} B, --weights-in-ram) fit in none of its "
                             f"RAM regions{split} (room beside the firmware's stack, buffers and data: "
                             + ", ".join(f"{r.name} {room[r.name]:,} B" for r in regions) + ")",
                             hint="leave out --weights-in-ram: the constants are then read from flash")
        left[region.name] -= footprints[name]
        placed[name] = region.name
    return placed


def place_in_regions(plan: MemoryPlan, regions: Sequence[RamRegion], system_reserved: int,
                     what: str, taken: Mapping[str, int] | None = None) -> tuple[Pool, ...]:
    """Every buffer of `plan` given a pool (Buffer.pool) and an offset in it; the pools used, in the
    regions' order. `system_reserved`: bytes the system region keeps for the firmware (state, stack,
    its own data); `taken`: bytes of a region something else holds (the constants copied
    into RAM). DoesNotFit with the figures if the buffers do not fit."""
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
            pools.append(Pool(region.name, nbytes, capacity[region.name], None if region.system else region.name,
                              max(b.align for b in here)))
        remaining = moved
    if remaining:
        largest = remaining[0]
        raise DoesNotFit(f"{what}: the arena does not fit the board's RAM regions ("
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
