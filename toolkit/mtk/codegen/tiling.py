"""Tiled execution (issue 16): a chain of row-local layers computed band by band, below the
liveness bound of the op-by-op schedule.

A stage is k consecutive layers (conv, depthwise, pooling, int8 lookup activations: each output row
reads a window of input rows) whose intermediate tensors have no other reader. Its last layer's
output is split into bands of `rows` full-width rows; for each band every layer computes the rows
the next one needs (the receptive-field halo), so the intermediate tensors exist only as small row
buffers in one scratch of the stage. Full-width rows of an NHWC tensor are contiguous: a band's input
and output are the tensor's bytes from a row on (`View`), and each layer runs its ordinary kernel
lowered for the band's geometry (rows in, rows out, the padding rows clipped at the image's edges),
so a tiled model computes the same integer ops as the untiled one: bit-exact by construction.

Two ways to get the halo rows a band shares with the previous one:
  cached      the rows stay in the layer's buffer (moved to its start, memmove): no extra MACs,
              every layer's buffer lives through the whole stage
  recomputed  computed again (MCUNetV2's patches): extra MACs, but only two adjacent layers' buffers
              live at a time (even layers at the start of the region, odd ones at its end)

`tile` searches stages (first layer, k, band rows, cached or recomputed) for the lowest arena whose
extra MACs stay within a budget, stage after stage while the arena drops.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable

from ..graph import Graph, Op
from ..ops import op_def
from ..ops.activation import Unary
from ..ops.base import Kernel, Lowered, OpData, Scratch, View
from ..ops.conv import DepthwiseParams
from ..ops.elementwise import BinaryParams
from ..ops.gemm import GemmParams
from ..ops.pooling import PoolParams
from .memory_plan import align
from .storage import AliasSets, Step, Storage, plan_storage

TILE_SCRATCH = "tiles"   # the one scratch of a tiled stage: its row buffers, then the kernels' own scratch
MAX_LAYERS = 12          # the longest chain the search tries
MAX_STAGES = 4
HALOS = (True, False)    # cached, recomputed: the ways the search tries


@dataclass(frozen=True)
class Rows:
    """How a layer's output rows read its input rows: output row o reads input rows
    o·stride − pad .. o·stride − pad + extent − 1 (those inside the input)."""

    in_h: int
    out_h: int
    extent: int     # (kernel height − 1) · dilation + 1
    stride: int
    pad: int        # leading padding rows

    def needs(self, lo: int, hi: int) -> tuple[int, int]:
        """The input rows [a, b) that output rows [lo, hi) read."""
        return max(0, lo * self.stride - self.pad), min(self.in_h, (hi - 1) * self.stride - self.pad + self.extent)


def activations(data: OpData) -> list[int]:
    """The op's inputs that are not constants (tensor indices)."""
    return [i for i, t in zip(data.op.inputs, data.inputs) if t is not None and not t.is_constant]


def row_map(data: OpData) -> Rows | None:
    """The layer's Rows if it can be tiled (NHWC batch-1 activations, one of them windowed, or all of
    them of the output's shape for ADD/SUB/MUL), else None."""
    x, y, p = data.inputs[0], data.output, data.params
    acts = [t for t in data.inputs if t is not None and not t.is_constant]
    if not acts or any(len(t.shape) != 4 or t.shape[0] != 1 for t in (*acts, y)):
        return None
    if isinstance(p, BinaryParams):
        same = all(tuple(t.shape) == tuple(y.shape) and t.dtype == y.dtype for t in acts)
        return Rows(y.shape[1], y.shape[1], 1, 1, 0) if same else None
    if len(acts) != 1 or x is None or x.is_constant:
        return None
    if isinstance(p, GemmParams) and p.name in ("conv2d", "depthwise_conv2d"):
        g = p.patches
        return Rows(x.shape[1], y.shape[1], 1, 1, 0) if g is None else \
            Rows(g.in_h, g.out_h, (g.k_h - 1) * g.dil_h + 1, g.stride_h, g.pad_top)
    if isinstance(p, DepthwiseParams):
        g = p.geometry
        return Rows(g.in_h, g.out_h, (g.k_h - 1) * g.dil_h + 1, g.stride_h, g.pad_top)
    if isinstance(p, PoolParams):
        return Rows(p.rows.size, y.shape[1], p.rows.filter, p.rows.stride, p.rows.pad)
    if isinstance(op_def(data.op.type), Unary) and x.shape == y.shape:
        return Rows(x.shape[1], y.shape[1], 1, 1, 0)
    return None


def band_data(data: OpData, in_rows: int, out_rows: int, pad: int) -> OpData:
    """The layer as it computes `out_rows` rows from `in_rows` input rows, `pad` padding rows above them."""
    y, p = data.output, data.params
    if isinstance(p, GemmParams) and p.patches is not None:
        p = replace(p, patches=replace(p.patches, in_h=in_rows, out_h=out_rows, pad_top=pad))
    elif isinstance(p, DepthwiseParams):
        p = replace(p, geometry=replace(p.geometry, in_h=in_rows, out_h=out_rows, pad_top=pad))
    elif isinstance(p, PoolParams):
        p = replace(p, rows=replace(p.rows, size=in_rows, out=out_rows, pad=pad))
    inputs = tuple(t if t is None or t.is_constant else replace(t, shape=(1, in_rows, *t.shape[2:]))
                   for t in data.inputs)
    return replace(data, inputs=inputs, output=replace(y, shape=(1, out_rows, *y.shape[2:])), params=p)


# ---- the schedules ----------------------------------------------------------------------------

@dataclass(frozen=True)
class LayerCall:
    """One call of a layer: first move rows [keep_from, keep_from + keep_rows) of its buffer to the buffer's
    start (cached halo rows), then compute output rows [lo, hi) from input rows [in_lo, in_hi), which sit
    from row `in_at` of the previous layer's buffer, into row `at` of its buffer (the last layer: of the
    stage's output). lo == hi: the move only."""

    layer: int
    lo: int
    hi: int
    in_lo: int
    in_hi: int
    in_at: int
    at: int
    keep_from: int = 0
    keep_rows: int = 0


@dataclass(frozen=True)
class Schedule:
    calls: list[LayerCall]
    capacity: list[int]        # rows of each layer's buffer (the last layer has none: 0)
    computed: list[int]        # output rows each layer computes in all


def streamed_schedule(rows: list[Rows], chunk: int) -> Schedule:
    """Cached halos: each layer computes `chunk` rows at a time when the next one needs them (demand
    first, from the last layer), its buffer dropping the rows no later call reads (the others move to
    its start): every row computed once, each buffer about the next layer's window tall."""
    k = len(rows)
    done, floor, capacity, computed = [0] * k, [0] * k, [0] * k, [0] * k
    held = [0] * k                       # first row each buffer holds (at its row 0)
    calls: list[LayerCall] = []

    def produce(j: int, upto: int) -> None:
        while done[j] < upto:
            lo, hi = done[j], min(done[j] + chunk, rows[j].out_h)
            in_lo, in_hi = rows[j].needs(lo, hi)
            if j > 0:
                floor[j - 1] = in_lo
                produce(j - 1, in_hi)
            keep_from = keep_rows = 0
            if j < k - 1:
                first = max(held[j], min(floor[j], lo))
                if first > held[j] and lo > first:
                    keep_from, keep_rows = first - held[j], lo - first
                held[j] = first
                capacity[j] = max(capacity[j], hi - first)
            calls.append(LayerCall(j, lo, hi, in_lo, in_hi, in_lo - held[j - 1] if j else in_lo,
                                   lo - held[j] if j < k - 1 else lo, keep_from, keep_rows))
            done[j], computed[j] = hi, computed[j] + hi - lo

    produce(k - 1, rows[-1].out_h)
    return Schedule(calls, capacity, computed)


def recomputed_schedule(rows: list[Rows], band_rows: int) -> Schedule:
    """Recomputed halos (MCUNetV2's patches): for each band of `band_rows` rows of the last layer's
    output, every layer computes all the rows the next one reads, the previous band's included."""
    k = len(rows)
    capacity, computed = [0] * k, [0] * k
    calls: list[LayerCall] = []
    for band_lo in range(0, rows[-1].out_h, band_rows):
        lo, hi = band_lo, min(band_lo + band_rows, rows[-1].out_h)
        band: list[LayerCall] = []
        for j in reversed(range(k)):
            in_lo, in_hi = rows[j].needs(lo, hi)
            band.append(LayerCall(j, lo, hi, in_lo, in_hi, 0 if j else in_lo, lo if j == k - 1 else 0))
            capacity[j] = max(capacity[j], hi - lo) if j < k - 1 else 0
            computed[j] += hi - lo
            lo, hi = in_lo, in_hi
        calls += band[::-1]
    return Schedule(calls, capacity, computed)


# ---- a stage -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Stage:
    """A chain of layers tiled in bands: steps first .. first + len(layers) − 1."""

    first: int
    layers: tuple[OpData, ...]
    band_rows: int       # rows of a call (streamed) or of a band of the last layer's output (recomputed)
    cached: bool         # streamed with cached halos, else recomputed bands
    schedule: Schedule = field(compare=False, repr=False)
    row_bytes: tuple[int, ...] = ()    # bytes of one output row of each layer
    work_bytes: int = 0                # the largest of the layers' own scratch

    @property
    def input(self) -> int:
        return self.chain_input(0)

    def chain_input(self, j: int) -> int:
        """The input of layer j the chain feeds: the previous layer's output (the stage's input for the first)."""
        return self.layers[j - 1].op.outputs[0] if j else activations(self.layers[0])[0]

    def side_inputs(self, j: int) -> list[int]:
        """Layer j's other activations (ADD's other operand), computed before the stage: read at its output rows."""
        return [i for i in activations(self.layers[j]) if i != self.chain_input(j)]

    @property
    def output(self) -> int:
        return self.layers[-1].op.outputs[0]

    @property
    def calls(self) -> int:
        """Kernel calls of the stage (moves not counted)."""
        return sum(c.hi > c.lo for c in self.schedule.calls)

    @property
    def buffer_bytes(self) -> list[int]:
        return [align(c * b) for c, b in zip(self.schedule.capacity[:-1], self.row_bytes)]

    @property
    def buffer_offsets(self) -> list[int]:
        sizes = self.buffer_bytes
        if self.cached:
            return [sum(sizes[:j]) for j in range(len(sizes))]
        return [0 if j % 2 == 0 else self.region_bytes - s for j, s in enumerate(sizes)]

    @property
    def region_bytes(self) -> int:
        sizes = self.buffer_bytes
        if self.cached or len(sizes) == 1:
            return sum(sizes)
        return max(a + b for a, b in zip(sizes, sizes[1:]))

    @property
    def scratch_bytes(self) -> int:
        return self.region_bytes + self.work_bytes

    def extra_macs(self, macs: Callable[[OpData], int]) -> int:
        """MACs computed beyond the untiled layers' (recomputed halos; negative: rows no one reads skipped)."""
        return sum(macs(d) * (done - r.out_h) // r.out_h
                   for d, r, done in zip(self.layers, map(row_map, self.layers), self.schedule.computed))

    def describe(self, macs: Callable[[OpData], int]) -> dict[str, Any]:
        """The stage as metadata.json and the summary give it."""
        return {"ops": [d.op.index for d in self.layers], "types": [d.op.type for d in self.layers],
                "rows_per_call" if self.cached else "band_rows": self.band_rows, "calls": self.calls,
                "halo": "cached" if self.cached else "recomputed", "scratch_bytes": self.scratch_bytes,
                "extra_macs": self.extra_macs(macs)}


def chains(graph: Graph, prepared: list[OpData], steps: list[Step]) -> list[list[int]]:
    """For each step starting a tileable chain, the longest chain of steps from it (a list of positions)."""
    consumers = graph.consumers()
    tileable = [row_map(d) is not None and not low.alias_of and low.kernels for d, (_, low) in zip(prepared, steps)]
    out = []
    for i in range(len(steps)):
        chain = [i] if tileable[i] else []
        while chain and len(chain) < MAX_LAYERS and chain[-1] + 1 < len(steps) and tileable[chain[-1] + 1]:
            t = prepared[chain[-1]].op.outputs[0]
            nxt = prepared[chain[-1] + 1].op
            windowed = not isinstance(prepared[chain[-1] + 1].params, BinaryParams)
            if (nxt.inputs[0] != t if windowed else t not in nxt.inputs) or len(consumers.get(t, [])) != 1 \
                    or t in graph.outputs:
                break
            chain.append(chain[-1] + 1)
        if len(chain) >= 2:
            out.append(chain)
    return out


def make_stage(prepared: list[OpData], positions: list[int], band_rows: int, cached: bool,
               work: Callable[[int], int]) -> Stage:
    layers = tuple(prepared[i] for i in positions)
    rows = [row_map(d) for d in layers]
    schedule = streamed_schedule(rows, band_rows) if cached else recomputed_schedule(rows, band_rows)
    row_bytes = tuple(d.output.nbytes // d.output.shape[1] for d in layers)
    return Stage(positions[0], layers, band_rows, cached, schedule, row_bytes,
                 max(work(i) for i in positions))


def own_scratch_bytes(low: Lowered) -> int:
    """Bytes of the scratch buffers an op's kernels use (a named one counted once)."""
    sizes: dict[Any, int] = {}
    for k, kernel in enumerate(low.kernels):
        for a in kernel.args:
            if isinstance(a, Scratch):
                sizes[a.name or k] = align(a.nbytes)
    return sum(sizes.values())


def staged_steps(steps: list[Step], stage: Stage, kernels: list[Kernel]) -> list[Step]:
    """`steps` with the stage's first step running `kernels` from the stage input to its output and its
    other steps empty (their ops keep their index: per-op metadata and hooks stay aligned)."""
    out = list(steps)
    first = stage.layers[0].op
    sides = [i for j in range(len(stage.layers)) for i in stage.side_inputs(j)]
    out[stage.first] = (Op(first.index, first.type, [stage.input, *sides], [stage.output]), Lowered(kernels))
    for j, data in enumerate(stage.layers[1:], start=1):
        out[stage.first + j] = (Op(data.op.index, data.op.type, [], []), Lowered())
    return out


def placeholder(stage: Stage) -> list[Kernel]:
    """A stand-in kernel holding the stage's scratch: what the memory plan of a candidate needs."""
    return [Kernel("tiles", [Scratch(stage.scratch_bytes, TILE_SCRATCH)])]


# ---- the kernels -------------------------------------------------------------------------------

def move_kernel(buffer: View, src: int, nbytes: int) -> Kernel:
    """Bytes [src, src + nbytes) of `buffer` moved to its start (the halo rows a cached layer keeps).
    Forward, four words loaded before they are stored: right for overlapping bytes since the source
    is above the destination. Not the C library's memmove: picolibc's copies a byte per 5 instructions."""
    name = f"keep_rows_{src}_{nbytes}"
    words = nbytes // 4 if src % 4 == 0 else 0   # buffers start word-aligned (memory_plan.align)
    lines = [f"int32_t {name}(void* buf) {{"]
    if words:
        lines += ["  uint32_t* to = (uint32_t*)buf;",
                  f"  const uint32_t* from = (const uint32_t*)((uint8_t*)buf + {src}u);"]
    if words >= 4:
        lines += [f"  for (uint32_t i = 0; i < {words // 4}u; ++i, to += 4, from += 4) {{",
                  "    uint32_t a = from[0], b = from[1], c = from[2], d = from[3];",
                  "    to[0] = a; to[1] = b; to[2] = c; to[3] = d;",
                  "  }"]
    lines += [f"  to[{i}] = from[{i}];" for i in range(words % 4)]
    if nbytes > 4 * words:
        lines += [f"  for (uint32_t i = {4 * words}u; i < {nbytes}u; ++i) ((uint8_t*)buf)[i] = ((uint8_t*)buf)[{src}u + i];"]
    lines += ["  return 0;", "}"]
    return Kernel("keep_rows", [buffer], c_source="\n".join(lines) + "\n", c_name=name)


def stage_kernels(stage: Stage, variants: list[Any], lower: Callable[[OpData, Any], Lowered]) -> list[Kernel]:
    """Every band's calls, in order: each layer's kernels lowered once per band geometry, their
    input and output bound to rows of the stage's tensors or buffers, their scratch in the work area."""
    scratch = Scratch(stage.scratch_bytes, TILE_SCRATCH)
    offsets = stage.buffer_offsets
    last = len(stage.layers) - 1
    lowered: dict[tuple[int, int, int, int], Lowered] = {}
    calls: list[Kernel] = []
    for call in stage.schedule.calls:
        j, data = call.layer, stage.layers[call.layer]
        if call.keep_rows:
            row = stage.row_bytes[j]
            calls.append(move_kernel(View(scratch, offsets[j]), call.keep_from * row, call.keep_rows * row))
        if call.hi == call.lo:
            continue
        r = row_map(data)
        pad = call.in_lo - (call.lo * r.stride - r.pad)
        key = (j, call.in_hi - call.in_lo, call.hi - call.lo, pad)
        if key not in lowered:
            lowered[key] = lower(band_data(data, *key[1:]), variants[j])
        in_row = stage.row_bytes[j - 1] if j else data.inputs[0].nbytes // data.inputs[0].shape[1]
        views = {stage.chain_input(j): View(stage.input, call.in_at * in_row) if j == 0 else
                 View(scratch, offsets[j - 1] + call.in_at * in_row),
                 data.op.outputs[0]: View(stage.output, call.at * stage.row_bytes[j]) if j == last else
                 View(scratch, offsets[j] + call.at * stage.row_bytes[j])}
        for side in stage.side_inputs(j):
            views.setdefault(side, View(side, call.lo * stage.row_bytes[j]))
        calls += bind(lowered[key], data.op, views, scratch, stage.region_bytes)
    return calls


def bind(low: Lowered, op: Op, views: dict[int, View], scratch: Scratch, work_at: int) -> list[Kernel]:
    """The band's kernels with their activations bound to `views` (by tensor index) and their scratch
    to places in the work area of the stage's scratch (distinct scratches of the op one after another)."""
    places: dict[Any, int] = {}
    end = work_at
    bound = []
    for k, kernel in enumerate(low.kernels):
        args = []
        for a in kernel.args:
            if isinstance(a, Scratch):
                if (a.name or k) not in places:
                    places[a.name or k], end = end, end + align(a.nbytes)
                args.append(View(scratch, places[a.name or k]))
            elif isinstance(a, int) and a in views:
                args.append(views[a])
            else:
                args.append(a)
        bound.append(replace(kernel, args=args))
    if end > scratch.nbytes:
        raise AssertionError(f"op {op.index}: a band's scratch ({end - work_at} B) outgrows the untiled op's")
    return bound


# ---- the search --------------------------------------------------------------------------------

@dataclass(frozen=True)
class Tiling:
    """What `tile` chose, for the summary and metadata.json."""

    stages: tuple[dict[str, Any], ...]   # Stage.describe of each
    untiled_arena_bytes: int
    arena_bytes: int
    extra_macs: int
    macs: int                            # the untiled model's

    def to_json(self) -> dict[str, Any]:
        return {"untiled_arena_bytes": self.untiled_arena_bytes, "arena_bytes": self.arena_bytes,
                "extra_macs": self.extra_macs, "extra_macs_percent": round(100 * self.extra_macs / max(self.macs, 1), 2),
                "stages": list(self.stages)}


def band_row_choices(height: int) -> list[int]:
    """Band heights worth trying for an output of `height` rows: 1, 2, 3, 4, 6, 8, 12, ... below it."""
    sizes = sorted({n * m for n in (1, 3) for m in (1, 2, 4, 8, 16, 32, 64)})
    return [r for r in sizes if r < height]


def _live_peak(buffers: list[tuple[int, int, int]], steps: int) -> int:
    """The most bytes live at one step: buffers as (aligned bytes, first step, last step)."""
    live = [0] * steps
    for nbytes, first, last in buffers:
        for s in range(first, last + 1):
            live[s] += nbytes
    return max(live, default=0)


def _estimate(storage: Storage, steps: int, stage: Stage, intermediates: set[int]) -> int:
    """The lower bound of the plan with `stage` tiled, from the current plan's buffers."""
    positions = range(stage.first, stage.first + len(stage.layers))
    out_root = storage.aliases.root(stage.output)
    buffers = [(align(stage.scratch_bytes), stage.first, stage.first)]
    for root, b in storage.tensor_buffers.items():
        if root in intermediates:
            continue
        first = min(b.first_use, stage.first) if root == out_root else b.first_use
        buffers.append((align(b.nbytes), first, b.last_use))
    buffers += [(align(b.nbytes), b.first_use, b.last_use) for (step, _), b in storage.scratch.items()
                if step not in positions]
    return _live_peak(buffers, steps)


def search(graph: Graph, prepared: list[OpData], steps: list[Step], aliases: AliasSets, storage: Storage,
           budget_macs: int, macs: Callable[[OpData], int], taken: set[int]) -> tuple[Stage, Storage] | None:
    """The stage (not over steps in `taken`) whose plan has the lowest arena within `budget_macs` extra
    MACs (then the fewest extra MACs, then the fewest bands); None if none lowers the arena."""
    peak_live = {s: sum(align(b.nbytes) for b in storage.plan.buffers if b.first_use <= s <= b.last_use)
                 for s in range(len(steps))}
    peak = max(peak_live, key=lambda s: (peak_live[s], -s))
    candidates: list[tuple[tuple[int, int, int], Stage]] = []
    work = {i: own_scratch_bytes(steps[i][1]) for i in range(len(steps))}
    for chain in chains(graph, prepared, steps):
        if taken & set(chain) or chain[0] > peak:
            continue
        for k in range(2, len(chain) + 1):
            positions = chain[:k]
            if positions[-1] < peak:
                continue
            intermediates = {aliases.root(prepared[i].op.outputs[0]) for i in positions[:-1]}
            for band_rows in band_row_choices(prepared[positions[-1]].output.shape[1]):
                for cached in HALOS:
                    stage = make_stage(prepared, positions, band_rows, cached, work.__getitem__)
                    extra = stage.extra_macs(macs)
                    if extra <= budget_macs:
                        est = _estimate(storage, len(steps), stage, intermediates)
                        candidates.append(((est, extra, stage.calls), stage))
    best: tuple[tuple[int, int, int], Stage, Storage] | None = None
    for _, stage in sorted(candidates, key=lambda c: c[0])[:8]:
        trial = plan_storage(graph, staged_steps(steps, stage, placeholder(stage)), aliases)
        key = (trial.plan.arena_bytes, stage.extra_macs(macs), stage.calls)
        if best is None or key < best[0]:
            best = (key, stage, trial)
    if best is None or best[2].plan.arena_bytes >= storage.plan.arena_bytes:
        return None
    return best[1], best[2]


def tile(graph: Graph, prepared: list[OpData], steps: list[Step], aliases: AliasSets, storage: Storage,
         limit: int, max_recompute: float, lower: Callable[[OpData, Any], Lowered],
         macs: Callable[[OpData], int]) -> tuple[list[Step], Storage, Tiling | None]:
    """Steps and storage with stages tiled, stage after stage while the arena is above `limit` and drops,
    their extra MACs within `max_recompute` of the model's; unchanged (Tiling None) if it fits as it is."""
    if storage.plan.arena_bytes <= limit:
        return steps, storage, None
    total = sum(macs(d) for d in prepared)
    budget = int(max_recompute * total)
    stages: list[Stage] = []
    current, current_storage = steps, storage
    while len(stages) < MAX_STAGES and current_storage.plan.arena_bytes > limit:
        taken = {s.first + j for s in stages for j in range(len(s.layers))}
        spent = sum(s.extra_macs(macs) for s in stages)
        found = search(graph, prepared, current, aliases, current_storage, budget - spent, macs, taken)
        if found is None:
            break
        stage, current_storage = found
        stages.append(stage)
        current = staged_steps(current, stage, placeholder(stage))
    if not stages:
        return steps, storage, Tiling((), storage.plan.arena_bytes, storage.plan.arena_bytes, 0, total)
    tiled = steps
    for stage in stages:
        variants = [steps[stage.first + j][1].variant for j in range(len(stage.layers))]
        tiled = staged_steps(tiled, stage, stage_kernels(stage, variants, lower))
    final = plan_storage(graph, tiled, aliases)
    return tiled, final, Tiling(tuple(s.describe(macs) for s in stages), storage.plan.arena_bytes,
                                final.plan.arena_bytes, sum(s.extra_macs(macs) for s in stages), total)
