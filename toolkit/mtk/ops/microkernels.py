"""The GEMM's C micro-kernels (kernels/c/<isa>/mtk_dot_s8_<isa>.h: kernels/files.py DOT_S8) as data: what
each computes per call, the weights' flash format and the packer that writes it, the instruction sets
with code for it; and per instruction set, the ones a GEMM may take, the default first. Variant choice
(gemm.gemm_variants), weight packing and flash sizes (gemm.py, the tuner's flash prices) and the tests read this table.

A GEMM's variant (variants.Variant, what tuning files hold) names a micro-kernel by its label,
"<block>/<weights>": block rows × channels per call, weights "int8", "int16" (expanded offline in
SXTB16 order: no SXTB16 in the loop on DSP cores, twice the flash), "biased" (int8, two channels to an
int16 halfword, the low one biased by 128: one SXTB16 per two weights of a channel pair on DSP cores,
c/mtk_dot_biased_s8.h), "pairs" (two channels to an int32, one SMLAL per two products on the
Cortex-M3, twice the flash) or "s8" (int8 as "int8" lays it out, in groups of 4: the Cortex-M3's 2x4 block,
named apart from Helium's fused 2x4/int8, and its 1x8 and 2x2 blocks that read the input's rows as they are, named
apart from 1x8/int8 and 2x2/int8, which read packed ones) or "s16" (int16 as "int16" lays it out: the DSP cores' 1x4 block that reads
the input's rows as they are).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Callable

import numpy as np

from ..target import Cpu
from .gemmlowp import multiply_by_quantized_multiplier_np

DOT_HEADER = "dot_s8"   # the C kernel families (kernels/files.py) the generated C includes
GEMM_MVE_HEADER = "gemm_mve"   # Helium's fused GEMM (gemm_mve.py)
BIASED_HEADER = "dot_biased_s8"
GROUP = 4            # k values per packed group
HELIUM_CHUNK = 16    # k values per Helium vector: the weights' group on MVE cores
SXTB16_ORDER = [0, 2, 1, 3]   # a group of 4 values as SXTB16 and its ROR 8 split it: (v0, v2), (v1, v3)


def pad_to_groups(a: np.ndarray, group: int, axis: int = -1) -> np.ndarray:
    """`a` with zeros appended along `axis` up to a whole number of groups of `group`."""
    widths = [(0, 0)] * a.ndim
    widths[axis] = (0, -a.shape[axis] % group)
    return np.pad(a, widths)


def pack_weights(w: np.ndarray, tile: int, group: int = GROUP) -> np.ndarray:
    """w [channels, depth] → [channel tiles][depth groups][tile][group], zero-padded to whole tiles and groups."""
    padded = pad_to_groups(pad_to_groups(w.astype(np.int8), tile, axis=0), group)
    tiles = padded.reshape(-1, tile, padded.shape[1] // group, group)
    return np.ascontiguousarray(tiles.transpose(0, 2, 1, 3)).reshape(-1)


def pack_weights_int16(w: np.ndarray, tile: int) -> np.ndarray:
    """pack_weights with each group of 4 as int16 in SXTB16 order (mtk_dot_*_w16_s8)."""
    return pack_weights(w, tile).reshape(-1, GROUP)[:, SXTB16_ORDER].astype(np.int16).reshape(-1)


def pack_weights_narrow(w: np.ndarray, tile: int, group: int = GROUP, wide: bool = False) -> np.ndarray:
    """pack_weights (`wide`: pack_weights_int16) in tiles of `tile` channels but the last, which holds only the
    channels left (no padding)."""
    pack = pack_weights_int16 if wide else partial(pack_weights, group=group)
    whole = w.shape[0] - w.shape[0] % tile
    parts = [pack(w[:whole], tile)] + ([pack(w[whole:], w.shape[0] - whole)] if whole < w.shape[0] else [])
    return np.concatenate(parts)


def pack_weight_pairs(w: np.ndarray) -> np.ndarray:
    """w [channels, depth] → int32 [4-channel tiles][depth, zero-padded to groups][2]: channels 0 and 1
    of the tile as w0 + w1·2^23, then channels 2 and 3 (mtk_dot_1x4_paired_s8)."""
    tiles = pack_weights(w, 4).astype(np.int32).reshape(-1, 4, GROUP)   # [tiles × groups][channel][4 depth]
    pairs = np.stack([tiles[:, 0] + tiles[:, 1] * (1 << 23), tiles[:, 2] + tiles[:, 3] * (1 << 23)], axis=-1)
    return np.ascontiguousarray(pairs).reshape(-1)   # [tiles × groups][4 depth][2]


def pack_weights_biased(w: np.ndarray, tile: int) -> np.ndarray:
    """pack_weights with each pair of channels (c0, c1) of a tile as int16 halfwords (c0 + 128) + 256·c1,
    a group's 4 in SXTB16 order (mtk_dot_*_biased_s8)."""
    quads = pack_weights(w, tile).reshape(-1, tile // 2, 2, GROUP).astype(np.int16)   # [tiles × groups][pair][c][k]
    halves = np.stack([quads[:, :, 0] + 128, quads[:, :, 1] & 0xFF], axis=-1)          # [..][pair][k][low, high byte]
    return np.ascontiguousarray(halves[:, :, SXTB16_ORDER]).astype(np.uint8).view(np.int8).reshape(-1)


def pack_fused_stream(w: np.ndarray, bias: np.ndarray, multiplier: np.ndarray, shift: np.ndarray,
                      out_zp: int, tile: int = 2, chunk_groups: int | None = None) -> np.ndarray:
    """The fused kernels' stream (c/mtk_dot_biased_s8.h). "2x2/fused" (tile 2): per channel pair (c0, c1) the words
    b1, b1, b0 + 256·b1 (mod 2^32), the pair's biased weights (pack_weights_biased), then per channel its
    multiplier, rounding term 2^(e−1) + out_zp·2^e and shift e (a zero multiplier: e = 1). "1x4/fused" (tile 4): the
    layer's multiplier, rounding term and shift (zeros unless every channel shares them), then per channel quad the
    words b0 + 256·b1, b1, b2 + 256·b3, b3, the quad's biased weights and (channels of their own) each channel's
    multiplier, rounding term and shift; with `chunk_groups` (a row packed that many groups at a time) the weights
    chunk by chunk: every quad's first chunk after its words, then every quad's second chunk, and so on, the
    channels' own requantization after their quad's last chunk."""
    channels = w.shape[0]
    tiles = -(-channels // tile)
    padded = lambda v, fill: np.concatenate([np.asarray(v, np.int64), np.full(tile * tiles - channels, fill, np.int64)])
    b, m = padded(bias, 0), padded(multiplier, 0)
    e = np.where(m == 0, 1, -padded(shift, -1))
    rounding = (np.int64(1) << (e - 1)) + out_zp * (np.int64(1) << e)
    words = lambda cols: (np.stack(cols, axis=1) & 0xFFFFFFFF).astype(np.uint32).view(np.uint8).reshape(len(cols[0]), -1)
    weights = pack_weights_biased(w, tile).view(np.uint8).reshape(tiles, -1)
    if tile == 4:
        quads = words([b[0::4] + 256 * b[1::4], b[1::4], b[2::4] + 256 * b[3::4], b[3::4]])
        shared = shares_requantization(multiplier, shift)
        layer = words([v[:1] * shared for v in (m, rounding, e)]).reshape(-1)
        step = 16 * (chunk_groups or weights.shape[1])
        chunks = [weights[:, k:k + step] for k in range(0, weights.shape[1], step)]
        chunks[0] = np.concatenate([quads, chunks[0]], axis=1)
        if not shared:
            chunks[-1] = np.concatenate([chunks[-1], words([v[c::4] for c in range(4) for v in (m, rounding, e)])],
                                        axis=1)
        return np.concatenate([layer, *(c.reshape(-1) for c in chunks)]).view(np.int8)
    head = words([b[1::2], b[1::2], b[0::2] + 256 * b[1::2]])
    tail = words([v[c::2] for c in range(2) for v in (m, rounding, e)])
    return np.ascontiguousarray(np.concatenate([head, weights, tail], axis=1)).view(np.int8).reshape(-1)


def fused_stream_bytes(channels: int, depth: int, tile: int, shared: bool = True) -> int:
    """Bytes of pack_fused_stream's stream (`shared`: its channels share one multiplier and shift)."""
    weights = tile * GROUP * -(-depth // GROUP)
    if tile == 4:
        return 12 + -(-channels // 4) * (16 + weights + (0 if shared else 48))
    return -(-channels // 2) * (36 + weights)


def shares_requantization(multiplier: np.ndarray, shift: np.ndarray) -> bool:
    """Whether every channel has the same multiplier and shift ("1x4/fused" carries them once)."""
    return bool(np.all(multiplier == multiplier[0]) and np.all(shift == shift[0]))


def fused_stream_exact(w: np.ndarray, bias: np.ndarray, multiplier: np.ndarray, shift: np.ndarray, out_zp: int) -> bool:
    """Whether mtk_gemm_2x2_fused_s8 computes the layer exactly for every input: every channel shifts right
    (or has a zero multiplier), 2·(Σ + bias) cannot overflow (|Σ| ≤ 128·Σ|w|), nor can SMMLAR's sum with the
    rounding term."""
    if np.any(multiplier < 0) or np.any((shift >= 0) & (multiplier != 0)):
        return False
    e = np.where(multiplier == 0, 1, -shift.astype(np.int64))
    if np.any(e > 30):
        return False
    x = np.abs(bias.astype(np.int64)) + 128 * np.abs(w.astype(np.int64)).sum(axis=1)
    h = (x * multiplier.astype(np.int64) + (1 << 30)) // (1 << 31) + 1
    rounding = np.abs((np.int64(1) << (e - 1)) + out_zp * (np.int64(1) << e))
    return bool(np.all(x < 1 << 30) and np.all(h + rounding + 1 < 1 << 31))


def constant_channels(w: np.ndarray, bias: np.ndarray, multiplier: np.ndarray, shift: np.ndarray, out_zp: int,
                      act_min: int, act_max: int) -> np.ndarray:
    """Per channel, the output it takes for every input (its weights too small to move its requantized, clamped
    sum: |Σ w·x| ≤ 128·Σ|w|, the requantization monotonic when it shifts right), or act_min − 1 when the input
    moves it or it shifts left (its sum shifted left wraps)."""
    reach = 128 * np.abs(w.astype(np.int64)).sum(axis=1)
    ends = [bias.astype(np.int64) - reach, bias.astype(np.int64) + reach]
    out = np.full(len(bias), act_min - 1, np.int64)
    for c in np.nonzero((ends[0] >= -(1 << 31)) & (ends[1] < 1 << 31) & (shift <= 0))[0]:
        lo, hi = (int(np.clip(multiply_by_quantized_multiplier_np(end[c], int(multiplier[c]), int(shift[c])) + out_zp,
                              act_min, act_max)) for end in ends)
        if lo == hi:
            out[c] = lo
    return out


def fused_stream_params(w: np.ndarray, bias: np.ndarray, multiplier: np.ndarray, shift: np.ndarray, out_zp: int,
                        act_min: int, act_max: int) -> tuple[np.ndarray, ...] | None:
    """The weights, biases, multipliers and shifts a fused stream computes the layer exactly with
    (fused_stream_exact), or None: the layer's own, else with each channel whose output is a constant k
    (constant_channels: dead channels, which quantizers give zero weights and biases near ±2^30) as zero weights,
    bias 4·(k − out_zp), multiplier 2^30 and shift −1 (exactly k − out_zp, whatever the rounding)."""
    if fused_stream_exact(w, bias, multiplier, shift, out_zp):
        return w, bias, multiplier, shift
    k = constant_channels(w, bias, multiplier, shift, out_zp, act_min, act_max)
    fixed = k >= act_min
    if not fixed.any():
        return None
    folded = tuple(np.where(fixed[:, None] if v is w else fixed, f, v).astype(v.dtype)
                   for v, f in ((w, 0), (bias, 4 * (k - out_zp)), (multiplier, 1 << 30), (shift, -1)))
    return folded if fused_stream_exact(*folded, out_zp) else None


def live_channel_tables(constant: np.ndarray, act_min: int) -> np.ndarray:
    """What mtk_gemm_2x2_fused_live_s8 reads after the live channels' stream, for a layer whose channels output
    `constant` (constant_channels; below act_min: live): each channel's constant output (int8), a zero byte when
    the channels are odd, then each channel's index among the live ones (int16; -1: a constant one)."""
    live = constant < act_min
    fill = np.where(live, 0, constant).astype(np.int8)
    source = np.where(live, np.cumsum(live) - 1, -1).astype(np.int16)
    return np.concatenate([fill, np.zeros(len(fill) % 2, np.int8), source.view(np.int8)])


def worth_leaving_out(constant: np.ndarray, act_min: int, groups: int) -> bool:
    """Whether leaving a layer's constant channels out of its two-row fused GEMM saves instructions: about 6 a group
    and 19 a channel of theirs against about 11 a channel and row to spread the outputs."""
    return int((constant >= act_min).sum()) * (6 * groups + 19) > 22 * len(constant)


Packer = Callable[[np.ndarray, int, int], np.ndarray]   # (weights [channels, depth], tile, group) -> flash array


@dataclass(frozen=True)
class MicroKernel:
    name: str                 # the C function
    rows: int                 # its block: rows × channels per call
    cols: int
    weights: str              # the weights' flash format
    bytes_per_weight: int
    pack: Packer
    isas: tuple[str, ...]     # instruction sets (isa_of) whose C has code for it
    header: str = DOT_HEADER    # its C kernel family (kernels/files.py)
    fused: bool = False       # the whole GEMM with its requantization (gemm_mve.py), not a block's sums
    row_sums: bool = False    # reads each packed row's sum after it (mtk_pack_sums_s16)
    # reads the input's int8 rows as they are (no packed scratch; k values a call, a partial group too), its last
    # channel tile only as wide as the channels left (pack_weights_narrow, tile_kernel): rows of the input only
    direct: bool = False
    tails: tuple[str, ...] = ()        # a direct kernel's C functions for a last tile of 1, 2, ... cols − 1 channels
    per_channel: str | None = None     # a fused one-row kernel's C function for channels of their own requantization
    chunked: tuple[str, ...] = ()      # a fused one-row kernel's C functions of a chunk of the row: shared, per channel

    @property
    def block(self) -> str:
        return f"{self.rows}x{self.cols}"

    @property
    def label(self) -> str:
        return f"{self.block}/{self.weights}"

    def tile_kernel(self, channels: int) -> str:
        """A direct kernel's C function for a tile of `channels` (up to its block's) channels."""
        return self.name if channels == self.cols else self.tails[channels - 1]

    def weight_bytes(self, channels: int, depth: int, group: int) -> int:
        """Flash of weights [channels, depth] packed for it: whole tiles of its channels (direct: the channels),
        whole groups of depth."""
        padded = channels if self.direct else -(-channels // self.cols) * self.cols
        return padded * -(-depth // group) * group * self.bytes_per_weight


def _int8(w: np.ndarray, tile: int, group: int) -> np.ndarray:
    return pack_weights(w, tile, group)


def _int16(w: np.ndarray, tile: int, group: int) -> np.ndarray:
    return pack_weights_int16(w, tile)


def _biased(w: np.ndarray, tile: int, group: int) -> np.ndarray:
    return pack_weights_biased(w, tile)


def _narrow(w: np.ndarray, tile: int, group: int) -> np.ndarray:
    return pack_weights_narrow(w, tile, group)


def _narrow_int16(w: np.ndarray, tile: int, group: int) -> np.ndarray:
    return pack_weights_narrow(w, tile, group, wide=True)


def _pairs(w: np.ndarray, tile: int, group: int) -> np.ndarray:
    return pack_weight_pairs(w)


ALL_ISAS = ("scalar", "m3", "dsp", "mve")
MICRO_KERNELS = (
    MicroKernel("mtk_dot_2x2_s8", 2, 2, "int8", 1, _int8, ALL_ISAS),
    MicroKernel("mtk_dot_1x4_s8", 1, 4, "int8", 1, _int8, ALL_ISAS),
    MicroKernel("mtk_dot_2x2_w16_s8", 2, 2, "int16", 2, _int16, ("dsp",)),
    MicroKernel("mtk_dot_1x4_w16_s8", 1, 4, "int16", 2, _int16, ("dsp",)),
    MicroKernel("mtk_dot_2x2_biased_s8", 2, 2, "biased", 1, _biased, ("dsp",), BIASED_HEADER, row_sums=True),
    MicroKernel("mtk_dot_1x4_biased_s8", 1, 4, "biased", 1, _biased, ("dsp",), BIASED_HEADER, row_sums=True),
    MicroKernel("mtk_gemm_2x2_fused_s8", 2, 2, "fused", 1, _biased, ("dsp",), BIASED_HEADER, fused=True),
    MicroKernel("mtk_gemm_1x4_fused_s8", 1, 4, "fused", 1, _biased, ("dsp",), BIASED_HEADER, fused=True,
                per_channel="mtk_gemm_1x4_fused_pc_s8",
                chunked=("mtk_gemm_1x4_fused_chunk_s8", "mtk_gemm_1x4_fused_pc_chunk_s8")),
    MicroKernel("mtk_dot_1x8_s8", 1, 8, "int8", 1, _int8, ("scalar", "m3")),
    MicroKernel("mtk_dot_1x4_paired_s8", 1, 4, "pairs", 2, _pairs, ("m3",)),
    MicroKernel("mtk_dot_2x4_s8", 2, 4, "s8", 1, _int8, ("m3",)),
    MicroKernel("mtk_dot_1x8_rows_s8", 1, 8, "s8", 1, _narrow, ("m3",), direct=True,
                tails=tuple(f"mtk_dot_1x{n}_rows_s8" for n in range(1, 8))),
    MicroKernel("mtk_dot_2x2_rows_s8", 2, 2, "s8", 1, _narrow, ("m3",), direct=True, tails=("mtk_dot_2x1_rows_s8",)),
    MicroKernel("mtk_dot_1x4_rows_w16_s8", 1, 4, "s16", 2, _narrow_int16, ("scalar", "dsp"), direct=True,
                tails=tuple(f"mtk_dot_1x{n}_rows_w16_s8" for n in range(1, 4))),
    MicroKernel("mtk_gemm_mve_2x4_s8", 2, 4, "int8", 1, _int8, ("mve",), header=GEMM_MVE_HEADER, fused=True),
)
BY_LABEL = {mk.label: mk for mk in MICRO_KERNELS}

# Per instruction set, the micro-kernels a GEMM of one row and of several rows may take, the default first.
# DSP cores: biased weights take int8's flash and fewer instructions than int8 ones (the shared models:
# IC −12 %, AD −20 % on the M4), int16 ones fewer still in the loop for twice the flash.
# The fused ones requantize inside (2x2: every channel its own; 1x4: the layer's one multiplier and shift).
# Cortex-M3 (long multiply, no DSP): one row of the input defaults to 1x8 s8 (the int8 row read as it is: no
# packing pass, no padded channels), im2col rows to 1x8 int8 (fewer instructions a product than 1x4); 1x4 paired
# takes the fewest instructions for twice the flash, 1x4 int8 pads fewer channels when channels % 8 <= 4. Several
# rows: 2x4 (a pair of rows times 4 channels, one SMLAL a channel for both rows); for 1, 2 or 5 channels (2x4 pads a
# third or more) pairs of the input's rows as they are by 2x2 s8, which packs none.
CHOICES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "dsp": (("1x4/fused", "1x4/biased", "1x4/int16", "1x4/s16"),
            ("2x2/fused", "2x2/biased", "2x2/int16", "1x4/biased", "1x4/int16", "1x4/s16")),
    "m3": (("1x8/s8", "1x8/int8", "1x4/pairs", "1x4/int8"), ("2x4/s8", "2x2/s8", "2x2/int8", "1x4/pairs")),
    "mve": (("2x4/int8",), ("2x4/int8",)),
    "scalar": (("1x4/int8", "1x4/s16"), ("2x2/int8", "1x4/int8", "1x4/s16")),
}


def isa_of(cpu: Cpu) -> str:
    """Which of the C's code paths `cpu` builds: Helium, DSP (SIMD), long multiply only (Cortex-M3), or plain C."""
    return "mve" if cpu.mve else "dsp" if cpu.dsp else "m3" if cpu.long_multiply else "scalar"


# Kernels returning a block's plain sums, for callers that pack rows and requantize themselves (lstm.py)
# and, on DSP cores, layers with a channel that shifts left (Helium's fused kernels shift either way):
# Helium's unfused ones; int8 on DSP cores (the biased ones read the rows' sums the GEMM packs for them).
PLAIN_SUMS = {"mve": (("1x4/int8",), ("2x2/int8", "1x4/int8")),
              "dsp": (("1x4/int8", "1x4/s16"), ("2x2/int8", "1x4/int8", "1x4/s16"))}

# Per instruction set, the channel counts up to which a direct kernel comes first over the input's rows. DSP cores:
# below a whole quad, the fused one-row kernel computes the channels in C as a padded quad and the packed rows cost
# as much to write as to read; 1x4 s16 reads the int8 row and int16 weights as they are. Cortex-M0/M0+: one or two
# channels over the input's rows take 1x4 s16 too, in C (1x4 int8 would multiply 4 channels and pack the row).
FEW_CHANNELS = {"dsp": 3, "scalar": 2}


def choices(cpu: Cpu, rows: int, fused: bool = True, channels: int | None = None,
            input_rows: bool = False) -> list[MicroKernel]:
    """The micro-kernels a GEMM of `rows` rows may take on `cpu`, the default first; `fused`: whether a
    kernel that requantizes itself (every channel shifts right: requant.rshift_table) or reads the rows'
    sums the GEMM packs may be among them; `input_rows`: whether its rows are the input's own, which a direct
    kernel reads. A default whose block pads a third of its work or more past the
    GEMM's `channels` gives way to the first choice in as much flash padding fewer (Cortex-M3: 2x2 s8 over the
    input's rows, else 2x2 int8, before 2x4 for 1, 2 or 5 channels; over im2col rows 1x4 before 1x8 for 1-5 or 9-10).
    Over the input's rows of at most FEW_CHANNELS channels the direct kernel comes first (DSP cores: 1-3, M0: 1-2)."""
    isa = isa_of(cpu)
    table = CHOICES[isa] if fused else PLAIN_SUMS.get(isa, CHOICES[isa])
    kernels = [BY_LABEL[label] for label in table[rows > 1] if input_rows or not BY_LABEL[label].direct]
    if input_rows and channels and channels <= FEW_CHANNELS.get(isa, 0):
        direct = next(mk for mk in kernels if mk.direct)
        return [direct] + [mk for mk in kernels if mk is not direct]
    padded = lambda mk: channels if mk.direct else -(-channels // mk.cols) * mk.cols
    if channels and 3 * (padded(kernels[0]) - channels) >= padded(kernels[0]):
        narrower = next((mk for mk in kernels if padded(mk) < padded(kernels[0])
                          and mk.bytes_per_weight == kernels[0].bytes_per_weight), None)
        if narrower is not None:
            kernels = [narrower] + [mk for mk in kernels if mk is not narrower]
    return kernels


def weight_group(cpu: Cpu) -> int:
    """The k values per packed weight group on `cpu`."""
    return HELIUM_CHUNK if cpu.mve else GROUP
