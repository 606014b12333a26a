"""Staging: on a board whose flash loads wait, a layer that reads a constant many times (a GEMM's weights once a
block of rows, a Winograd convolution's once a block of tiles: OpDef.constant_passes) copies it into an arena
scratch first, once, sequentially, and its kernels read the copy in zero-wait RAM.

A constant is staged where the load misses its passes after the first would cost (each pass fills every line of
it: one too large for the flash's data cache) exceed the copy's instructions (COPY_CYCLES_PER_BYTE), and the
layer's staged constants take at most 1/RAM_SHARE of the board's RAM; the copy is a scratch of the layer's step
alone, so the arena grows only where that step is its peak. Where the arena would then exceed its limit (the room
the board leaves it, or the user's cap), the layers whose staging takes it over are left unstaged, the others keep
theirs: first every layer whose step alone is then live over the limit, then one by one the layers live at the
peak, the fewest cycles saved per byte staged first, re-planned each time, until it fits. A staged copy is aligned
as its original in flash (a quad stream at 32 bytes: its quads at cache line boundaries). Boards whose flash does
not wait (the QEMU boards) stage nothing.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, replace
from ..boards import Board
from ..graph import Graph
from ..kernels.signature import CFunction
from ..ops import op_def
from ..ops.base import Const, Kernel, Lowered, OpData, Operand, Scratch
from .memory_plan import align
from .regions import live_bytes
from .storage import AliasSets, Step, Storage, external_kind, plan_storage

COPY_CYCLES_PER_BYTE = 1.0    # the copy's loads and stores, about 14 cycles every 16 bytes on the Cortex-M4
RAM_SHARE = 16                # a layer's staged constants take at most this share of the board's RAM
STAGED_PREFIX = "staged_"     # the scratch names of staged constants
COPY_KERNEL = "stage"         # the copies' Kernel.name


@dataclass(frozen=True)
class StagingRule:
    """What staging weighs, from the board's flash timing: a load miss's wait states and the bytes it fills, the
    data cache in front of the flash (0: none), and the most bytes a layer stages."""

    waits: int
    line: int
    cache_bytes: int
    most_bytes: int

    def saved(self, nbytes: int, passes: int) -> float:
        """The cycles copying a constant of `nbytes` that its layer reads `passes` times saves: the misses of the
        passes after the first less the copy (a constant the cache holds misses once: none)."""
        if nbytes <= self.cache_bytes or passes < 2:
            return 0.0
        fills = -(-nbytes // self.line) * self.waits
        return (passes - 1) * fills - COPY_CYCLES_PER_BYTE * nbytes

    def pays(self, nbytes: int, passes: int) -> bool:
        return self.saved(nbytes, passes) > 0


def staging_rule(board: Board | None) -> StagingRule | None:
    """The rule for `board`'s flash, or None: no board, or a flash without wait states."""
    flash = board.flash_timing if board else None
    if flash is None or flash.wait_states == 0:
        return None
    cache = flash.load_cache
    return StagingRule(flash.wait_states, cache.line if cache else 4, cache.bytes if cache else 0,
                       board.ram_bytes // RAM_SHARE)


def copy_kernel(nbytes: int) -> Kernel:
    """A kernel copying `nbytes` (word-aligned source and destination) four words a round (their loads pipelined),
    then the words and bytes left; its arguments the caller's."""
    function = CFunction.of(f"stage_{nbytes}", "const uint8_t* src, uint8_t* dst")
    quads, words = nbytes // 16 * 4, nbytes // 4
    lines = [f"{function.head} {{",
             "  const uint32_t* from = (const uint32_t*)(const void*)src;",
             "  uint32_t* to = (uint32_t*)(void*)dst;",
             f"  for (size_t i = 0; i < {quads}u; i += 4) {{",
             "    uint32_t a = from[i], b = from[i + 1], c = from[i + 2], d = from[i + 3];",
             "    to[i] = a; to[i + 1] = b; to[i + 2] = c; to[i + 3] = d;",
             "  }"]
    lines += [f"  for (size_t i = {quads}u; i < {words}u; ++i) to[i] = from[i];"] if words > quads else []
    lines += [f"  for (size_t i = {4 * words}u; i < {nbytes}u; ++i) dst[i] = src[i];"] if nbytes > 4 * words else []
    return Kernel(COPY_KERNEL, [], c_source="\n".join([*lines, "  return 0;", "}", ""]), c_function=function)


def _constant(graph: Graph, a: Operand) -> tuple[tuple, str, int, int] | None:
    """A constant operand's key (its content, or its tensor), name, bytes and the alignment of its copy (its own in
    flash): a kernel's Const or a constant tensor of the model; None otherwise."""
    if isinstance(a, Const):
        key = ("const", a.data.dtype.str, a.data.shape, a.data.tobytes())
        return key, a.name, int(a.data.nbytes), a.align
    if isinstance(a, int) and external_kind(graph, a) == "const":
        return ("tensor", a), f"t{a}", graph.tensors[a].nbytes, 1
    return None


def staged(graph: Graph, low: Lowered, passes: int, rule: StagingRule) -> Lowered:
    """`low` with the constants staging pays for (StagingRule.pays), the largest first within the rule's bytes, read
    from scratches its first kernels fill (also its descending kernels'); `low` itself when none."""
    constants = {found[0]: (a, *found[1:]) for k in low.kernels for a in k.args
                 if (found := _constant(graph, a)) is not None}
    chosen: dict[tuple, Scratch] = {}
    left = rule.most_bytes
    for key, (_, name, nbytes, alignment) in sorted(constants.items(), key=lambda item: -item[1][2]):
        if rule.pays(nbytes, passes) and align(nbytes) <= left:
            chosen[key] = Scratch(nbytes, f"{STAGED_PREFIX}{name}", alignment)
            left -= align(nbytes)
    if not chosen:
        return low
    copies = [replace(copy_kernel(scratch.nbytes), args=[constants[key][0], scratch])
              for key, scratch in chosen.items()]

    def reading(a: Operand) -> Operand:
        found = _constant(graph, a)
        return chosen.get(found[0], a) if found else a

    def reading_copies(kernels) -> list[Kernel]:
        return [*copies, *(replace(k, args=[reading(a) for a in k.args]) for k in kernels)]

    over = low.overwrites
    if over is not None and over.descending:
        over = replace(over, descending=tuple(reading_copies(over.descending)))
    return replace(low, kernels=reading_copies(low.kernels), overwrites=over)


def stage_constants(graph: Graph, prepared: list[OpData], steps: list[Step], aliases: AliasSets, storage: Storage,
                    board: Board | None, limit: int | None, tiled: Collection[int] = ()) -> tuple[list[Step], Storage]:
    """`steps` with the constants staging pays for staged (passes: OpDef.constant_passes) and their storage, but for
    the steps `tiled` (a tiled stage's) and the layers whose staging would take the arena over `limit` (None:
    none; see the module's docstring); `steps` and `storage` themselves when no staging rule for the board or
    nothing staged."""
    rule = staging_rule(board)
    if rule is None:
        return steps, storage
    out = list(steps)
    per_byte: dict[int, float] = {}   # the staged steps: the cycles their staging saves a byte
    for i, (data, (op, low)) in enumerate(zip(prepared, steps)):
        if i in tiled:
            continue
        passes = op_def(data.op.type).constant_passes(data, low.variant)
        if (new := staged(graph, low, passes, rule)) is not low:
            out[i] = (op, new)
            copies = [k.args[1] for k in new.kernels if k.name == COPY_KERNEL]
            per_byte[i] = sum(rule.saved(s.nbytes, passes) for s in copies) / sum(align(s.nbytes) for s in copies)
    if not per_byte:
        return steps, storage

    def unstaged(dropped: list[int]) -> Storage:
        """The storage of `out` with the steps `dropped` back to theirs in `steps` (`storage` when none is left)."""
        for i in dropped:
            out[i] = steps[i]
            del per_byte[i]
        return plan_storage(graph, out, aliases) if per_byte else storage

    out_storage = plan_storage(graph, out, aliases)
    if limit is not None and out_storage.plan.arena_bytes > limit:
        live = live_bytes(out_storage.plan.buffers, len(out))
        if over := [i for i in per_byte if live[i] > limit]:   # whatever the plan, these steps take it over
            out_storage = unstaged(over)
    while limit is not None and out_storage.plan.arena_bytes > limit and per_byte:
        peak = {s for b in out_storage.plan.buffers if b.offset + b.nbytes > limit
                for s in range(b.first_use, b.last_use + 1)}
        out_storage = unstaged([min(per_byte, key=lambda i: (i not in peak, per_byte[i], i))])
    return (out, out_storage) if per_byte else (steps, storage)
