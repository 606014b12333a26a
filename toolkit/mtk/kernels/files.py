"""The hand-written C kernels (kernels/c/) as data: per family (what a lowered kernel names in Kernel.headers) and
instruction set (microkernels.isa_of), the files the model's generated C includes, in that order, which are the
files copied into its project. No C file picks an instruction set: the compiler does, once, and includes that
set's files. Folders: c/common (what every instruction set shares), c/scalar (no long multiply: Cortex-M0/M0+),
c/m3 (v7-M without DSP), c/dsp (the DSP extension: Cortex-M4/M7/M33), c/mve (Helium: Cortex-M55). An instruction
set takes another's files where its cores run that code too: m3 scalar/'s plain C, dsp its im2col copies, mve the
DSP cores' 16x8 pairs.
"""

from __future__ import annotations

from pathlib import Path

C_DIR = Path(__file__).parent / "c"
ISAS = ("scalar", "m3", "dsp", "mve")

FIXEDPOINT = ("common/mtk_support.h", "common/mtk_fixedpoint.h")
_DOT_COMMON = (*FIXEDPOINT, "common/mtk_dot_s8_common.h")
_DOT_TAIL = ("common/mtk_dot_s8_calls.h", "common/mtk_dot_s8_wide.h", "common/mtk_dot_rows_w16.h")
DSP_INTRINSICS = "common/mtk_dsp_intrinsics.h"   # the toolchain's: ACLE, or its portable C
# The int8 GEMM micro-kernels (microkernels.py): the instruction set's file includes the common tail itself (and
# the scalar one mtk_dot_s8_plain.h, after its own 1x4 kernel).
DOT_S8 = {
    "scalar": (*_DOT_COMMON, "scalar/mtk_dot_s8_scalar.h", "scalar/mtk_dot_s8_plain.h", *_DOT_TAIL),
    "m3": (*_DOT_COMMON, "scalar/mtk_dot_s8_plain.h", "m3/mtk_dot_s8_m3.h", *_DOT_TAIL),
    "dsp": (*_DOT_COMMON, DSP_INTRINSICS, "dsp/mtk_dot_s8_dsp.h", *_DOT_TAIL),
    "mve": (*_DOT_COMMON, "mve/mtk_dot_s8_mve.h", "common/mtk_dot_s8_calls.h"),
}
_IM2COL_COPY = {"scalar": "scalar/mtk_im2col_s8_plain.h", "m3": "scalar/mtk_im2col_s8_plain.h",
                "dsp": "scalar/mtk_im2col_s8_plain.h", "mve": "mve/mtk_im2col_s8_mve.h"}
GEMM_MVE = ("mve/mtk_gemm_mve.h",)
_POOL = ("common/mtk_support.h", "common/mtk_pool_window.h")
_DOT_S16_DSP = (DSP_INTRINSICS, "dsp/mtk_dot_s16_dsp.h")
DOT_S16_STEPS = {"scalar": ("scalar/mtk_dot_s16_plain.h",), "m3": ("scalar/mtk_dot_s16_plain.h",), "dsp": _DOT_S16_DSP,
                 "mve": (*_DOT_S16_DSP, "mve/mtk_dot_s16_mve.h")}   # the 16x8 micro-kernels' steps


def _every(*files: str) -> dict[str, tuple[str, ...]]:
    return {isa: files for isa in ISAS}


FAMILIES: dict[str, dict[str, tuple[str, ...]]] = {
    "fixedpoint": _every(*FIXEDPOINT),
    "dot_s8": DOT_S8,
    "dot_biased_s8": {"dsp": (*DOT_S8["dsp"], "dsp/mtk_dot_biased_s8.h")},
    "gemm_2x4_fused": {"dsp": (*DOT_S8["dsp"], "dsp/mtk_dot_biased_s8.h", "dsp/mtk_gemm_2x4_fused.h")},
    "gemm_band_fused": {"dsp": (*DOT_S8["dsp"], "dsp/mtk_dot_biased_s8.h", "dsp/mtk_gemm_2x4_fused.h",
                                "dsp/mtk_gemm_band_fused.h")},
    "im2col_s8": {isa: (*DOT_S8[isa], _IM2COL_COPY[isa], "common/mtk_im2col_s8.h") for isa in ISAS},
    "im2col_runs_s8": {**{isa: (*DOT_S8[isa], "common/mtk_im2col_runs_s8.h") for isa in ISAS},
                       "dsp": (*DOT_S8["dsp"], "dsp/mtk_im2col_runs_inside.h", "common/mtk_im2col_runs_s8.h")},
    "depthwise_s8": {**{isa: (*DOT_S8[isa], "common/mtk_depthwise_s8.h") for isa in ISAS},
                     "mve": (*DOT_S8["mve"], "common/mtk_depthwise_s8.h", "mve/mtk_depthwise_s8_mve.h")},
    "depthwise_dsp": {"dsp": (*FIXEDPOINT, DSP_INTRINSICS, "dsp/mtk_depthwise_dsp.h")},
    "winograd_s8_dsp": {"dsp": (*FIXEDPOINT, DSP_INTRINSICS, "dsp/mtk_winograd_s8_dsp.h",
                                "dsp/mtk_winograd4_s8_dsp.h")},
    "conv_few_dsp": {"dsp": (*DOT_S8["dsp"], "dsp/mtk_dot_biased_s8.h", "dsp/mtk_depthwise_dsp.h",
                             "dsp/mtk_dw3x3_dsp.h", "dsp/mtk_conv_few_dsp.h")},
    "dw3x3_dsp": {"dsp": (*FIXEDPOINT, DSP_INTRINSICS, "dsp/mtk_depthwise_dsp.h", "dsp/mtk_dw3x3_dsp.h")},
    "pool": {"scalar": (*_POOL, "scalar/mtk_pool_plain.h", "common/mtk_pool.h"),
             "m3": (*_POOL, "scalar/mtk_pool_plain.h", "common/mtk_pool.h"),
             "dsp": (*_POOL, DSP_INTRINSICS, "dsp/mtk_pool_dsp.h", "common/mtk_pool.h")},
    "dot_s16": {isa: ("common/mtk_support.h", *DOT_S16_STEPS[isa], "common/mtk_dot_s16.h") for isa in ISAS},
    "depthwise_s16": _every(*FIXEDPOINT, DSP_INTRINSICS, "common/mtk_depthwise_s16.h"),
    "softmax_s16": _every(*FIXEDPOINT, DSP_INTRINSICS, "common/mtk_softmax_s16.h"),
    "signal": _every("common/mtk_signal.h"),
    "gemm_mve": {"mve": GEMM_MVE},
    "add_s8": {isa: (*FIXEDPOINT, DSP_INTRINSICS, "common/mtk_add_s8.h") for isa in ("m3", "dsp")},
    "add_mve": {"mve": (*GEMM_MVE, "mve/mtk_add_mve.h")},
    "mul_mve": {"mve": (*GEMM_MVE, "mve/mtk_mul_mve.h")},
    "depthwise_mve": {"mve": (*GEMM_MVE, "mve/mtk_depthwise_mve.h")},
    "pool_mve": {"mve": (*_POOL, *GEMM_MVE, "mve/mtk_pool_mve.h")},
}


def c_files(isa: str, families: list[str] | tuple[str, ...],
            own: dict[str, tuple[str, ...]] | None = None) -> list[str]:
    """The files (relative to C_DIR) of `families` on `isa`, in an order the C includes them in, each once; `own`: per
    family a core's own files (kernels/table.py CORE_FILES), included just before the family's last file wherever
    it comes (another family's list may hold it first)."""
    def files_of(family: str) -> tuple[str, ...]:
        try:
            return FAMILIES[family][isa]
        except KeyError:
            raise KeyError(f"no C kernel family {family!r} for instruction set {isa!r}") from None

    before = {files_of(family)[-1]: extra for family, extra in (own or {}).items() if isa in FAMILIES[family]}
    files: dict[str, None] = {}
    for family in families:
        for file in files_of(family):
            files.update(dict.fromkeys((*before.get(file, ()), file)))
    return list(files)


def project_name(rel: str) -> str:
    """A file's name in a generated project's src/ (every kernel file's name is unique: the folders are flat there)."""
    return Path(rel).name
