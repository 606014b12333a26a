"""Every hand-written kernel a GEMM, depthwise or pooling layer may run, one typed spec each: its id (what tuning
files and metadata.json hold), op family, the instruction sets with code for it, block, weights' flash format and
packer, the C file it lives in and its C signature; and per family and instruction set, the order a layer tries
them in, the default first.

To add a kernel for an instruction set: write it in the C file named here, add its KernelSpec (and its id to the
family's order for that instruction set); a depthwise or pooling kernel also needs its lowering in the op module
(its KernelChoice), a GEMM one is lowered by ops/gemm.py from the spec.

GEMM weights: "int8"; "int16" (expanded offline in SXTB16 order: no SXTB16 in the loop on DSP cores, twice the
flash); "biased" (int8, two channels to an int16 halfword, the low one biased by 128: one SXTB16 per two weights of a
channel pair on DSP cores); "fused" (biased, with each tile's biases and requantization in one stream); "pairs" (two
channels to an int32, one SMLAL per two products on the Cortex-M3, twice the flash); "s8" (int8 as "int8" lays it
out, in groups of 4: the Cortex-M3's kernels named apart from those of the same block over packed rows); "s16" (int16
as "int16" lays it out: the 1x4 kernel that reads the input's rows as they are).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum
from functools import partial
from typing import Callable

import numpy as np

from ..ops.microkernels import GROUP, HELIUM_CHUNK, pack_weight_pairs, pack_weights, pack_weights_biased, pack_weights_int16, \
    pack_weights_narrow
from ..target import Cpu, Isa
from .signature import CFunction


class Family(Enum):
    GEMM = "gemm"
    DEPTHWISE = "depthwise"
    POOL = "pool"
    WINOGRAD = "winograd"
    FEW_INPUTS = "few_inputs"


# The C kernel families (kernels/files.py: their files on each instruction set)
DOT_HEADER = "dot_s8"   # the GEMM's micro-kernels and row packers
BIASED_HEADER = "dot_biased_s8"
GEMM_2X4_HEADER = "gemm_2x4_fused"
GEMM_BAND_HEADER = "gemm_band_fused"
GEMM_MVE_HEADER = "gemm_mve"
IM2COL_HEADER = "im2col_s8"
RUNS_HEADER = "im2col_runs_s8"
DEPTHWISE_HEADER = "depthwise_s8"
DEPTHWISE_DSP_HEADER = "depthwise_dsp"
DEPTHWISE_MVE_HEADER = "depthwise_mve"
DW3X3_HEADER = "dw3x3_dsp"
POOL_HEADER = "pool"
WINOGRAD_HEADER = "winograd_s8_dsp"
POOL_MVE_HEADER = "pool_mve"
CONV_FEW_HEADER = "conv_few_dsp"

# Parallel implementations of a C kernel family on some cores (as TFLM's optimised kernel files): per family and core
# (gcc -mcpu name) files of kernels/c/ included just before the family's last file, whose loops they replace. The
# one-row fused GEMM's loop ("1x4/fused") with single loads, software-pipelined: the Cortex-M7 issues each beside a
# multiply, the M33 takes single loads for fewer cycles than multiples (the M4 for more: it keeps the LDMs). The two-row
# one's ("2x2/fused") pair loops and rows' sums: the Cortex-M7's, each load beside a multiply or an ALU instruction, the
# requantization's constants in the last group's free slots. The M33's one-row GEMM takes its quads two at a time (each
# row word loaded once for 8 channels).
_ROW_DUAL = "dsp/mtk_fused_row_dual.h"
CORE_FILES: dict[tuple[str, str], tuple[str, ...]] = {
    (BIASED_HEADER, "cortex-m7"): (_ROW_DUAL, "dsp/mtk_fused_pair_m7.h"),
    (BIASED_HEADER, "cortex-m33"): (_ROW_DUAL, "dsp/mtk_fused_octets_m33.h"),
}


# Own files whose kernels read two weight streams at once (the M33's quads in pairs: each quad's weights its own
# stream), left out where the flash rewards one sequential stream (one_stream_flash): there most of their misses
# start a transfer of their own
TWO_STREAM_FILES = frozenset({"dsp/mtk_fused_octets_m33.h"})


def core_files(cpu: Cpu, one_stream: bool = False) -> dict[str, tuple[str, ...]]:
    """Per C kernel family, `cpu`'s own files (CORE_FILES); one_stream: without TWO_STREAM_FILES."""
    return {family: tuple(f for f in files if not (one_stream and f in TWO_STREAM_FILES))
            for (family, core), files in CORE_FILES.items() if core == cpu.name}


# C parameter lists several functions share
_DOT = "const void* x, const void* w, int32_t groups, int32_t* acc"   # packed rows by a weight tile
_ROWS = "const void* x, const void* w, int32_t k, int32_t* acc"       # the input's row as it is
_TWO_ROWS = "const void* x0, const void* x1, const void* w, int32_t k, int32_t* acc"
_FUSED_ROW = ("void* x, const void* w, int32_t groups, int32_t channels, void* out, const void* src, int32_t k, "
              "int32_t lo, int32_t hi, int32_t sign")
_FUSED_CHUNK = ("void* x, const void* w, int32_t groups, int32_t channels, void* out, void* sums, int32_t g0, "
                "int32_t total, const void* src, int32_t k, int32_t lo, int32_t hi")
_BAND = ("const void* x, const void* w, int32_t k, int32_t channels, void* out, int32_t pixels, void* scratch, "
         "int32_t band, int32_t lo, int32_t hi, int32_t sign")
_MVE_GEMM = ("const void* x, const void* w, int32_t depth, int32_t channels, const void* params, int32_t out_zp, "
             "int32_t act_min, int32_t act_max, void* out")
_POOL = ("const void* x, void* out, int32_t in_h, int32_t in_w, int32_t C, int32_t out_h, int32_t out_w, int32_t kh, "
         "int32_t kw, int32_t stride_h, int32_t stride_w, int32_t pad_top, int32_t pad_left, int32_t act_min, "
         "int32_t act_max, int average, int int16")


def _f(name: str, params: str) -> CFunction:
    return CFunction.of(name, params)


# The GEMM's row packers (c/mtk_dot_s8.h, c/mtk_im2col_s8.h, c/mtk_im2col_runs_s8.h): int8 rows into the scratch
# as the micro-kernels read them
_TAPS = ("int32_t in_h, int32_t in_w, int32_t in_c, int32_t kh, int32_t kw, int32_t dil_h, int32_t dil_w, "
         "const void* pad, void* dst")
PACK_ROW = _f("mtk_pack_row_s16", "const void* src, int32_t k, void* dst")
PACK_PAIR = _f("mtk_pack_pair_s16", "const void* src0, const void* src1, int32_t k, void* dst")
PACK_TAPS_ROW = _f("mtk_pack_taps_row_s16", f"const void* x, int32_t iy, int32_t ix, {_TAPS}")
PACK_TAPS_PAIR = _f("mtk_pack_taps_pair_s16",
                    f"const void* x, int32_t iy0, int32_t ix0, int32_t iy1, int32_t ix1, {_TAPS}")
PACK_ROW_GROUPS = _f("mtk_pack_row_groups_s16", "const void* src, int32_t groups, void* dst")
PACK_PAIR_GROUPS = _f("mtk_pack_pair_groups_s16", "const void* src0, const void* src1, int32_t groups, void* dst")
PACK_SUMS = _f("mtk_pack_sums_s16", "const void* x, int32_t groups, int32_t rows, int32_t* sums")
IM2COL = _f("mtk_im2col_s8", "const void* x, int32_t iy, int32_t ix, int32_t in_h, int32_t in_w, int32_t in_c, "
                             "int32_t c0, int32_t cn, int32_t kh, int32_t kw, int32_t dil_h, int32_t dil_w, "
                             "int32_t pad, int32_t tail, void* dst")
_RUNS = ("int32_t in_h, int32_t in_w, int32_t in_c, int32_t kh, int32_t kw, int32_t dil_h, int32_t pad, void* stage, "
         "void* dst")
PACK_RUNS_ROW = _f("mtk_pack_runs_row_s16", f"const void* x, int32_t iy, int32_t ix, {_RUNS}")   # c/mtk_im2col_runs_s8.h
PACK_RUNS_PAIR = _f("mtk_pack_runs_pair_s16",
                    f"const void* x, int32_t iy0, int32_t ix0, int32_t iy1, int32_t ix1, {_RUNS}")
ROW_PACKERS = (PACK_ROW, PACK_PAIR, PACK_TAPS_ROW, PACK_TAPS_PAIR, PACK_ROW_GROUPS, PACK_PAIR_GROUPS, PACK_SUMS, IM2COL,
               PACK_RUNS_ROW, PACK_RUNS_PAIR)

Packer = Callable[[np.ndarray, int, int], np.ndarray]   # (weights [channels, depth], tile, group) -> flash array


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


@dataclass(frozen=True)
class KernelSpec:
    id: str                          # what tuning files and metadata.json hold
    family: Family
    isas: tuple[Isa, ...]            # instruction sets whose C has code for it
    header: str                      # the C file it lives in
    function: CFunction | None       # its C function (None: the family's TVM-generated kernel)
    block: tuple[int, int] = (1, 1)  # GEMM: rows × channels per call
    weights: str = ""                # the weights' flash format
    bytes_per_weight: int = 1
    pack: Packer | None = None
    fused: bool = False       # the whole GEMM with its requantization (gemm_mve.py), not a block's sums
    row_sums: bool = False    # reads each packed row's sum after it (mtk_pack_sums_s16)
    # reads the input's int8 rows as they are (no packed scratch; k values a call, a partial group too), its last
    # channel tile only as wide as the channels left (pack_weights_narrow, tile_kernel): rows of the input only
    direct: bool = False
    tails: tuple[CFunction, ...] = ()      # a direct kernel's functions for a last tile of 1, 2, ... cols − 1 channels
    per_channel: CFunction | None = None   # a fused one-row kernel's for channels of their own requantization
    chunked: tuple[CFunction, ...] = ()    # a fused one-row kernel's of a chunk of the row: shared, per channel
    helpers: tuple[CFunction, ...] = ()    # other functions of the C file its lowering calls

    @property
    def name(self) -> str:
        """Its C function's name."""
        return self.function.name if self.function else ""

    @property
    def rows(self) -> int:
        return self.block[0]

    @property
    def cols(self) -> int:
        return self.block[1]

    @property
    def functions(self) -> tuple[CFunction, ...]:
        """Every C function it names."""
        own = (self.function, self.per_channel) if self.function else ()
        return tuple(f for f in own if f) + self.tails + self.chunked + self.helpers

    def tile_kernel(self, channels: int) -> CFunction:
        """A direct kernel's C function for a tile of `channels` (up to its block's) channels."""
        assert self.function is not None
        return self.function if channels == self.cols else self.tails[channels - 1]

    def weight_bytes(self, channels: int, depth: int, group: int) -> int:
        """Flash of weights [channels, depth] packed for it: whole tiles of its channels (direct: the channels),
        whole groups of depth."""
        padded = channels if self.direct else -(-channels // self.cols) * self.cols
        return padded * -(-depth // group) * group * self.bytes_per_weight


def _gemm(name: str, rows: int, cols: int, weights: str, bytes_per_weight: int, pack: Packer, isas: tuple[Isa, ...],
          params: str = _DOT, header: str = DOT_HEADER, **traits) -> KernelSpec:
    return KernelSpec(f"{rows}x{cols}/{weights}", Family.GEMM, isas, header, _f(name, params), (rows, cols), weights,
                      bytes_per_weight, pack, **traits)


ALL_ISAS = tuple(Isa)
_fused_1x4 = partial(_f, params=_FUSED_ROW)


def _fused_rows(cols: int, header: str, split: str = "", rows: str = "") -> KernelSpec:
    """2x`cols`/fused: two packed rows by `cols` channels, requantized inside; its helper computes the live
    (non-constant) channels' stream and fills the constant ones in. `rows`, `split`: the C parameters the kernel
    takes after `stride` (2x4's count of rows a call and its code's row pairs) and after `sign` (2x2's loads word by
    word or not)."""
    def params(channels: str, tail: str = "") -> str:
        return (f"const void* x, const void* w, int32_t groups, int32_t {channels}, void* out, int32_t stride{rows}, "
                f"int32_t lo, int32_t hi, int32_t sign{split}{tail}")
    live = _f(f"mtk_gemm_2x{cols}_fused_live_s8", params("live", ", int32_t channels, int32_t stream_bytes"))
    return _gemm(f"mtk_gemm_2x{cols}_fused_s8", 2, cols, "fused", 1, _biased, (Isa.DSP,), params("channels"), header,
                 fused=True, helpers=(live,))
_QUADS = _fused_rows(4, GEMM_2X4_HEADER, rows=", int32_t rows, int32_t pairs")
GEMM_KERNELS = (
    _gemm("mtk_dot_2x2_s8", 2, 2, "int8", 1, _int8, ALL_ISAS),
    _gemm("mtk_dot_1x4_s8", 1, 4, "int8", 1, _int8, ALL_ISAS),
    _gemm("mtk_dot_2x2_w16_s8", 2, 2, "int16", 2, _int16, (Isa.DSP,)),
    _gemm("mtk_dot_1x4_w16_s8", 1, 4, "int16", 2, _int16, (Isa.DSP,)),
    _gemm("mtk_dot_2x2_biased_s8", 2, 2, "biased", 1, _biased, (Isa.DSP,), header=BIASED_HEADER, row_sums=True),
    _gemm("mtk_dot_1x4_biased_s8", 1, 4, "biased", 1, _biased, (Isa.DSP,), header=BIASED_HEADER, row_sums=True),
    _fused_rows(2, BIASED_HEADER, ", int32_t split"),
    _QUADS,
    replace(_QUADS, id="2x4/compact"),   # 2x4/fused's products, a pair a call, in a loop of little code (ops/gemm.py)
    # (ops/gemm_band.py) every row of the input a call, a band of pairs packed at a time, each quad over the band
    KernelSpec("2x4/band", Family.GEMM, (Isa.DSP,), GEMM_BAND_HEADER, _f("mtk_gemm_band_fused_s8", _BAND), (2, 4),
               "fused", 1, _biased, fused=True),
    _gemm("mtk_gemm_1x4_fused_s8", 1, 4, "fused", 1, _biased, (Isa.DSP,), _FUSED_ROW, BIASED_HEADER, fused=True,
          per_channel=_fused_1x4("mtk_gemm_1x4_fused_pc_s8"),
          chunked=(_f("mtk_gemm_1x4_fused_chunk_s8", _FUSED_CHUNK), _f("mtk_gemm_1x4_fused_pc_chunk_s8", _FUSED_CHUNK))),
    _gemm("mtk_dot_1x8_s8", 1, 8, "int8", 1, _int8, (Isa.SCALAR, Isa.M3)),
    _gemm("mtk_dot_1x4_paired_s8", 1, 4, "pairs", 2, _pairs, (Isa.M3,)),
    _gemm("mtk_dot_2x4_s8", 2, 4, "s8", 1, _int8, (Isa.M3,)),
    _gemm("mtk_dot_1x8_rows_s8", 1, 8, "s8", 1, _narrow, (Isa.M3,), _ROWS, direct=True,
          tails=tuple(_f(f"mtk_dot_1x{n}_rows_s8", _ROWS) for n in range(1, 8))),
    _gemm("mtk_dot_2x2_rows_s8", 2, 2, "s8", 1, _narrow, (Isa.M3,), _TWO_ROWS, direct=True,
          tails=(_f("mtk_dot_2x1_rows_s8", _TWO_ROWS),)),
    _gemm("mtk_dot_1x4_rows_w16_s8", 1, 4, "s16", 2, _narrow_int16, (Isa.SCALAR, Isa.DSP), _ROWS, direct=True,
          tails=tuple(_f(f"mtk_dot_1x{n}_rows_w16_s8", _ROWS) for n in range(1, 4))),
    _gemm("mtk_dot_2x2_rows_w16_s8", 2, 2, "s16", 2, _narrow_int16, (Isa.DSP,), _TWO_ROWS, direct=True,
          tails=(_f("mtk_dot_2x1_rows_w16_s8", _TWO_ROWS),)),
    _gemm("mtk_gemm_mve_2x4_s8", 2, 4, "int8", 1, _int8, (Isa.MVE,), _MVE_GEMM, GEMM_MVE_HEADER, fused=True,
          # (gemm_mve.kernel_functions) one row; two rows and one when a channel shifts left; two rows into
          # output rows apart (a transpose convolution's stride phase), shifting right and left
          helpers=(*(_f(n, _MVE_GEMM) for n in ("mtk_gemm_mve_1x4_s8", "mtk_gemm_mve_2x4_lshift_s8",
                                                 "mtk_gemm_mve_1x4_lshift_s8")),
                   *(_f(n, f"{_MVE_GEMM}, int32_t out_step") for n in ("mtk_gemm_mve_2x4_apart_s8",
                                                                       "mtk_gemm_mve_2x4_apart_lshift_s8")))),
)

_DW_TAPS = ("const void* x, int32_t row_step, int32_t col_step, const void* w, int32_t kh, int32_t kw, int32_t ky_lo, "
            "int32_t ky_hi, int32_t kx_lo, int32_t kx_hi, int32_t pad")
DEPTHWISE_KERNELS = (
    KernelSpec("c4", Family.DEPTHWISE, ALL_ISAS, DEPTHWISE_HEADER,   # 4 channels a call
               _f("mtk_dw_s8", f"{_DW_TAPS}, int32_t off1, int32_t off2, int32_t off3, int32_t* acc"), (1, 4),
               helpers=(_f("mtk_dw_pairs_s8", f"{_DW_TAPS}, int32_t off2, int32_t* acc"),
                        _f("mtk_dw2_s8", "const void* x, int32_t row_step, int32_t col_step, int32_t pair_step, "
                                         "const void* w, int32_t kh, int32_t kw, int32_t* acc"),
                        _f("mtk_dw_requant_mve_s8", "const int32_t* acc, const int32_t* bias, const int32_t* mult, "
                                                    "const int32_t* shift, int32_t out_zp, int32_t act_min, "
                                                    "int32_t act_max, int32_t n, void* out"))),
    KernelSpec("dsp-c4", Family.DEPTHWISE, (Isa.DSP,), DEPTHWISE_DSP_HEADER,   # 4 channels and 2 taps a step
               _f("mtk_depthwise_dsp_s8", "const void* x, const void* groups_data, const void* pad, void* out, "
                                          "int32_t in_h, int32_t in_w, int32_t C_in, int32_t M, int32_t out_h, "
                                          "int32_t out_w, int32_t kh, int32_t kw, int32_t stride_h, int32_t stride_w, "
                                          "int32_t dil_h, int32_t dil_w, int32_t pad_top, int32_t pad_left, "
                                          "int32_t act_min, int32_t act_max"), (1, 4)),
    KernelSpec("mve-c16", Family.DEPTHWISE, (Isa.MVE,), DEPTHWISE_MVE_HEADER,   # 16 channels a pass
               _f("mtk_depthwise_mve_s8", "const void* x, const void* s, const void* pad, void* out, int32_t in_h, "
                                          "int32_t in_w, int32_t in_c, int32_t C, int32_t out_h, int32_t out_w, "
                                          "int32_t kh, int32_t kw, int32_t stride_h, int32_t stride_w, int32_t dil_h, "
                                          "int32_t dil_w, int32_t pad_top, int32_t pad_left, int32_t pairs, "
                                          "int32_t out_zp, int32_t act_min, int32_t act_max"), (1, 16)),
    # a channel's 3x3 weights in registers, 4 outputs a block: the layer's own generated function
    KernelSpec("dsp-3x3", Family.DEPTHWISE, (Isa.DSP,), DW3X3_HEADER, None, (4, 1)),
)

POOL_KERNELS = (
    KernelSpec("tvm", Family.POOL, ALL_ISAS, "", None),
    KernelSpec("c", Family.POOL, (Isa.SCALAR, Isa.M3, Isa.DSP), POOL_HEADER, _f("mtk_pool", _POOL)),
    KernelSpec("mve", Family.POOL, (Isa.MVE,), POOL_MVE_HEADER, _f("mtk_pool_mve", _POOL)),
)

# A 3x3 stride-1 conv as integer Winograd F(2x2, 3x3) or F(4x4, 3x3) (ops/winograd_dsp.py): the layer in one call,
# 2 tiles x 3 channels a block, int16 transformed weights (16/9 or 36/9 x 2 bytes a weight)
WINOGRAD = "wino-f2x2"
WINOGRAD4 = "wino-f4x4"
_WINOGRAD_ARGS = ("const void* x, const void* u, const void* q, const void* pad, void* out, void* scratch, "
                  "int32_t in_h, int32_t in_w, int32_t in_c, int32_t out_h, int32_t out_w, int32_t out_c, "
                  "int32_t pad_top, int32_t pad_left, int32_t act_min, int32_t act_max")
WINOGRAD_KERNELS = (
    KernelSpec(WINOGRAD, Family.WINOGRAD, (Isa.DSP,), WINOGRAD_HEADER, _f("mtk_winograd_s8_dsp", _WINOGRAD_ARGS),
               (2, 3), "winograd", 2),
    KernelSpec(WINOGRAD4, Family.WINOGRAD, (Isa.DSP,), WINOGRAD_HEADER, _f("mtk_winograd4_s8_dsp", _WINOGRAD_ARGS),
               (4, 3), "winograd", 2),
)

# A conv of 1 to 4 input channels on DSP cores (ops/conv_few_dsp.py): the layer in one call, its windows
# read from int16-widened input rows, 2 pixels x 4 channels a block, int16 weights; the layer's own function
FEW_INPUTS_KERNEL = "dsp-few"
FEW_INPUTS_KERNELS = (KernelSpec(FEW_INPUTS_KERNEL, Family.FEW_INPUTS, (Isa.DSP,), CONV_FEW_HEADER, None, (2, 4),
                                   "int16", 2),)

KERNELS = GEMM_KERNELS + DEPTHWISE_KERNELS + POOL_KERNELS + WINOGRAD_KERNELS + FEW_INPUTS_KERNELS
BY_ID = {(k.family, k.id): k for k in KERNELS}
GEMM_BY_ID = {k.id: k for k in GEMM_KERNELS}
# Every C function the table names, for the generated C's prototypes
C_FUNCTIONS = {f.name: f for f in (*ROW_PACKERS, *(f for k in KERNELS for f in k.functions))}


def spec(family: Family, kernel_id: str) -> KernelSpec:
    return BY_ID[family, kernel_id]


# Per instruction set, the depthwise (several input channels) and pooling kernels a layer may take, the default
# first; the first that takes a layer is its default.
ORDER: dict[Family, dict[Isa, tuple[str, ...]]] = {
    Family.DEPTHWISE: {Isa.MVE: ("mve-c16", "c4"), Isa.DSP: ("dsp-3x3", "dsp-c4", "c4"), Isa.M3: ("c4",),
                       Isa.SCALAR: ("c4",)},
    Family.POOL: {Isa.MVE: ("mve", "tvm"), Isa.DSP: ("c", "tvm"), Isa.M3: ("c", "tvm"), Isa.SCALAR: ("tvm",)},
}

# Per instruction set, the GEMM kernels a GEMM of one row and of several rows may take, the default first.
# DSP cores: biased weights take int8's flash and fewer instructions than int8 ones, int16 ones fewer still in the
# loop for twice the flash. The fused ones requantize inside (2x2: every channel its own; 1x4: the layer's one
# multiplier and shift, or per channel).
# Cortex-M3 (long multiply, no DSP): one row of the input defaults to 1x8 s8 (the int8 row read as it is: no
# packing pass, no padded channels), im2col rows to 1x8 int8 (fewer instructions a product than 1x4); 1x4 paired
# takes the fewest instructions for twice the flash, 1x4 int8 pads fewer channels when channels % 8 <= 4. Several
# rows: 2x4 (a pair of rows times 4 channels, one SMLAL a channel for both rows); for 1, 2 or 5 channels (2x4 pads a
# third or more) pairs of the input's rows as they are by 2x2 s8, which packs none.
GEMM_ORDER: dict[Isa, tuple[tuple[str, ...], tuple[str, ...]]] = {
    Isa.DSP: (("1x4/fused", "1x4/biased", "1x4/int16", "1x4/s16"),
              ("2x2/fused", "2x4/fused", "2x4/compact", "2x4/band", "2x2/biased", "2x2/int16", "1x4/biased", "1x4/int16", "2x2/s16", "1x4/s16")),
    Isa.M3: (("1x8/s8", "1x8/int8", "1x4/pairs", "1x4/int8"), ("2x4/s8", "2x2/s8", "2x2/int8", "1x4/pairs")),
    Isa.MVE: (("2x4/int8",), ("2x4/int8",)),
    Isa.SCALAR: (("1x4/int8", "1x4/s16"), ("2x2/int8", "1x4/int8", "1x4/s16")),
}

# Kernels returning a block's plain sums, for callers that pack rows and requantize themselves (lstm.py)
# and, on DSP cores, layers with a channel that shifts left (Helium's fused kernels shift either way):
# Helium's unfused ones; int8 on DSP cores (the biased ones read the rows' sums the GEMM packs for them).
PLAIN_SUMS = {Isa.MVE: (("1x4/int8",), ("2x2/int8", "1x4/int8")),
              Isa.DSP: (("1x4/int8", "1x4/s16"), ("2x2/int8", "1x4/int8", "2x2/s16", "1x4/s16"))}

# Per instruction set, the channel counts for which a direct kernel comes first over the input's rows: (one row,
# several rows). DSP cores: below a whole quad, the fused one-row kernel computes the channels in C as a padded quad
# and the packed rows cost as much to write as to read; 1x4 s16 reads the int8 row and int16 weights as they are,
# 2x2 s16 two rows at a time (each weight read once for both). One row of 5-7 channels too: the partial quad costs
# as much as a whole one, and the packed row serves two quads only (357 deep: 1x4 s16 8-30 % fewer estimated cycles
# on the M4, M7 and M33, and less flash with the fused kernel's code). Cortex-M0/M0+: one or two channels over the
# input's rows take 1x4 s16 too, in C (1x4 int8 would multiply 4 channels and pack the row).
FEW_CHANNELS: dict[Isa, tuple[frozenset[int], frozenset[int]]] = {
    Isa.DSP: (frozenset({1, 2, 3, 5, 6, 7}), frozenset({1, 2, 3})), Isa.SCALAR: (frozenset({1, 2}), frozenset({1, 2}))}

# Per core, the several rows of the input's own that take the direct kernel (2x2/s16: the int8 rows as they are, int16
# weights, twice the flash) first: (at most this many channels, at least this many values a row per channel), the
# first pair whose channels cover the layer's. A packing kernel packs each row (int16, with its sum) once for all its
# channels: few channels of a long row do not pay for it, and on the M4 and M33, whose s16 loop costs more a product
# than the fused one, fewer still the more channels (the M7's s16 loop costs what its fused pair loop does). Measured
# against CMSIS-NN's 1x1 convs with bench/layer_compare.py --pointwise (figures in the commit and README).
CORE_DIRECT_ROWS: dict[str, tuple[tuple[int, int], ...]] = {"cortex-m4": ((6, 8), (8, 16)), "cortex-m7": ((32, 8),),
                                                           "cortex-m33": ((6, 8), (8, 16))}

# A packing GEMM kernel that pads this fraction of its channels or more gives way to a direct kernel of the same flash
# over the input's rows (the Cortex-M3's 2x2/s8: no padded channel, no packing pass, but a slower loop than 2x4/s8's).
# Measured on the M3 by `mtk tune`, 1x1 convs 16 deep: 2x2/s8 12-25 % fewer estimated cycles for 3, 6, 9, 10 channels
# (and 10 deep to 17, 13 to 9, 21 to 9: 9-22 %); 2x4/s8 fewer for 22, 25, 29 (1-2 %), and 29 channels 32 deep.
DIRECT_PADDING = 8

# Per core, the GEMM kernels of several rows that come before its instruction set's default, in order, where the
# channels come in whole blocks of the first. Cortex-M4 and M33: "2x4/fused" reads each weight word for both rows and
# each row word for two channel pairs (8 loads a group of 32 products against 2x2's 6 for 16: their loads take a cycle
# each), then its compact loop (what compiler.code_fitting_tuning tries first where its code overflows a small
# instruction cache); the M7 keeps "2x2/fused", scheduled for its dual issue.
CORE_SEVERAL_ROWS_FIRST: dict[str, tuple[str, ...]] = {"cortex-m4": ("2x4/fused", "2x4/compact"),
                                                       "cortex-m33": ("2x4/fused", "2x4/compact")}

# Per core, the input and output channels (None: any) up to which a GEMM of the input's own rows in whole quads over all
# of int8 takes "2x4/band" first (ops/gemm_band.py: one call for every row, each quad over a band of pairs): on the
# Cortex-M4 while a quad (16·groups + 64 bytes) fits the STM32L4's 256-byte ART data cache, which then holds it for
# every pair of the band (a deeper one is 2x4/fused's, whose passes read it forward and backward in turn); on the M33
# (whose cache holds the stream) for every depth of its straight code.
CORE_BAND_FIRST: dict[str, tuple[int, int | None]] = {"cortex-m4": (48, None), "cortex-m33": (64, None)}


def gemm_choices(cpu: Cpu, rows: int, fused: bool = True, channels: int | None = None,
                 input_rows: bool = False, depth: int | None = None) -> list[KernelSpec]:
    """The GEMM kernels a GEMM of `rows` rows may take on `cpu`, the default first; `fused`: whether a
    kernel that requantizes itself (every channel shifts right: requant.rshift_table) or reads the rows'
    sums the GEMM packs may be among them; `input_rows`: whether its rows are the input's own, which a direct
    kernel reads. A default whose block pads a third of its work or more past the
    GEMM's `channels` gives way to the first choice in as much flash padding fewer (Cortex-M3: 2x2 int8 before 2x4
    for 1, 2 or 5 channels; over im2col rows 1x4 before 1x8 for 1-5 or 9-10); over the input's rows, one padding an
    eighth of its channels or more to a direct kernel of as much flash (DIRECT_PADDING; Cortex-M3: 2x2 s8 before 2x4
    for 1-3, 5-7, 9, 10, 13, 14, 17 and 21 channels).
    Over the input's rows of FEW_CHANNELS channels the direct kernel comes first (DSP cores: 1-3, one row 5-7 too;
    M0: 1-2), and over several of them `depth` values long at a core's CORE_DIRECT_ROWS; several rows of channels in
    whole blocks of a core's own kernel take it first (CORE_SEVERAL_ROWS_FIRST)."""
    isa = cpu.isa
    table = GEMM_ORDER[isa] if fused else PLAIN_SUMS.get(isa, GEMM_ORDER[isa])
    kernels = [GEMM_BY_ID[i] for i in table[rows > 1] if input_rows or not GEMM_BY_ID[i].direct]
    first = [GEMM_BY_ID[i] for i in CORE_SEVERAL_ROWS_FIRST.get(cpu.name, ()) if rows > 1]
    if first and first[0] in kernels and channels and channels % first[0].cols == 0:
        kernels = [k for k in first if k in kernels] + [k for k in kernels if k not in first]
    per_channel = next((n for most, n in CORE_DIRECT_ROWS.get(cpu.name, ()) if channels and channels <= most), None)
    long_rows = rows > 1 and per_channel is not None and depth is not None and depth >= per_channel * channels
    if input_rows and (channels in FEW_CHANNELS.get(isa, ((), ()))[rows > 1] or long_rows):
        direct = next(k for k in kernels if k.direct)
        return [direct] + [k for k in kernels if k is not direct]
    padded = lambda k: channels if k.direct else -(-channels // k.cols) * k.cols
    direct = next((k for k in kernels if k.direct and k.bytes_per_weight == kernels[0].bytes_per_weight), None)
    if channels and direct and DIRECT_PADDING * (padded(kernels[0]) - channels) >= padded(kernels[0]):
        return [direct] + [k for k in kernels if k is not direct]
    if channels and 3 * (padded(kernels[0]) - channels) >= padded(kernels[0]):
        narrower = next((k for k in kernels if padded(k) < padded(kernels[0])
                         and k.bytes_per_weight == kernels[0].bytes_per_weight), None)
        if narrower is not None:
            kernels = [narrower] + [k for k in kernels if k is not narrower]
    return kernels


def weight_group(cpu: Cpu) -> int:
    """The k values per packed weight group on `cpu`."""
    return HELIUM_CHUNK if cpu.isa is Isa.MVE else GROUP
