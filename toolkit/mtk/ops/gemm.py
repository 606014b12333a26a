"""The int8 GEMM behind CONV_2D and FULLY_CONNECTED, as TIR: out[p, c] = requant(Σ_k a[p, k]·w[c, k] + bias[c]).

Rows `a` are the input itself (fully connected, 1×1 stride-1 unpadded conv) or im2col patches
(padding read as the input zero point, which the folded bias cancels). Two rows at a time (one
when there is one; "2x4/fused" up to QUAD_PAIRS pairs a call, one after the other: quad_call_pairs) are packed
into an arena scratch in the layout the micro-kernels want (int16 in SXTB16 order on DSP cores, int8 chunks of 16
on Helium cores, row pairs in one int32 on the Cortex-M3: c/mtk_dot_s8.h), then each 2×2 (rows × channels), 2×4,
1×4 or 1×8 block is an extern call to a C micro-kernel over weights interleaved offline per block (pack_weights,
pack_weight_pairs, pack_weights_int16); TVM generates the loops, the byte gathering of patches whose channels do not
come in 4s, and the requantization epilogue (requant.py). A direct micro-kernel (the Cortex-M3's 1x8/s8) reads
rows of the input as they are instead: no packing, no scratch, its last channel tile as narrow as the channels left.
The block and the weights' format are the micro-kernel a Variant names: a default per CPU, or one `mtk tune`
measured best for the layer (tuning.py).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import tvm
from tvm.script import tirx as T

from ..kernels.signature import CFunction
from ..kernels.table import (CORE_BAND_FIRST, DOT_HEADER, GEMM_BY_ID, IM2COL_HEADER, RUNS_HEADER, KernelSpec,
                             gemm_choices, weight_group)
from ..target import Cpu
from .asm_schedule import two_loads_beat_ldrd
from .base import Const, Kernel, Lowered, OpData, OpDef, Scratch, constant_kernel, jit, specialize
from .geometry import ConvGeometry
from .gemm_band import band_pairs, band_suits, gemm_band_kernel, scratch_room
from .gemm_calls import KernelCalls, RowPacking, row_source, runs_order, runs_stage_bytes
from .gemm_mve import gemm_mve_kernel
from .microkernels import (GROUP, HELIUM_CHUNK, QUAD_STRAIGHT, STREAM_ALIGN, constant_channels, fused_stream_bytes,
                           fused_stream_params, live_channel_tables, pack_fused_stream, pack_quad_stream,
                           quad_stream_bytes, shares_requantization, worth_leaving_out)
from .requant import RSHIFT_FIELDS, Requant
from .variants import Variant

QUADS_KERNEL = "2x4/fused"
COMPACT_KERNEL = "2x4/compact"   # QUADS_KERNEL's products, a pair a call, in a loop of little code (its C's pairs 0)
QUAD_KERNELS = (QUADS_KERNEL, COMPACT_KERNEL)   # the kernels of pack_quad_stream's stream
BAND_KERNEL = "2x4/band"
# Row pairs a call of QUADS_KERNEL's straight kernels takes, per core (else 2; each quad's weights read for each pair in
# turn): no more than their C's MTK_QUAD2_PAIRS
QUAD_PAIRS = {"cortex-m4": 4}
QUAD_PAIRS_MIN_GROUPS = 8   # shallower quads (their weights 128 B or less) take one pair a call
CHUNK = 256   # k values a chunked variant packs at a time: a multiple of every weight group
LEAN_CHUNK = CHUNK // 2   # a leaner variant's chunk (OpDef.leaner: under a RAM limit), halved again by each step down
LEANEST_CHUNK = CHUNK // 4   # ... to this one


@dataclass(frozen=True)
class Patches(ConvGeometry):
    """How an output pixel's im2col row is gathered from an NHWC input: taps outside it read `in_zp`."""

    in_zp: int


def micro_kernel(variant: Variant) -> KernelSpec:
    """The micro-kernel a GEMM's variant names."""
    return GEMM_BY_ID[variant.kernel]


def gemm_variants(cpu: Cpu, rows: int, fused: bool = True, channels: int | None = None,
                  input_rows: bool = False, depth: int | None = None) -> list[Variant]:
    """The variants a GEMM of `rows` rows (and `channels` channels of `depth` values; `input_rows`: rows of the input
    itself) can take on `cpu`, the default first (kernels/table.gemm_choices)."""
    return [Variant(mk.id) for mk in gemm_choices(cpu, rows, fused, channels, input_rows, depth)]


def packed_weight_bytes(cols: int, depth: int, variant: Variant, group: int) -> int:
    """Flash bytes of weights [cols, depth] packed for `variant`'s micro-kernel."""
    return micro_kernel(variant).weight_bytes(cols, depth, group)


@dataclass(frozen=True)
class GemmParams:
    """What a GEMM op's prepare computes: its kernel's name, weights [channels, depth], the bias with
    −in_zp·Σw folded in, the requantization, and where rows come from (None: the input's rows)."""

    name: str
    weights: np.ndarray
    bias: np.ndarray
    requant: Requant
    patches: Patches | None = None


class GemmOpDef(OpDef):
    """An op computed by the GEMM: `prepare` returns OpData with GemmParams; its variants are the
    Variants of gemm_variants (the default first), one per layer chosen by `mtk tune`."""

    def variants(self, data: OpData) -> list[Variant]:
        p: GemmParams = data.params
        rq = p.requant
        usable = gemm_variants(data.cpu, data.output.size // p.weights.shape[0],   # Helium's fused kernels
                               data.cpu.mve or rq.rshift_table is not None,      # shift left too
                               p.weights.shape[0], p.patches is None, p.weights.shape[1])
        stream = stream_params(p)
        usable = [v for v in usable if micro_kernel(v).weights != "fused" or stream is not None]
        if usable and usable[0].kernel == QUADS_KERNEL and not quads_suit(stream, rq):   # the pairs' kernel first
            pairs = next(i for i, v in enumerate(usable) if v.kernel not in QUAD_KERNELS)   # (2x2/fused)
            usable = [usable[pairs], *usable[:pairs], *usable[pairs + 1:]]
        channels, depth = p.weights.shape
        rows = data.output.size // channels
        if not (quads_suit(stream, rq) and band_suits(rows, channels, depth, p.patches is None)):
            return [v for v in usable if v.kernel != BAND_KERNEL]
        most_depth, most_channels = CORE_BAND_FIRST.get(data.cpu.name, (0, 0))
        first = depth <= most_depth and channels <= (most_channels or channels) \
            and live_channels(stream, rq, depth // GROUP, 4) is None
        if first and any(v.kernel == BAND_KERNEL for v in usable):   # (constant channels: 2x4/fused leaves them out)
            usable = [Variant(BAND_KERNEL), *(v for v in usable if v.kernel != BAND_KERNEL)]
        return usable

    def weight_bytes(self, data: OpData, variant: Variant) -> int:
        """Flash bytes of the op's weights packed for `variant` (what gemm_kernel packs)."""
        channels, depth = data.params.weights.shape
        return packed_weight_bytes(channels, depth, variant, weight_group(data.cpu))

    def constant_passes(self, data: OpData, variant: Variant | None) -> int:
        """The GEMM's row blocks (its micro-kernel's rows; the band kernel's bands of pairs): each reads every
        channel's weights once."""
        p = data.params
        if not isinstance(p, GemmParams) or p.requant.constant_output is not None:
            return 1
        variant = variant or self.variants(data)[0]
        channels, depth = p.weights.shape
        rows = data.output.size // channels
        if variant.kernel == BAND_KERNEL:
            return -(-rows // (2 * band_pairs(rows, depth, data.inputs[0].size + data.output.size)))
        return -(-rows // micro_kernel(variant).rows)

    def chunked(self, data: OpData, variant: Variant) -> Variant | None:
        """`variant` packing a chunk of a row at a time (a scratch of a chunk and the partial sums, not
        of the row): CHUNK values of rows from the input itself, one kernel row of im2col taps (a
        multiple of the weight group) when that scratch is the smaller; else None."""
        return self.in_chunks(data, variant, CHUNK)

    def leaner(self, data: OpData, variant: Variant) -> Variant | None:
        """Rows of the input itself packed LEAN_CHUNK values at a time where `variant` packs more, half its chunk
        where it packs LEAN_CHUNK or less, down to LEANEST_CHUNK: a smaller scratch for more rounds of partial sums
        (AD's 640-deep layer: 256 B and 128 B less); the band kernel's rows a pair at a time (2x4/fused); 2x4/fused's
        one pair a call where it takes several."""
        p = data.params
        if not isinstance(p, GemmParams):
            return None   # the family's other kernels, a constant output's fill
        if variant.kernel == BAND_KERNEL:
            return Variant(QUADS_KERNEL)   # a pair of rows packed at a time, not a band
        if variant.kernel == QUADS_KERNEL and quad_call_pairs(data, variant) > 1:
            return replace(variant, lean=True)
        chunk = min(variant.chunk // 2, LEAN_CHUNK) if variant.chunk else LEAN_CHUNK
        if p.patches is not None or chunk < LEANEST_CHUNK:
            return None
        return self.in_chunks(data, variant, chunk)

    def in_chunks(self, data: OpData, variant: Variant, chunk: int) -> Variant | None:
        """`variant` packing `chunk` values of rows from the input itself at a time (im2col taps: one kernel
        row, when that scratch is the smaller), or None."""
        p = data.params
        if not isinstance(p, GemmParams):
            return None   # the family's other kernels (a 16x8 GEMM, depthwise with several input channels)
        depth = p.weights.shape[1]
        mk = micro_kernel(variant)
        if mk.fused and mk.weights == "fused" and mk.rows == 2:   # its partial sums: the unrequantized kernel's
            mk = GEMM_BY_ID["2x2/biased"]
        if mk.fused and mk.weights != "fused" or mk.direct:
            return None   # Helium's: no partial sums; a direct kernel: no scratch
        if p.patches is None:
            return Variant(mk.id, chunk) if depth > chunk else None
        kernel_row = p.patches.k_w * p.patches.in_c
        if row_source(p.patches) != "taps" or kernel_row >= depth or kernel_row % weight_group(data.cpu):
            return None
        chunked = Variant(mk.id, kernel_row)
        rows, cols, group = data.output.size // p.weights.shape[0], p.weights.shape[0], weight_group(data.cpu)
        whole, part = (GemmLayout(rows, cols, depth, s, "taps", group).scratch_bytes for s in (variant, chunked))
        return chunked if part < whole else None

    def lower(self, data: OpData, variant: Variant | None = None) -> Lowered:
        variant = variant or self.variants(data)[0]
        return Lowered([gemm_kernel(data, variant)], variant=variant)


def stream_params(p: GemmParams) -> tuple[np.ndarray, ...] | None:
    """The weights, bias, multipliers and shifts of `p`'s fused stream, or None: no fused stream computes it exactly."""
    rq = p.requant
    return fused_stream_params(p.weights, p.bias, rq.multiplier, rq.shift, rq.out_zp, rq.act_min, rq.act_max)


def live_channels(stream: tuple[np.ndarray, ...], rq: Requant, groups: int, whole: int) -> np.ndarray | None:
    """Per channel of a fused stream's layer, whether its two-row GEMM computes it, when leaving the constant ones out
    pays (worth_leaving_out); else None. The channels that are not constant, and the first constant ones up to a
    multiple of `whole` (computed all the same: their folded stream gives their constant): 2x4/fused's assembly takes
    whole quads, 2x2/fused an odd last channel in C (1)."""
    constant = constant_channels(*stream, rq.out_zp, rq.act_min, rq.act_max)
    live = constant < rq.act_min
    if not live.any() or not worth_leaving_out(constant, rq.act_min, groups):
        return None
    padding = np.flatnonzero(~live)[:-int(live.sum()) % whole]
    live[padding] = True
    return live


def leaves_constant_channels_out(data: OpData) -> bool:
    """Whether the GEMM layer's two-row fused kernels leave constant channels out (live_channels): fewer products
    than its other variants compute."""
    p: GemmParams = data.params
    stream = stream_params(p)
    return stream is not None and live_channels(stream, p.requant, -(-p.weights.shape[1] // GROUP), 4) is not None


def quad_code_pairs(data: OpData, variant: Variant) -> int:
    """Row pairs the code of QUADS_KERNEL's calls for the layer takes at most (its C's `pairs`: the kernel of several
    pairs a call or of one): QUAD_PAIRS's for the core where its straight kernels take the layer's depth of
    QUAD_PAIRS_MIN_GROUPS groups or more, whether its calls take several or not (one kernel for a model's layers of that
    depth); one for shallower and deeper layers and for a lean variant (OpDef.leaner's); none for COMPACT_KERNEL's."""
    groups = -(-data.params.weights.shape[1] // GROUP)
    if variant.kernel == COMPACT_KERNEL:
        return 0
    if variant.lean or not QUAD_PAIRS_MIN_GROUPS <= groups <= QUAD_STRAIGHT:
        return 1
    return QUAD_PAIRS.get(data.cpu.name, 2)


def quad_call_pairs(data: OpData, variant: Variant) -> int:
    """Row pairs a call of QUADS_KERNEL takes for the layer: its code's (quad_code_pairs), at most the layer's, and while
    their packed rows stay within the layer's scratch_room; at least one."""
    channels, depth = data.params.weights.shape
    most = quad_code_pairs(data, variant)
    fits = scratch_room(data.inputs[0].size + data.output.size) // (4 * GROUP * -(-depth // GROUP))
    return max(1, min(most, -(-data.output.size // channels // 2), fits))


def quads_suit(stream: tuple[np.ndarray, ...] | None, rq: Requant) -> bool:
    """Whether a fused two-row GEMM of channel quads ("2x4/fused") computes the layer in its assembly alone: its range is
    all of int8 (clamped outputs go to C)."""
    return stream is not None and (rq.act_min, rq.act_max) == (-128, 127)


def gemm_kernel(data: OpData, variant: Variant) -> Kernel:
    """The kernel computing the op `data` holds (GemmParams) as `variant` says (one of
    gemm_variants): the TIR GEMM, or a fill when the output is constant."""
    p: GemmParams = data.params
    op, y, w, rq, patches = data.op, data.output, p.weights, p.requant, p.patches
    if rq.constant_output is not None:
        return constant_kernel(data, rq.constant_output)
    mk = micro_kernel(variant)
    if mk.fused and mk.weights != "fused":
        return gemm_mve_kernel(data, mk)
    if variant.kernel == BAND_KERNEL:
        return gemm_band_kernel(data, mk, stream_params(p))
    stage = runs_stage_bytes(patches, data.cpu)
    if stage:   # the weights in the order the rows are packed in
        p = replace(p, weights=w[:, runs_order(patches)])
        w = p.weights
    rows = y.size // w.shape[0]
    in_size = patches.in_h * patches.in_w * patches.in_c if patches else rows * w.shape[1]
    stream = stream_params(p) if mk.weights == "fused" else None   # (weights, bias, multiplier, shift)
    shared = mk.rows == 1 and shares_requantization(*(stream[2:] if stream else (rq.multiplier, rq.shift)))
    quads = variant.kernel in QUAD_KERNELS
    pairs, code_pairs = (quad_call_pairs(data, variant), quad_code_pairs(data, variant)) if quads else (1, 1)
    layout = GemmLayout(rows, w.shape[0], w.shape[1], variant, row_source(patches), weight_group(data.cpu), shared,
                        stage=stage, split_loads=two_loads_beat_ldrd(data.cpu.name), pairs=pairs,
                        code_pairs=code_pairs)
    if layout.stream and layout.block_rows == 2 and layout.chunk == layout.depth:   # leave constant channels out?
        live = live_channels(stream, rq, layout.groups, 4 if quads else 1)
        if live is not None:
            constant = constant_channels(*stream, rq.out_zp, rq.act_min, rq.act_max)
            layout = replace(layout, live=int(live.sum()))
            stream = tuple(v[live] for v in stream)
    # the fused stream carries the biases and the requantization with the weights
    optional = {} if layout.stream else {"bias": Const("bias", p.bias), **rq.consts()}
    if layout.source == "taps":
        optional["pad"] = Const("pad", np.full(patches.in_c, patches.in_zp, np.int8))
    reads = [*optional, *(["scratch"] if layout.scratch_bytes else [])]   # (a direct kernel needs none)
    func = specialize(gemm_func(layout, in_size, rq, patches), reads)
    if layout.quads:
        packed = pack_quad_stream(*stream, rq.out_zp, compact=code_pairs == 0)
    elif layout.stream:
        packed = pack_fused_stream(*stream, rq.out_zp, layout.block_cols,
                                   layout.chunk // GROUP if layout.chunk < layout.depth else None, shared)
    else:
        packed = mk.pack(w, layout.block_cols, layout.weight_group)
    if layout.live is not None:
        packed = np.concatenate([packed, live_channel_tables(constant, live)])
    args = [op.inputs[0], Const("w", packed, STREAM_ALIGN if layout.quads else 4), *optional.values(), op.outputs[0],
            *([Scratch(layout.scratch_bytes)] if layout.scratch_bytes else [])]
    gather_header = (RUNS_HEADER if stage else IM2COL_HEADER,) if layout.source == "gather" else ()
    headers = tuple(dict.fromkeys((DOT_HEADER, mk.header) + gather_header))
    chunk_stream = layout.stream and layout.chunk < layout.depth
    kernel_name = mk.helpers[0].name if layout.live is not None else mk.name
    c_calls = ((layout.chunk_kernel.name if chunk_stream else kernel_name),)
    c_calls += (layout.tail_kernel.name,) if layout.tail_kernel else ()
    return Kernel(p.name, args, func=func, headers=headers, c_calls=c_calls)


@dataclass(frozen=True)
class GemmLayout:
    rows: int
    cols: int
    depth: int
    variant: Variant
    source: str
    weight_group: int = GROUP
    shared_requant: bool = True   # every channel has the same multiplier and shift (a one-row stream's layer words)
    live: int | None = None       # a two-row stream's channels that are not constant, when it leaves the others out
    stage: int = 0                # a gather's staging bytes per row when it packs kernel-row runs (runs_stage_bytes)
    split_loads: bool = False     # a two-row stream's kernel loads word by word (asm_schedule.two_loads_beat_ldrd)
    pairs: int = 1                # row pairs a kernel call takes (QUAD_PAIRS: the quads' straight kernels)
    code_pairs: int = 1           # row pairs its kernel's code takes at most (quad_code_pairs)

    @property
    def spec(self) -> KernelSpec:
        """The micro-kernel its variant names."""
        return micro_kernel(self.variant)

    @property
    def block_rows(self) -> int:
        return self.spec.rows

    @property
    def block_cols(self) -> int:
        return self.spec.cols

    @property
    def weight_tile_bytes(self) -> int:
        return packed_weight_bytes(self.block_cols, self.depth, self.variant, self.weight_group)

    @property
    def weight_bytes(self) -> int:
        if self.live is not None:
            return self.live_stream_bytes + 3 * self.cols + self.cols % 2   # live_channel_tables
        if self.stream:
            return self.stream_bytes(self.cols)
        return packed_weight_bytes(self.cols, self.depth, self.variant, self.weight_group)

    @property
    def live_stream_bytes(self) -> int:
        """Bytes of the live channels' stream."""
        return self.stream_bytes(self.live or 0)

    def stream_bytes(self, channels: int) -> int:
        """Bytes of the fused stream of `channels` channels."""
        if self.quads:
            return quad_stream_bytes(channels, self.depth)
        return fused_stream_bytes(channels, self.depth, self.block_cols, self.shared_requant)

    @property
    def quads(self) -> bool:
        """Whether it runs QUADS_KERNEL or COMPACT_KERNEL (their own stream, pack_quad_stream)."""
        return self.variant.kernel in QUAD_KERNELS

    @property
    def stream(self) -> bool:
        """Whether the weights, biases and requantization come as one stream to a kernel computing every channel."""
        return self.spec.weights == "fused"

    @property
    def per_channel(self) -> bool:
        """Whether a one-row stream carries each channel's own requantization (its kernel's per_channel one)."""
        return self.stream and self.block_rows == 1 and not self.shared_requant

    @property
    def micro_kernel(self) -> CFunction:
        """The C function."""
        mk = self.spec
        return mk.helpers[0] if self.live is not None else mk.per_channel if self.per_channel else mk.function

    @property
    def chunk_kernel(self) -> CFunction:
        """A fused stream's kernel of one chunk of the row."""
        return self.spec.chunked[self.per_channel]

    @property
    def direct(self) -> bool:
        """Whether the micro-kernel reads the input's rows as they are (no packed scratch)."""
        return self.spec.direct

    @property
    def tail_kernel(self) -> CFunction | None:
        """A direct kernel's C function for the last channel tile when it is narrower than the others."""
        narrow = self.direct and self.cols % self.block_cols
        return self.spec.tile_kernel(self.cols % self.block_cols) if narrow else None

    @property
    def groups(self) -> int:
        return -(-self.depth // GROUP)

    @property
    def chunk(self) -> int:
        """The k values packed at a time: the variant's chunk, or the whole row."""
        return min(self.variant.chunk, self.depth) if self.variant.chunk else self.depth

    @property
    def chunk_weight_bytes(self) -> int:
        """Bytes of a weight tile per chunk of k (the chunk is a multiple of the weight group)."""
        return self.chunk * self.block_cols * self.spec.bytes_per_weight

    @property
    def row_sums(self) -> bool:
        return self.spec.row_sums

    @property
    def packed_bytes(self) -> int:
        """The packed rows of one call (one chunk of them): 2 bytes a value (int16, or int8 rows read
        16 values at a time on Helium cores), whole chunks of 16, or a call's pairs one after the other
        (pair_bytes each); none for a direct kernel."""
        if self.direct:
            return 0
        if self.pairs > 1:
            return self.pairs * self.pair_bytes
        return self.block_rows * -(-self.chunk // HELIUM_CHUNK) * HELIUM_CHUNK * 2

    @property
    def pair_bytes(self) -> int:
        """Bytes between a call's packed pairs (QUAD_PAIRS)."""
        return 2 * GROUP * 2 * self.groups

    @property
    def call_rows(self) -> int:
        """Rows a kernel call takes."""
        return self.block_rows * self.pairs

    @property
    def scratch_bytes(self) -> int:
        """The packed rows, then the gathered rows (gather) or a chunked variant's int32 sums of a block
        of rows over every channel tile."""
        if self.chunk < self.depth:
            return self.packed_bytes + self.block_rows * -(-self.cols // self.block_cols) * self.block_cols * 4
        if self.stage:
            return self.packed_bytes + self.block_rows * self.stage
        return self.packed_bytes + (self.block_rows * self.groups * GROUP if self.source == "gather" else 0)


def gemm_func(g: GemmLayout, in_size: int, rq: Requant, patches: Patches | None):
    """The @T.jit kernel with parameters (x, w, bias, table, mult, shift, pad, out, scratch); the optional
    ones are the bias and the buffers of rq.consts() (not read by a fused stream) and, for im2col taps,
    `pad`: a pixel of in_zp that taps outside the image pack from. The scratch holds the packed rows,
    then (gather) the gathered int8 rows, or (chunked) the partial sums. Per block of rows: the row source packs
    them (RowPacking; chunk by chunk when chunked), then the kernel (KernelCalls) computes the block."""
    P, C, K = g.rows, g.cols, g.depth
    R, B = g.block_rows, g.block_cols
    c_tiles = -(-C // B)
    chunked, CH = g.chunk < K, g.chunk
    n_chunks = -(-K // CH)
    i32 = "int32"
    pad_len = patches.in_c if patches else 1
    pack = RowPacking(g, patches)
    calls = KernelCalls(g, rq)

    def chunk_len(ch):
        return T.min(CH, K - ch * CH)

    def in_output(p, c):
        """Whether block element (p, c) is a real output: statically True when the blocks tile the output."""
        checks = ([p < P] if P % R else []) + ([c < C] if C % B else [])
        return tvm.tirx.all(*checks) if checks else True

    @T.macro
    def pack_block(x, pad, scratch, acc, pb, at):
        """The block's whole rows into the scratch from byte `at`, then (row_sums) their sums after the block's."""
        if g.stage > 0:
            T.evaluate(pack.runs(x, scratch, pb, at))
        elif g.source == "gather":
            for slot in T.serial(R):
                T.evaluate(pack.gather(x, scratch, pb, slot))
            T.evaluate(pack.gathered(scratch, at))
        elif pack.packs:
            T.evaluate(pack.rows(x, pad, scratch, pb, 0, pack.whole, at))
        if g.row_sums:
            T.evaluate(calls.row_sums(scratch, acc, g.groups))

    @T.macro
    def pack_call(x, pad, scratch, acc, cb):
        """The blocks of kernel call cb (its pairs, one after the other: the last call's that there are)."""
        if g.pairs == 1:
            pack_block(x, pad, scratch, acc, cb, 0)
        else:
            for j in T.unroll(g.pairs):
                if cb * g.pairs + j < (P + R - 1) // R:
                    pack_block(x, pad, scratch, acc, cb * g.pairs + j, j * g.pair_bytes)

    @T.macro
    def chunk_sums(x, w, pad, out, scratch, acc, sums, pb):
        """The block packed a chunk at a time, each chunk's partial sums added up in `sums` (a stream's kernel
        keeps its own there and writes the outputs after the last chunk)."""
        if not g.stream:   # (a stream's chunk kernel starts the sums from its biases)
            for i in T.serial(R * B * c_tiles):
                sums[i] = 0
        for ch in T.serial(n_chunks):
            if pack.packs:
                T.evaluate(pack.rows(x, pad, scratch, pb, ch * pack.chunk, pack.chunk_count(ch)))
            if g.stream:
                T.evaluate(calls.stream_chunk(x, w, out, scratch, pb, ch, chunk_len(ch)))
            else:
                if g.row_sums:
                    T.evaluate(calls.row_sums(scratch, acc, (chunk_len(ch) + GROUP - 1) // GROUP))
                for ct in T.serial(c_tiles):
                    T.evaluate(calls.packed_tile(scratch, w, acc, ct, ch, (chunk_len(ch) + GROUP - 1) // GROUP))
                    for i in T.unroll(R * B):
                        sums[ct * R * B + i] = sums[ct * R * B + i] + acc[i]

    @T.macro
    def tile_sums(x, w, scratch, acc, sums, pb, ct):
        """The block's sums of channel tile ct into `acc`."""
        if chunked:
            for i in T.unroll(R * B):
                acc[i] = sums[ct * R * B + i]
        elif g.tail_kernel is not None:   # the last tile's own kernel
            if ct < c_tiles - 1:
                T.evaluate(calls.direct_tile(g.micro_kernel, x, w, acc, pb, ct))
            else:
                T.evaluate(calls.direct_tile(g.tail_kernel, x, w, acc, pb, ct))
        elif g.direct:
            T.evaluate(calls.direct_tile(g.micro_kernel, x, w, acc, pb, ct))
        else:
            T.evaluate(calls.packed_tile(scratch, w, acc, ct, 0, g.groups))

    @jit
    def gemm(x: T.Buffer((in_size,), "int8"), w: T.Buffer((g.weight_bytes,), "int8"),
             bias: T.Optional(T.Buffer((C,), i32)), table: T.Optional(T.Buffer((C * RSHIFT_FIELDS,), i32)), mult: T.Optional(T.Buffer((C,), i32)),
             shift: T.Optional(T.Buffer((C,), i32)), pad: T.Optional(T.Buffer((pad_len,), "int8")),
             out: T.Buffer((P * C,), "int8"), scratch: T.Optional(T.Buffer((g.scratch_bytes,), "int8"))):
        acc = T.alloc_buffer((R * B + R * g.row_sums,), i32)   # the block's sums, then its rows' Σx
        sums = T.decl_buffer((R * B * c_tiles,), i32, data=(scratch if g.scratch_bytes > 0 else acc).data,
                             elem_offset=g.packed_bytes // 4)   # (read if chunked: a direct kernel has no scratch)
        for pb in T.serial((P + g.call_rows - 1) // g.call_rows):
            if chunked:
                chunk_sums(x, w, pad, out, scratch, acc, sums, pb)
            else:
                pack_call(x, pad, scratch, acc, pb)
            if g.stream and not chunked:
                T.evaluate(calls.stream(x, w, out, scratch, pb))
            elif not g.stream:
                for ct in T.serial(c_tiles):
                    tile_sums(x, w, scratch, acc, sums, pb, ct)
                    for i in T.unroll(R):
                        for j in T.unroll(B):
                            if in_output(pb * R + i, ct * B + j):
                                out[(pb * R + i) * C + ct * B + j] = rq.output(acc[i * B + j] + bias[ct * B + j],
                                                                               ct * B + j, table, mult, shift)

    return gemm
