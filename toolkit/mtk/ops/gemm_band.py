"""The GEMM of the input's own rows in one call on DSP cores ("2x4/band": c/dsp/mtk_gemm_band_fused.h): the rows a
band of packed pairs (band_pairs) at a time, each channel quad of 2x4/fused's stream over every pair of the band.
For few input channels, where a pair of rows by a quad is a few groups, the calls, the rows' sums and the stream
re-read per pair (from flash: the Cortex-M4's ART data cache holds 256 bytes) cost as much as the products."""

from __future__ import annotations

import numpy as np
from tvm.script import tirx as T

from ..kernels.table import KernelSpec
from .base import Const, Kernel, OpData, Scratch, c_call
from .microkernels import GROUP, QUAD_STRAIGHT, STREAM_ALIGN, pack_quad_stream

SCRATCH_SHARE = 16          # 2x4's packed rows take at most 1/SCRATCH_SHARE of the layer's input and output bytes
BAND_BYTES = (1024, 2048)   # a band's packed pairs and their sums: the layer's scratch_room within these bounds
BAND_PAIRS = 16             # pairs a band packs at most (a quad's set-up a band is a cycle or two a pair by then)


def scratch_room(layer_bytes: int) -> int:
    """The most scratch 2x4's packed rows (a band's, or a call's pairs: gemm.quad_call_pairs) take in a layer of
    `layer_bytes` input and output bytes: a scratch that sets the arena undoes what tiling saves."""
    return layer_bytes // SCRATCH_SHARE


def pair_bytes(depth: int) -> int:
    """Scratch bytes of a packed pair of rows and its two sums."""
    return 4 * depth + 8


def band_pairs(rows: int, depth: int, layer_bytes: int) -> int:
    """Pairs of rows a band packs: as many as its bytes hold (the layer's scratch_room within BAND_BYTES), at
    most BAND_PAIRS, one at least, no more than the GEMM has."""
    most = min(BAND_BYTES[1], max(BAND_BYTES[0], scratch_room(layer_bytes)))
    return max(1, min(-(-rows // 2), BAND_PAIRS, most // pair_bytes(depth)))


def band_suits(rows: int, channels: int, depth: int, input_rows: bool) -> bool:
    """Whether the band kernel computes a GEMM: the input's own rows, several of them, whole channel quads and whole
    groups, few enough for its straight code (2x4/fused's, up to QUAD_STRAIGHT groups; the caller checks its stream
    and activation range: gemm.quads_suit)."""
    return input_rows and rows > 1 and channels % 4 == 0 and depth % GROUP == 0 and depth // GROUP <= QUAD_STRAIGHT


def gemm_band_kernel(data: OpData, mk: KernelSpec, stream: tuple) -> Kernel:
    """The kernel computing the GEMM op `data` holds (gemm.GemmParams, rows of the input itself) with `mk` over the
    fused stream `stream` (gemm.stream_params) of twice its biases: the kernel packs the rows doubled, so that its sums
    come as the requantization takes them (2x4/fused doubles each)."""
    p = data.params
    op, y, rq = data.op, data.output, p.requant
    C, K = p.weights.shape
    P = y.size // C
    band = band_pairs(P, K, data.inputs[0].size + y.size)
    w, bias, multiplier, shift = stream
    packed = pack_quad_stream(w, 2 * bias.astype(np.int64), multiplier, shift, rq.out_zp)   # rows packed doubled
    scratch = band * pair_bytes(K)

    @T.prim_func
    def gemm_band(x: T.Buffer((P * K,), "int8"), w: T.Buffer((packed.size,), "int8"), out: T.Buffer((P * C,), "int8"),
                  rows: T.Buffer((scratch,), "int8")):
        T.evaluate(c_call(mk.function, x=T.address_of(x[0]), w=T.address_of(w[0]), k=K, channels=C,
                          out=T.address_of(out[0]), pixels=P, scratch=T.address_of(rows[0]), band=band,
                          lo=rq.act_min, hi=rq.act_max, sign=int(rq.negative_rounding_matters)))

    return Kernel(p.name, [op.inputs[0], Const("w", packed, STREAM_ALIGN), op.outputs[0], Scratch(scratch)],
                  func=gemm_band, headers=(mk.header,), c_calls=(mk.name,))
