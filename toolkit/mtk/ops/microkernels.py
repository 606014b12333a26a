"""The GEMM kernels' weight packers and fused streams: how weights [channels, depth] are laid out in flash for the
kernels of kernels/table.py (which names, per kernel, its packer and weight format), and when a fused stream computes
a layer exactly.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from .gemmlowp import multiply_by_quantized_multiplier_np

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
                      out_zp: int, tile: int = 2, chunk_groups: int | None = None,
                      shared: bool | None = None) -> np.ndarray:
    """The fused kernels' stream (c/mtk_dot_biased_s8.h). "2x2/fused" (tile 2): per channel pair (c0, c1) the words
    b1, b1, b0 + 256·b1 (mod 2^32), the pair's biased weights (pack_weights_biased), then per channel its
    multiplier, rounding term 2^(e−1) + out_zp·2^e and shift e (a zero multiplier: e = 1). "1x4/fused" (tile 4): the
    layer's multiplier, rounding term and shift (zeros unless every channel shares them), then per channel quad the
    words b0 + 256·b1, b1, b2 + 256·b3, b3, the quad's biased weights and (channels of their own) each channel's
    multiplier, rounding term and shift; with `chunk_groups` (a row packed that many groups at a time) the weights
    chunk by chunk: every quad's first chunk after its words, then every quad's second chunk, and so on, the
    channels' own requantization after their quad's last chunk. `shared` False: each channel's own with tiles of 4 even
    where every channel has the same; None: shares_requantization says. ("2x4/fused": pack_quad_stream.)"""
    tiles = -(-w.shape[0] // tile)
    b, m, rounding, e = requantization_terms(bias, multiplier, shift, out_zp, tile * tiles)
    weights = pack_weights_biased(w, tile).view(np.uint8).reshape(tiles, -1)
    if tile == 4:
        quads = _words([b[0::4] + 256 * b[1::4], b[1::4], b[2::4] + 256 * b[3::4], b[3::4]])
        shared = shares_requantization(multiplier, shift) if shared is None else shared
        layer = _words([v[:1] * shared for v in (m, rounding, e)]).reshape(-1)
        step = 16 * (chunk_groups or weights.shape[1])
        chunks = [weights[:, k:k + step] for k in range(0, weights.shape[1], step)]
        chunks[0] = np.concatenate([quads, chunks[0]], axis=1)
        if not shared:
            chunks[-1] = np.concatenate([chunks[-1], _words([v[c::4] for c in range(4) for v in (m, rounding, e)])],
                                        axis=1)
        return np.concatenate([layer, *(c.reshape(-1) for c in chunks)]).view(np.int8)
    head = _words([b[1::2], b[1::2], b[0::2] + 256 * b[1::2]])
    tail = _words([v[c::2] for c in range(2) for v in (m, rounding, e)])
    return np.ascontiguousarray(np.concatenate([head, weights, tail], axis=1)).view(np.int8).reshape(-1)


def fused_stream_bytes(channels: int, depth: int, tile: int, shared: bool = True) -> int:
    """Bytes of pack_fused_stream's stream (`shared`: its channels share one multiplier and shift)."""
    weights = tile * GROUP * -(-depth // GROUP)
    if tile == 4:
        return 12 + -(-channels // 4) * (16 + weights + (0 if shared else 48))
    return -(-channels // 2) * (36 + weights)


QUAD_STRAIGHT = 16   # the most groups of "2x4/fused"'s straight kernels, whose quads end with their head and m, C, e
QUAD_TAIL = 64       # a quad's head words and m, C, e bytes
STREAM_ALIGN = 32    # a quad stream's alignment: its quads' words at cache line boundaries (a quad: 32-byte multiples)


def pack_quad_stream(w: np.ndarray, bias: np.ndarray, multiplier: np.ndarray, shift: np.ndarray,
                     out_zp: int, compact: bool = False) -> np.ndarray:
    """"2x4/fused"'s stream (c/dsp/mtk_gemm_2x4_fused.h): per channel quad (the last one zero-padded) of a layer of up
    to QUAD_STRAIGHT groups its biased weights (pack_weights_biased), then for each channel pair its head words
    (b0 + 256·b1, b1) and its two channels' multiplier, rounding term and shift (pack_fused_stream's), 32 bytes; of a
    deeper layer, or for the compact loop ("2x4/compact") at any depth, the quad's four head words, its weights, then
    its channels' multipliers, rounding terms and shifts."""
    b, m, rounding, e = requantization_terms(bias, multiplier, shift, out_zp, -(-w.shape[0] // 4) * 4)
    weights = pack_weights_biased(w, 4).view(np.uint8).reshape(len(b) // 4, -1)
    params = [v[c::4] for c in range(4) for v in (m, rounding, e)]
    head = [b[0::4] + 256 * b[1::4], b[1::4], b[2::4] + 256 * b[3::4], b[3::4]]
    if weights.shape[1] // 16 <= QUAD_STRAIGHT and not compact:
        quads = [weights, _words(head[:2] + params[:6]), _words(head[2:] + params[6:])]
    else:
        quads = [_words(head), weights, _words(params)]
    return np.ascontiguousarray(np.concatenate(quads, axis=1)).view(np.int8).reshape(-1)


def requantization_terms(bias: np.ndarray, multiplier: np.ndarray, shift: np.ndarray, out_zp: int,
                         padded_channels: int) -> tuple[np.ndarray, ...]:
    """Per channel, zero-padded to `padded_channels`: bias, multiplier, rounding term 2^(e−1) + out_zp·2^e and shift e
    (a zero multiplier: e = 1), as the fused streams hold them."""
    padded = lambda v, fill: np.concatenate([np.asarray(v, np.int64), np.full(padded_channels - len(v), fill, np.int64)])
    m = padded(multiplier, 0)
    e = np.where(m == 0, 1, -padded(shift, -1))
    return padded(bias, 0), m, (np.int64(1) << (e - 1)) + out_zp * (np.int64(1) << e), e


def _words(cols: list[np.ndarray]) -> np.ndarray:
    """Per row of `cols` (equal-length int64 columns), their values as little-endian 32-bit words: [rows, 4·len(cols)]
    bytes."""
    return (np.stack(cols, axis=1) & 0xFFFFFFFF).astype(np.uint32).view(np.uint8).reshape(len(cols[0]), -1)


def quad_stream_bytes(channels: int, depth: int) -> int:
    """Bytes of pack_quad_stream's stream."""
    return -(-channels // 4) * (4 * GROUP * -(-depth // GROUP) + QUAD_TAIL)


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


def live_channel_tables(constant: np.ndarray, live: np.ndarray) -> np.ndarray:
    """What mtk_gemm_2x2_fused_live_s8 (and 2x4's) reads after the stream of the `live` channels it computes, for a
    layer whose channels output `constant` (constant_channels): each channel's constant output (int8; 0 for one
    computed), a zero byte when the channels are odd, then each channel's index among the computed ones (int16; -1: a
    constant one)."""
    fill = np.where(live, 0, constant).astype(np.int8)
    source = np.where(live, np.cumsum(live) - 1, -1).astype(np.int16)
    return np.concatenate([fill, np.zeros(len(fill) % 2, np.int8), source.view(np.int8)])


def worth_leaving_out(constant: np.ndarray, act_min: int, groups: int) -> bool:
    """Whether leaving a layer's constant channels out of its two-row fused GEMM saves instructions: about 6 a group
    and 19 a channel of theirs against about 11 a channel and row to spread the outputs."""
    return int((constant >= act_min).sum()) * (6 * groups + 19) > 22 * len(constant)
