"""Tiled execution: a chain of row-local layers computed band by band, below the
liveness bound of the op-by-op order.

A stage is k consecutive layers (conv, depthwise, pooling, int8 lookup activations: each output row
reads a window of input rows) whose intermediate tensors have no other reader. Its last layer's
output is split into bands of `rows` full-width rows; for each band every layer computes the rows
the next one needs (the receptive-field halo), so the intermediate tensors exist only as small row
buffers in one scratch of the stage. Full-width rows of an NHWC tensor are contiguous: a band's input
and output are the tensor's bytes from a row on (`View`), and each layer runs its ordinary kernel
lowered for the band's geometry (rows in, rows out, the padding rows clipped at the image's edges),
so a tiled model computes the same integer ops as the untiled one: bit-exact by construction.

Two ways to get the halo rows a band shares with the previous one:
  cached      the rows stay in the layer's buffer (moved to its start, a word copy): no extra MACs,
              every layer's buffer lives through the whole stage
  recomputed  computed again (MCUNetV2's patches): extra MACs, but only two adjacent layers' buffers
              live at a time (even layers at the start of the region, odd ones at its end)

Where bands of whole rows cannot bring the arena under the limit (wide images), 2-D patches: rows ×
columns of the last layer's output, halos recomputed along both axes (`patch_sequence`); the first
layer's input patch is copied out of its tensor into a buffer, the last layer's output patch copied back
into the stage's output (`copy_kernel`), the layers between work on contiguous one-patch buffers, each
kernel lowered for its patch's geometry (padding clipped on both axes).

A stage whose calls write its output rows under (or over) the input rows they and the later calls read
may have its output overlap its input (`Stage.overwrite`, the memory plan's `Buffer.overwrites`). One layer
alone in bands of rows (`banded_layers`: no halo, no extra MAC, only calls) so overwrites its input from
below, bands ascending, or from above, bands descending, as the final plan chooses (storage.ordered_steps).

`tile` first bands single layers (about BANDS bands each, only those the arena needs); where that does
not reach the limit, it searches stages (first layer, k, band rows, cached or recomputed, patch columns) for the lowest
arena whose extra cost stays within a budget, stage after stage while the arena drops. The cost is the core's
instructions as its `Costs` estimate them: recomputed MACs, but also the calls of many small bands and
the bytes the cached halos move, which weigh more the faster the core's kernels are (Helium).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from itertools import accumulate
from typing import Any, Callable

from ..compiled import TiledStage, Tiling
from ..graph import Graph, Op
from ..kernels.signature import CFunction
from ..ops import op_def
from ..ops.base import Axis, Band, Kernel, Lowered, OpData, Overwrite, Rows, Scratch, View
from ..target import Costs
from .memory_plan import Buffer, align, footprint
from .storage import AliasSets, Step, Storage, plan_storage

TILE_SCRATCH = "tiles"   # the one scratch of a tiled stage: its row buffers, then the kernels' own scratch
MAX_LAYERS = 12          # the longest chain the search tries
MAX_STAGES = 4
HALOS = (True, False)    # cached, recomputed: the ways the search tries
BANDS = (2, 3, 4, 8, 1 << 30)  # about as many bands of a layer whose output overwrites its input, tried in turn


def activations(data: OpData) -> list[int]:
    """The op's inputs that are not constants (tensor indices)."""
    return [i for i, t in zip(data.op.inputs, data.inputs) if t is not None and not t.is_constant]


def axis_map(data: OpData, axis: Axis) -> Rows | None:
    """How the layer's output rows (or columns) read its input's, if it can be tiled along `axis`: NHWC batch-1
    activations, one of them (its first input) read through a window, or all of them at the output's rows
    (Rows.elementwise); the op family tells (OpDef.axis_map)."""
    x, y = data.inputs[0], data.output
    acts = [t for t in data.inputs if t is not None and not t.is_constant]
    if not acts or any(len(t.shape) != 4 or t.shape[0] != 1 for t in (*acts, y)):
        return None
    rows = op_def(data.op.type).axis_map(data, axis)
    if rows is None or not rows.elementwise and (len(acts) != 1 or x is None or x.is_constant):
        return None
    return rows


def row_map(data: OpData) -> Rows | None:
    return axis_map(data, Axis.ROWS)


def col_map(data: OpData) -> Rows | None:
    return axis_map(data, Axis.COLS)


def band_data(data: OpData, rows: tuple[int, int, int], cols: tuple[int, int, int] | None = None) -> OpData:
    """The layer as it computes a patch: `rows` (and, if given, `cols`) are (input extent, output extent,
    leading padding) of the patch; without `cols`, whole rows."""
    shape_in, shape_out = list(data.inputs[0].shape), list(data.output.shape)
    for axis, extents in ((Axis.ROWS, rows), (Axis.COLS, cols)):
        if extents is None:
            continue
        band = Band(axis, *extents)
        shape_in[axis.value], shape_out[axis.value] = band.size_in, band.size_out
        data = replace(data, params=op_def(data.op.type).band_params(data, band))
    inputs = tuple(t if t is None or t.is_constant else replace(t, shape=tuple(shape_in)) for t in data.inputs)
    return replace(data, inputs=inputs, output=replace(data.output, shape=tuple(shape_out)))


# ---- the call sequences -----------------------------------------------------------------------

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
    cols: tuple[int, int, int, int] | None = None   # a 2-D patch: its output columns [lo, hi) from input
    #                                                 columns [lo, hi); None: whole rows


@dataclass(frozen=True)
class CallSequence:
    """A stage's layer calls in order, and the buffers they need."""

    calls: list[LayerCall]
    capacity: list[int]        # rows of each layer's buffer (the last layer has none: 0)
    computed: list[float]      # output rows (whole rows' worth) each layer computes in all
    widths: list[int] | None = None   # 2-D patches: columns of each layer's buffer; None: whole rows


def streamed_sequence(rows: list[Rows], chunk: int) -> CallSequence:
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
    return CallSequence(calls, capacity, computed)


def banded_sequence(rows: Rows, bounds: list[int]) -> CallSequence:
    """One layer's calls over the bands between `bounds` (ascending: 0, ..., out_h), in that order."""
    calls = [LayerCall(0, lo, hi, *rows.needs(lo, hi), rows.needs(lo, hi)[0], lo) for lo, hi in zip(bounds, bounds[1:])]
    return CallSequence(calls, [0], [rows.out_h])


def balanced_bounds(rows: Rows, bounds: list[int], row_in: int, row_out: int) -> list[int]:
    """Bands of a windowed layer (no more than between `bounds`) whose largest distance from the output rows a call
    writes to the first input row it reads (the output's offset under its input: Stage.distance) is the least: the
    first band, whose window starts in the padding, a row taller (KWS's 25 rows in 3 bands: 9, 8, 8, the output
    9 rows under its input, not 10); `bounds` where no split is better. No band of one row under a taller window."""
    def need(lo: int, hi: int) -> int:
        return hi * row_out - rows.needs(lo, hi)[0] * row_in

    def split(most: int) -> list[int] | None:
        cuts = [0]
        while cuts[-1] < rows.out_h:
            lo = cuts[-1]
            fits = [hi for hi in range(lo + 1, rows.out_h + 1) if need(lo, hi) <= most]
            if not fits or (fits[-1] - lo == 1 and rows.extent > 1 and rows.out_h > 1):
                return None
            cuts.append(fits[-1])
        return cuts if len(cuts) <= len(bounds) else None

    def worst(cuts: list[int]) -> int:
        return max(need(lo, hi) for lo, hi in zip(cuts, cuts[1:]))

    best = bounds
    while (cuts := split(worst(best) - 1)) is not None:
        best = cuts
    return best


def recomputed_sequence(rows: list[Rows], band_rows: int) -> CallSequence:
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
    return CallSequence(calls, capacity, computed)


def patch_sequence(rows: list[Rows], cols: list[Rows], band_rows: int, band_cols: int) -> CallSequence:
    """2-D patches, halos recomputed: for each patch of `band_rows` × `band_cols` of the last layer's
    output, every layer computes the rows and columns the next one reads. Each layer's buffer holds one
    patch (the first layer's input patch and the last one's output are copied in and out by the stage)."""
    k = len(rows)
    capacity, widths, computed = [0] * k, [0] * k, [0.0] * k
    calls: list[LayerCall] = []
    for band_lo in range(0, rows[-1].out_h, band_rows):
        for col_lo in range(0, cols[-1].out_h, band_cols):
            lo, hi = band_lo, min(band_lo + band_rows, rows[-1].out_h)
            c_lo, c_hi = col_lo, min(col_lo + band_cols, cols[-1].out_h)
            patch: list[LayerCall] = []
            for j in reversed(range(k)):
                in_lo, in_hi = rows[j].needs(lo, hi)
                c_in_lo, c_in_hi = cols[j].needs(c_lo, c_hi)
                patch.append(LayerCall(j, lo, hi, in_lo, in_hi, 0, 0, cols=(c_lo, c_hi, c_in_lo, c_in_hi)))
                capacity[j], widths[j] = max(capacity[j], hi - lo), max(widths[j], c_hi - c_lo)
                computed[j] += (hi - lo) * (c_hi - c_lo) / cols[j].out_h
                lo, hi, c_lo, c_hi = in_lo, in_hi, c_in_lo, c_in_hi
            calls += patch[::-1]
    return CallSequence(calls, capacity, computed, widths)


# ---- a stage -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Stage:
    """A chain of layers tiled in bands (or 2-D patches): steps first .. first + len(layers) − 1."""

    first: int
    layers: tuple[OpData, ...]
    band_rows: int       # rows of a call (streamed) or of a band of the last layer's output (recomputed)
    cached: bool         # streamed with cached halos, else recomputed bands
    sequence: CallSequence = field(compare=False, repr=False)
    row_bytes: tuple[int, ...] = ()    # bytes of one output row of each layer
    work_bytes: int = 0                # the largest of the layers' own scratch
    band_cols: int = 0                 # columns of a 2-D patch of the last layer's output; 0: whole rows
    row_blocks: tuple[int, ...] = ()   # output rows each layer's kernel computes at once (Winograd's tiles: 2)

    def pixel_bytes(self, j: int) -> int:
        """Bytes of one pixel of layer j's output (j = −1: of the stage's input)."""
        t = self.layers[j].output if j >= 0 else self.layers[0].inputs[0]
        return t.nbytes // (t.shape[1] * t.shape[2])

    def patch_bytes(self, j: int, call: LayerCall) -> int:
        """Bytes of the patch `call` (of layer j ≥ 0) reads (j − 1) or writes (j), 2-D patches."""
        lo, hi, c_lo, c_hi = (call.lo, call.hi, *call.cols[:2]) if call.layer == j else \
            (call.in_lo, call.in_hi, *call.cols[2:])
        return (hi - lo) * (c_hi - c_lo) * self.pixel_bytes(j)

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
        """Kernel calls of the stage (moves not counted; a 2-D patch's copies in and out counted)."""
        return sum((c.hi > c.lo) + (c.cols is not None and c.layer in (0, len(self.layers) - 1))
                   for c in self.sequence.calls)

    @property
    def moved_bytes(self) -> int:
        """Bytes the cached halo rows move in all (2-D patches: copied in and out)."""
        last = len(self.layers) - 1
        return sum(c.keep_rows * self.row_bytes[c.layer] for c in self.sequence.calls) + \
            sum(self.patch_bytes(c.layer - 1, c) * (c.layer == 0) + self.patch_bytes(c.layer, c) * (c.layer == last)
                for c in self.sequence.calls if c.cols is not None)

    @property
    def buffer_bytes(self) -> list[int]:
        """Each buffer's bytes: rows of layers 0 .. k − 2; 2-D patches: the input's patch, then layers 0 .. k − 1's."""
        widths = self.sequence.widths
        if widths is None:
            return [align(c * b) for c, b in zip(self.sequence.capacity[:-1], self.row_bytes)]
        first = max(self.patch_bytes(-1, c) for c in self.sequence.calls if c.layer == 0)
        return [align(first)] + [align(c * w * self.pixel_bytes(j)) for j, (c, w) in
                                 enumerate(zip(self.sequence.capacity, widths))]

    @property
    def buffer_offsets(self) -> list[int]:
        """Cached: one after another; recomputed: adjacent buffers at opposite ends of the region."""
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
        return sum(int(macs(d) * (done - r.out_h) // r.out_h)
                   for d, r, done in zip(self.layers, map(row_map, self.layers), self.sequence.computed))

    def band_call_instructions(self, macs: Callable[[OpData], int], costs: Costs) -> float:
        """What the calls beyond one a layer add: each call's set-up, a depthwise call's per channel, the
        convolution pixels each call leaves out of its GEMM's blocks beyond those the whole layer does, and the
        rows a kernel computing blocks of rows (Winograd's tiles) computes past a call's rows beyond the whole
        layer's."""
        total = (self.calls - len(self.layers)) * costs.per_call
        for j, data in enumerate(self.layers):
            _, out_h, out_w, channels = data.output.shape
            calls = [c for c in self.sequence.calls if c.layer == j and c.hi > c.lo]
            pixels = [(c.hi - c.lo) * (c.cols[1] - c.cols[0] if c.cols else out_w) for c in calls]
            block = self.row_blocks[j] if self.row_blocks else 1
            past = sum(-(c.hi - c.lo) % block * (c.cols[1] - c.cols[0] if c.cols else out_w) for c in calls)
            total += (past - -out_h % block * out_w) * macs(data) / (out_h * out_w) * costs.per_mac
            if data.op.type == "DEPTHWISE_CONV_2D":
                total += (len(pixels) - 1) * channels * costs.per_call_channel
            elif data.op.type == "CONV_2D":
                tails = sum(p % costs.pixel_block for p in pixels) - out_h * out_w % costs.pixel_block
                total += tails * macs(data) / (out_h * out_w) * costs.per_tail_mac
        return total

    def extra_instructions(self, macs: Callable[[OpData], int], costs: Costs) -> int:
        """What tiling adds to the layers' instructions, as `costs` estimate it: recomputed MACs, the
        calls beyond one a layer, the moved halo rows."""
        return round(self.extra_macs(macs) * costs.per_mac + self.band_call_instructions(macs, costs)
                     + self.moved_bytes * costs.per_moved_byte)

    def overwrite(self, descending: tuple[Kernel, ...] = ()) -> Overwrite | None:
        """How far the stage's output may overlap its input (its calls write the output rows in order, each
        call's rows under the input rows it and every later call read): under the input's start as the
        calls run; with `descending` (the `reversed` stage's calls, a one-layer stage's), also over it."""
        if self.band_cols:
            return None
        below = self.distance(up=False)
        above = self.reversed().distance(up=True) if descending else None
        return Overwrite(self.input, self.output_bytes if below is None else below, above, descending)

    def distance(self, up: bool) -> int | None:
        """The least offset of the output under (up: over) the input that keeps every read of the calls intact."""
        t, last = self.input, len(self.layers) - 1
        row_in, row_out = self.input_row_bytes, self.row_bytes[-1]
        # an elementwise last layer reads each element of its own rows before it writes it, ascending: the output
        # may start at its input's rows' start
        streams = row_in == row_out and row_map(self.layers[last]).elementwise

        def reads(c: LayerCall) -> tuple[int, int] | None:
            if c.hi == c.lo:
                return None
            if c.layer == 0:
                return c.in_lo, c.in_hi
            return (c.lo, c.hi) if t in self.side_inputs(c.layer) else None

        worst, bound = None, None
        for c in reversed(self.sequence.calls):
            r = reads(c)
            own = bound   # the rows the later calls read, and this one's where its writes may overtake them
            if r is not None:
                edge = r[1] if up else r[0]
                bound = edge if bound is None else max(bound, edge) if up else min(bound, edge)
                in_place = streams and not up and c.layer == last and r == (c.lo, c.hi)
                own = (c.hi if own is None else min(own, c.hi)) if in_place else bound
            if c.layer == last and c.hi > c.lo and own is not None:
                need = own * row_in - c.lo * row_out if up else c.hi * row_out - own * row_in
                worst = need if worst is None else max(worst, need)
        return worst

    def reversed(self) -> Stage:
        """The stage with its calls in reverse order (a one-layer stage's bands are independent); a one-layer stage's
        bands mirrored (their heights in reverse order) where that lets the output start closer over its input (the
        taller band of `balanced_bounds` then at the bottom, the first to run)."""
        same = replace(self, sequence=replace(self.sequence, calls=self.sequence.calls[::-1]))
        if len(self.layers) > 1:
            return same
        heights = [c.hi - c.lo for c in self.sequence.calls][::-1]
        mirrored = banded_sequence(row_map(self.layers[0]), list(accumulate(heights, initial=0)))
        other = replace(self, sequence=replace(mirrored, calls=mirrored.calls[::-1]))
        distances = [s.distance(up=True) for s in (same, other)]
        return other if None not in distances and distances[1] < distances[0] else same

    @property
    def output_bytes(self) -> int:
        return self.layers[-1].output.nbytes

    @property
    def input_row_bytes(self) -> int:
        """Bytes of one row of the stage's input."""
        t = self.layers[0].inputs[0]
        return t.nbytes // t.shape[1]

    def describe(self, macs: Callable[[OpData], int], costs: Costs) -> TiledStage:
        """The stage as metadata.json and the summary give it."""
        return TiledStage(tuple(d.op.index for d in self.layers), tuple(d.op.type for d in self.layers),
                          self.band_rows, self.cached, self.calls, self.scratch_bytes, self.moved_bytes,
                          self.extra_macs(macs), self.extra_instructions(macs, costs), self.band_cols)


def band_height(height: int, bands: int, extent: int, row_pixels: int, block: int, row_block: int = 1) -> int:
    """Rows of a band for about `bands` bands of `height` rows: a multiple of the rows the kernel computes at once
    (`row_block`); one block if `bands` is as many rows, else two rows or more and, for a window taller than a row
    (`extent`), the last band not a single row (a 3-row window then lacks rows: the kernels' fast paths want at
    least three). Of those, up to twice the rows, the first whose bands leave no more pixels out of the GEMM's
    `block`s than the whole layer does (bands of `row_pixels`-wide rows)."""
    if bands >= height:
        return min(row_block, height)
    first = max(2, height // bands)
    fits = [b for b in range(first, height + 1) if (extent == 1 or height % b != 1) and b % row_block == 0] or [height]

    def tails(b: int) -> int:
        return sum(min(b, height - lo) * row_pixels % block for lo in range(0, height, b))

    whole = height * row_pixels % block
    return next((b for b in fits if b < 2 * first and tails(b) <= whole), fits[0])


def banded_layers(prepared: list[OpData], steps: list[Step], aliases: AliasSets, storage: Storage, taken: set[int],
                  lowered_band: BandLowering, row_block: Callable[[int], int], bands: int, costs: Costs) -> list[Stage]:
    """One-layer stages, in about `bands` bands of the output's rows (a convolution's of whole GEMM blocks
    where it can), for every layer outside `taken` that can be tiled and is its input's last reader: its
    output may then overlap its input (in the arena), below it computing the bands downwards, above it
    upwards (Stage.overwrite). A stage's scratch is its band kernels' (a band's GEMM may take fewer rows a call)."""
    out = []
    for i, (data, (op, low)) in enumerate(zip(prepared, steps)):
        rows = row_map(data) if i not in taken and low.kernels and low.alias_of is None and op.outputs else None
        if rows is None or rows.out_h < 2:
            continue
        block = costs.pixel_block if data.op.type == "CONV_2D" else 1
        height = band_height(rows.out_h, bands, rows.extent, data.output.shape[2], block, row_block(i))
        stage = make_stage(prepared, [i], height, True, lambda _: 0, row_block)
        if block == 1 and row_block(i) == 1 and rows.extent > 1:
            cuts = balanced_bounds(rows, [*range(0, rows.out_h, height), rows.out_h], stage.input_row_bytes,
                                   stage.row_bytes[0])
            stage = replace(stage, band_rows=max(b - a for a, b in zip(cuts, cuts[1:])),
                            sequence=banded_sequence(rows, cuts))
        into = storage.tensor_buffers.get(aliases.root(stage.input))
        if into is not None and into.last_use == i and aliases.root(stage.output) in storage.tensor_buffers:
            # (a layer without scratch has none in bands: not lowered for them here)
            out.append(replace(stage, work_bytes=own_scratch_bytes(low) and band_scratch_bytes(stage, lowered_band)))
    return out


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
            elementwise = row_map(prepared[chain[-1] + 1]).elementwise
            if (t not in nxt.inputs if elementwise else nxt.inputs[0] != t) or len(consumers.get(t, [])) != 1 \
                    or t in graph.outputs:
                break
            chain.append(chain[-1] + 1)
        if len(chain) >= 2:
            out.append(chain)
    return out


def make_stage(prepared: list[OpData], positions: list[int], band_rows: int, cached: bool,
               work: Callable[[int], int], row_block: Callable[[int], int], band_cols: int = 0) -> Stage:
    """The stage of the layers at `positions`: bands of `band_rows`, or 2-D patches `band_cols` wide."""
    layers = tuple(prepared[i] for i in positions)
    rows = [row_map(d) for d in layers]
    sequence = patch_sequence(rows, [col_map(d) for d in layers], band_rows, band_cols) if band_cols else \
        streamed_sequence(rows, band_rows) if cached else recomputed_sequence(rows, band_rows)
    row_bytes = tuple(d.output.nbytes // d.output.shape[1] for d in layers)
    return Stage(positions[0], layers, band_rows, cached, sequence, row_bytes,
                 max(work(i) for i in positions), band_cols, tuple(map(row_block, positions)))


def own_scratch_bytes(low: Lowered) -> int:
    """Bytes of the scratch buffers an op's kernels use (a named one counted once)."""
    sizes: dict[Any, int] = {}
    for k, kernel in enumerate(low.kernels):
        for a in kernel.args:
            if isinstance(a, Scratch):
                sizes[a.name or k] = align(a.nbytes)
    return sum(sizes.values())


def staged_steps(steps: list[Step], stage: Stage, kernels: list[Kernel],
                 overwrite: Overwrite | None = None) -> list[Step]:
    """`steps` with the stage's first step running `kernels` from the stage input to its output (which may
    overwrite the input as `overwrite` says) and its other steps empty (their ops keep their index:
    per-op metadata and hooks stay aligned)."""
    out = list(steps)
    first = stage.layers[0].op
    sides = [i for j in range(len(stage.layers)) for i in stage.side_inputs(j)]
    out[stage.first] = (Op(first.index, first.type, [stage.input, *sides], [stage.output]),
                        Lowered(kernels, overwrites=overwrite))
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
    function = CFunction.of(f"keep_rows_{src}_{nbytes}", "uint8_t* buf")
    words = nbytes // 4 if src % 4 == 0 else 0   # buffers start word-aligned (memory_plan.align)
    lines = [f"{function.head} {{"]
    if words:
        lines += ["  uint32_t* to = (uint32_t*)buf;",
                  f"  const uint32_t* from = (const uint32_t*)(buf + {src}u);"]
    if words >= 4:
        lines += [f"  for (uint32_t i = 0; i < {words // 4}u; ++i, to += 4, from += 4) {{",
                  "    uint32_t a = from[0], b = from[1], c = from[2], d = from[3];",
                  "    to[0] = a; to[1] = b; to[2] = c; to[3] = d;",
                  "  }"]
    lines += [f"  to[{i}] = from[{i}];" for i in range(words % 4)]
    if nbytes > 4 * words:
        lines += [f"  for (uint32_t i = {4 * words}u; i < {nbytes}u; ++i) buf[i] = buf[{src}u + i];"]
    lines += ["  return 0;", "}"]
    return Kernel("keep_rows", [buffer], c_source="\n".join(lines) + "\n", c_function=function)


def copy_kernel(src: View, dst: View, rows: int, nbytes: int, src_stride: int, dst_stride: int) -> Kernel:
    """`rows` runs of `nbytes` copied from `src` (one every `src_stride` bytes) to `dst` (every
    `dst_stride`): a 2-D patch gathered from its tensor's rows, or written back into them."""
    function = CFunction.of(f"copy_patch_{rows}_{nbytes}_{src_stride}_{dst_stride}",
                            "const uint8_t* src, uint8_t* dst")
    source = (f"{function.head} {{\n"
              f"  for (uint32_t r = 0; r < {rows}u; ++r)\n"
              f"    __builtin_memcpy(dst + r * {dst_stride}u, src + r * {src_stride}u, {nbytes}u);\n"
              "  return 0;\n}\n")
    return Kernel("copy_patch", [src, dst], c_source=source, c_function=function)


Extents = tuple[int, int, int]   # a band's input and output extent and leading padding along an axis (band_data's)
BandLowering = Callable[[int, Extents, Extents | None], Lowered]
# the layer at a step lowered for a band's (rows, cols) geometry (TVM lowers each once: tile's `lowered_band`)


def call_geometry(stage: Stage, call: LayerCall) -> tuple[Extents, Extents | None]:
    """The (rows, cols) extents `call` lowers its layer for."""
    data = stage.layers[call.layer]
    r, c = row_map(data), col_map(data)
    rows = (call.in_hi - call.in_lo, call.hi - call.lo, call.in_lo - (call.lo * r.stride - r.pad))
    cols = None if call.cols is None else \
        (call.cols[3] - call.cols[2], call.cols[1] - call.cols[0], call.cols[2] - (call.cols[0] * c.stride - c.pad))
    return rows, cols


def band_scratch_bytes(stage: Stage, lowered_band: BandLowering) -> int:
    """The most scratch a call of the stage's kernels takes (a band's kernels may take less than the whole layer's)."""
    return max((own_scratch_bytes(lowered_band(stage.first + c.layer, *call_geometry(stage, c)))
                for c in stage.sequence.calls if c.hi > c.lo), default=0)


def stage_kernels(stage: Stage, lowered_band: BandLowering) -> list[Kernel]:
    """Every band's (or patch's) calls, in order: each layer's kernels lowered for its patch geometry
    (`lowered_band`), their input and output bound to rows of the stage's tensors
    or buffers, their scratch in the work area; a 2-D patch copied from the stage's input into the first
    buffer and from the last into its output."""
    scratch = Scratch(stage.scratch_bytes, TILE_SCRATCH)
    offsets = stage.buffer_offsets
    last = len(stage.layers) - 1
    calls: list[Kernel] = []
    for call in stage.sequence.calls:
        j, data = call.layer, stage.layers[call.layer]
        if call.keep_rows:
            row = stage.row_bytes[j]
            calls.append(move_kernel(View(scratch, offsets[j]), call.keep_from * row, call.keep_rows * row))
        if call.hi == call.lo:
            continue
        rows, cols = call_geometry(stage, call)
        in_row = stage.row_bytes[j - 1] if j else stage.input_row_bytes
        if call.cols is None:
            views = {stage.chain_input(j): View(stage.input, call.in_at * in_row) if j == 0 else
                     View(scratch, offsets[j - 1] + call.in_at * in_row),
                     data.op.outputs[0]: View(stage.output, call.at * stage.row_bytes[j]) if j == last else
                     View(scratch, offsets[j] + call.at * stage.row_bytes[j])}
            for side in stage.side_inputs(j):
                views.setdefault(side, View(side, call.lo * stage.row_bytes[j]))
        else:
            views = {stage.chain_input(j): View(scratch, offsets[j]), data.op.outputs[0]: View(scratch, offsets[j + 1])}
            if j == 0:
                pixel = stage.pixel_bytes(-1)
                calls.append(copy_kernel(View(stage.input, call.in_lo * in_row + call.cols[2] * pixel),
                                         View(scratch, offsets[0]), rows[0], cols[0] * pixel, in_row, cols[0] * pixel))
        calls += bind(lowered_band(stage.first + j, rows, cols), data.op, views, scratch, stage.region_bytes)
        if call.cols is not None and j == last:
            pixel, row = stage.pixel_bytes(j), stage.row_bytes[j]
            calls.append(copy_kernel(View(scratch, offsets[j + 1]), View(stage.output, call.lo * row + call.cols[0] * pixel),
                                     rows[1], cols[1] * pixel, cols[1] * pixel, row))
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

def band_row_choices(height: int) -> list[int]:
    """Band heights worth trying for an output of `height` rows: 1, 2, 3, 4, 6, 8, 12, ... below it."""
    sizes = sorted({n * m for n in (1, 3) for m in (1, 2, 4, 8, 16, 32, 64)})
    return [r for r in sizes if r < height]


def band_col_choices(width: int) -> list[int]:
    """Widths of 2-D patches worth trying for an output `width` columns wide: a half, a third, ... an eighth."""
    return sorted({-(-width // n) for n in range(2, 9) if n <= width})


def _live_peak(buffers: list[tuple[int, int, int]], steps: int) -> int:
    """The most bytes live at one step: buffers as (aligned bytes, first step, last step)."""
    live = [0] * steps
    for nbytes, first, last in buffers:
        for s in range(first, last + 1):
            live[s] += nbytes
    return max(live, default=0)


def _estimate(storage: Storage, steps: int, stage: Stage, intermediates: set[int]) -> tuple[int, int]:
    """The lower bound of the plan with `stage` tiled, from the current plan's buffers (the stage's output
    over its input where it may overwrite it), and the bytes live at the stage's step."""
    positions = range(stage.first, stage.first + len(stage.layers))
    out_root, in_root = storage.aliases.root(stage.output), storage.aliases.root(stage.input)
    buffers = [(align(stage.scratch_bytes), stage.first, stage.first)]
    for root, b in storage.tensor_buffers.items():
        if root in intermediates:
            continue
        first = min(b.first_use, stage.first) if root == out_root else b.first_use
        last = stage.first if root == in_root and b.last_use in positions else b.last_use
        buffers.append((align(b.nbytes), first, last))
    buffers += [(align(b.nbytes), b.first_use, b.last_use) for (step, _), b in storage.scratch.items()
                if step not in positions]
    over, into, out = stage.overwrite(), storage.tensor_buffers.get(in_root), storage.tensor_buffers.get(out_root)
    if over is not None and into is not None and out is not None and into.last_use in positions:
        pair = Buffer("", out.nbytes, stage.first, stage.first, overwrites=Buffer("", into.nbytes, 0, stage.first),
                      below=over.below)
        buffers.append((footprint(pair) - align(into.nbytes) - align(out.nbytes), stage.first, stage.first))
    return _live_peak(buffers, steps), _live_peak([b for b in buffers if b[1] <= stage.first <= b[2]], steps)


def shapes(prepared: list[OpData], positions: list[int], two_d: bool) -> list[tuple[int, bool, int]]:
    """The (band rows, cached, patch columns) the search tries for the layers at `positions`: bands of
    rows both ways; with `two_d`, also 2-D patches (recomputed halos) when every layer can be split by columns."""
    out = prepared[positions[-1]].output.shape
    tried = [(rows, cached, 0) for rows in band_row_choices(out[1]) for cached in HALOS]
    if two_d and all(col_map(prepared[i]) is not None for i in positions):
        tried += [(rows, False, cols) for rows in [*band_row_choices(out[1]), out[1]]
                  for cols in band_col_choices(out[2])]
    return tried


def search(graph: Graph, prepared: list[OpData], steps: list[Step], aliases: AliasSets, storage: Storage,
           budget: int, macs: Callable[[OpData], int], costs: Costs, taken: set[int], row_block: Callable[[int], int],
           two_d: bool = False, limit: int = 0) -> tuple[Stage, Storage] | None:
    """The stage (not over steps in `taken`; 2-D patches too with `two_d`) within `budget` extra
    instructions that brings the arena to `limit` with the fewest extra instructions (then calls: the
    least code), or where none does, whose plan has the lowest arena (then the fewest extra instructions,
    then calls); None if none lowers it."""
    peak_live = {s: sum(align(b.nbytes) for b in storage.plan.buffers if b.first_use <= s <= b.last_use)
                 for s in range(len(steps))}
    peak = max(peak_live, key=lambda s: (peak_live[s], -s))
    candidates: list[tuple[tuple[int, int, int, int], Stage]] = []
    work = {i: own_scratch_bytes(steps[i][1]) for i in range(len(steps))}
    for chain in chains(graph, prepared, steps):
        if taken & set(chain) or chain[0] > peak:
            continue
        for k in range(2, len(chain) + 1):
            positions = chain[:k]
            if positions[-1] < peak:
                continue
            intermediates = {aliases.root(prepared[i].op.outputs[0]) for i in positions[:-1]}
            for band_rows, cached, band_cols in shapes(prepared, positions, two_d):
                stage = make_stage(prepared, positions, band_rows, cached, work.__getitem__, row_block, band_cols)
                extra = stage.extra_instructions(macs, costs)
                if extra <= budget:
                    est, local = _estimate(storage, len(steps), stage, intermediates)
                    # at its own step, under `limit` is enough: the other steps are other stages' and bands'
                    candidates.append(((est, max(local, limit), extra, stage.calls), stage))
    enough = sorted((c for c in candidates if c[0][0] <= limit), key=lambda c: (c[0][2], c[0][3]))
    for _, stage in enough[:8]:
        trial = plan_storage(graph, staged_steps(steps, stage, placeholder(stage), stage.overwrite()), aliases)
        if trial.plan.arena_bytes <= limit:
            return stage, trial
    best: tuple[tuple[int, int, int, int], Stage, Storage] | None = None
    for (_, local, extra, calls), stage in sorted(candidates, key=lambda c: c[0])[:8]:
        trial = plan_storage(graph, staged_steps(steps, stage, placeholder(stage), stage.overwrite()), aliases)
        # the bytes at the stage's own step (down to `limit`) break ties: a later stage may lower the peak elsewhere
        key = (trial.plan.arena_bytes, local, extra, calls)
        if best is None or key < best[0]:
            best = (key, stage, trial)
    if best is None or best[2].plan.arena_bytes >= storage.plan.arena_bytes:
        return None
    return best[1], best[2]


def tile(graph: Graph, prepared: list[OpData], steps: list[Step], aliases: AliasSets, storage: Storage,
         limit: int, max_recompute: float, lower: Callable[[OpData, Any], Lowered],
         macs: Callable[[OpData], int], costs: Costs) -> tuple[list[Step], Storage, Tiling | None]:
    """Steps and storage with stages tiled, stage after stage while the arena is above `limit` and drops,
    their estimated extra instructions within `max_recompute` of the model's: bands of whole rows, or
    where they cannot reach `limit`, 2-D patches too; unchanged (Tiling None) if it fits as it is."""
    if storage.plan.arena_bytes <= limit:
        return steps, storage, None
    total = sum(macs(d) for d in prepared)
    # the model's instructions, estimated: every op's MACs (at least an instruction's worth per output
    # value: pooling, activations) and its call
    instructions = round(sum(max(macs(d), d.output.size) for d in prepared) * costs.per_mac
                         + len(prepared) * costs.per_call)
    budget = int(max_recompute * instructions)

    def staged(two_d: bool) -> tuple[list[Stage], Storage]:
        stages: list[Stage] = []
        current, current_storage = steps, storage
        while len(stages) < MAX_STAGES and current_storage.plan.arena_bytes > limit:
            taken = {s.first + j for s in stages for j in range(len(s.layers))}
            spent = sum(s.extra_instructions(macs, costs) for s in stages)
            found = search(graph, prepared, current, aliases, current_storage, budget - spent, macs, costs, taken,
                           row_block, two_d, limit)
            if found is None:
                break
            stage, current_storage = found
            stages.append(stage)
            current = staged_steps(current, stage, placeholder(stage), stage.overwrite())
        return stages, current_storage

    def with_bands(stages: list[Stage]) -> tuple[list[Stage], Storage]:
        """`stages`, then one-layer bands of the other layers: the fewest bands that reach `limit`, else
        the lowest arena."""
        current = steps
        for stage in stages:
            current = staged_steps(current, stage, placeholder(stage), stage.overwrite())
        taken = {s.first + j for s in stages for j in range(len(s.layers))}
        best: tuple[list[Stage], Storage] | None = None

        def plan_with(layers: list[Stage]) -> Storage:
            banded = current
            for stage in layers:
                banded = staged_steps(banded, stage, placeholder(stage), stage.overwrite(tuple(placeholder(stage))))
            return plan_storage(graph, banded, aliases)

        for bands in BANDS:
            unbanded = plan_storage(graph, current, aliases)
            layers = banded_layers(prepared, current, aliases, unbanded, taken, lowered_band, row_block, bands, costs)
            trial = plan_with(layers)
            for stage in layers[::-1]:    # each kernel geometry costs flash: keep only the bands the arena needs
                kept = [s for s in layers if s is not stage]
                if (fewer := plan_with(kept)).plan.arena_bytes <= trial.plan.arena_bytes:
                    layers, trial = kept, fewer
            if best is None or trial.plan.arena_bytes < best[1].plan.arena_bytes:
                best = (stages + layers, trial)
            if trial.plan.arena_bytes <= limit:
                break
        return best

    band_lowerings: dict[tuple, Lowered] = {}

    def lowered_band(i: int, rows: Extents, cols: Extents | None) -> Lowered:
        if (i, rows, cols) not in band_lowerings:
            band_lowerings[i, rows, cols] = lower(band_data(prepared[i], rows, cols), steps[i][1].variant)
        return band_lowerings[i, rows, cols]

    row_block = {i: op_def(d.op.type).band_row_block(d, steps[i][1].variant) for i, d in enumerate(prepared)}.__getitem__
    stages, planned = with_bands([])
    if planned.plan.arena_bytes > limit:
        searched, searched_plan = staged(two_d=False)
        if searched_plan.plan.arena_bytes > limit:
            patched, patched_plan = staged(two_d=True)
            if patched_plan.plan.arena_bytes < searched_plan.plan.arena_bytes:
                searched = patched
        combined, combined_plan = with_bands(searched)
        if combined_plan.plan.arena_bytes < planned.plan.arena_bytes:
            stages, planned = combined, combined_plan
    if planned.plan.arena_bytes >= storage.plan.arena_bytes:
        stages = []
    tiled = steps
    for stage in stages:
        kernels = stage_kernels(stage, lowered_band)
        descending = () if len(stage.layers) > 1 else tuple(stage_kernels(stage.reversed(), lowered_band))
        tiled = staged_steps(tiled, stage, kernels, stage.overwrite(descending))
    final = plan_storage(graph, tiled, aliases) if stages else storage
    extra_macs = sum(s.extra_macs(macs) for s in stages)
    extra_instructions = sum(s.extra_instructions(macs, costs) for s in stages)
    return tiled, final, Tiling(tuple(s.describe(macs, costs) for s in stages), storage.plan.arena_bytes,
                                final.plan.arena_bytes, extra_macs, round(100 * extra_macs / max(total, 1), 2),
                                extra_instructions, round(100 * extra_instructions / max(instructions, 1), 2))
