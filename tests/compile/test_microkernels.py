"""The kernel table (mtk/kernels/table.py) agrees with the C it describes and with what the compiler reports."""

from __future__ import annotations

import re
import subprocess

import numpy as np
import pytest

from mtk.kernels import table
from mtk.kernels.files import C_DIR, c_files, project_name
from mtk.ops import microkernels
from mtk.ops.gemm import gemm_variants, micro_kernel
from mtk.target import CPUS, Isa

from armbuild import arm_gcc


def test_every_choice_is_a_micro_kernel_with_code_for_that_instruction_set():
    for isa, (single, several) in table.GEMM_ORDER.items():
        for label in single + several:
            assert isa in table.GEMM_BY_ID[label].isas, (isa, label)
    for family, order in table.ORDER.items():
        for isa, ids in order.items():
            assert all(isa in table.spec(family, i).isas for i in ids), (family, isa)
    assert {cpu.isa for cpu in CPUS.values()} == set(table.GEMM_ORDER) == set(Isa)


def test_ids_are_unique_within_a_family_and_functions_by_name():
    assert len(table.BY_ID) == len(table.KERNELS)
    functions = [f for k in table.KERNELS for f in k.functions] + list(table.ROW_PACKERS)
    assert len({f.name for f in functions}) == len(set(functions))   # (2x4/compact: 2x4/fused's function)


@pytest.mark.parametrize("cpu, isa", [("cortex-m0", Isa.SCALAR), ("cortex-m0plus", Isa.SCALAR), ("cortex-m3", Isa.M3),
                                      ("cortex-m33+nodsp+nofp", Isa.M3), ("cortex-m4", Isa.DSP), ("cortex-m7", Isa.DSP),
                                      ("cortex-m33", Isa.DSP), ("cortex-m55", Isa.MVE)])
def test_each_core_builds_the_kernels_of_its_extensions(cpu, isa):
    """Cpu.isa (the weight layouts the compiler packs, the C files it includes) and those files build under the
    core's own gcc flags."""
    assert CPUS[cpu].isa is isa
    gcc = arm_gcc()
    files = c_files(isa.value, ["dot_s8"])
    assert f"{isa.value}/mtk_dot_s8_{isa.value}.h" in files
    folders = [arg for folder in sorted(C_DIR.iterdir()) for arg in ("-I", str(folder))]
    subprocess.run([gcc, *CPUS[cpu].gcc_flags, "-fsyntax-only", "-Wall", "-Werror", *folders, "-x", "c", "-"],
                   input="".join(f'#include "{project_name(f)}"\n' for f in files), text=True, check=True)


@pytest.mark.parametrize("mk", table.GEMM_KERNELS, ids=lambda mk: mk.id)
def test_each_micro_kernel_is_defined_for_its_instruction_sets_and_its_packer_fills_its_flash(mk):
    # the C functions it names (a direct kernel's narrower tiles, made by a macro: test_kernel_headers calls them)
    names = (mk.name, *filter(None, [mk.per_channel and mk.per_channel.name]), *(f.name for f in mk.chunked))
    assert len(mk.tails) == (mk.cols - 1 if mk.direct else 0)
    for isa in mk.isas:   # the files of its family on that instruction set
        code = "".join((C_DIR / f).read_text() for f in c_files(isa.value, [mk.header]))
        for name in names:
            assert re.search(rf"\b{name}\s*\(", code), f"{name} not in {mk.header} on {isa.value}"
    w = np.random.default_rng(0).integers(-128, 128, (13, 37)).astype(np.int8)
    for group in (microkernels.GROUP, microkernels.HELIUM_CHUNK if mk.weights == "int8" else microkernels.GROUP):
        assert mk.pack(w, mk.cols, group).nbytes == mk.weight_bytes(13, 37, group)


def test_schedules_follow_the_table():
    m3, m4 = CPUS["cortex-m3"], CPUS["cortex-m4"]
    assert [s.label for s in gemm_variants(m3, 1)] == ["1x8/int8", "1x4/pairs", "1x4/int8"]
    assert [s.label for s in gemm_variants(m3, 1, input_rows=True)] == ["1x8/s8", "1x8/int8", "1x4/pairs", "1x4/int8"]
    assert [s.label for s in gemm_variants(m3, 9, input_rows=True)] == ["2x4/s8", "2x2/s8", "2x2/int8", "1x4/pairs"]
    assert [s.label for s in gemm_variants(m3, 9, channels=2, input_rows=True)] == ["2x2/s8", "2x4/s8", "2x2/int8",
                                                                                  "1x4/pairs"]
    assert [s.label for s in gemm_variants(m3, 9, channels=2)] == ["2x2/int8", "2x4/s8", "1x4/pairs"]
    # over the input's rows, 2x4/s8 padding an eighth of its channels or more gives way to 2x2/s8 (3, 7, 10, 14 ...)
    for channels, first in ((3, "2x2/s8"), (7, "2x2/s8"), (10, "2x2/s8"), (14, "2x2/s8"), (21, "2x2/s8"),
                            (11, "2x4/s8"), (22, "2x4/s8"), (25, "2x4/s8"), (29, "2x4/s8"), (32, "2x4/s8")):
        assert gemm_variants(m3, 9, channels=channels, input_rows=True)[0].label == first, channels
        assert gemm_variants(m3, 9, channels=channels)[0].label == "2x4/s8"   # im2col rows: no direct kernel
    assert [s.label for s in gemm_variants(m4, 1)] == ["1x4/fused", "1x4/biased", "1x4/int16"]
    assert [s.label for s in gemm_variants(m4, 1, channels=4, input_rows=True)] == ["1x4/fused", "1x4/biased",
                                                                                  "1x4/int16", "1x4/s16"]
    assert [s.label for s in gemm_variants(m4, 9, channels=3, input_rows=True)] == [
        "2x2/s16", "2x2/fused", "2x4/fused", "2x4/compact", "2x4/band", "2x2/biased", "2x2/int16", "1x4/biased", "1x4/int16",
        "1x4/s16"]
    assert [s.label for s in gemm_variants(m4, 9)] == ["2x2/fused", "2x4/fused", "2x4/compact", "2x4/band", "2x2/biased",
                                                        "2x2/int16", "1x4/biased", "1x4/int16"]
    # several rows of whole channel quads: 2x4 first on the Cortex-M4 and M33, not on the M7
    for cpu in ("cortex-m4", "cortex-m33"):
        assert [s.label for s in gemm_variants(CPUS[cpu], 9, channels=8)][:3] == ["2x4/fused", "2x4/compact", "2x2/fused"]
        assert [s.label for s in gemm_variants(CPUS[cpu], 9, channels=6)][:2] == ["2x2/fused", "2x4/fused"]
    assert [s.label for s in gemm_variants(CPUS["cortex-m7"], 9, channels=8)][:2] == ["2x2/fused", "2x4/fused"]
    # several long rows of the input's own over few channels: the direct kernel, which packs no row (CORE_DIRECT_ROWS)
    for cpu, channels, depth, direct in (("cortex-m4", 8, 128, True), ("cortex-m4", 8, 120, False),
                                         ("cortex-m4", 12, 225, False), ("cortex-m33", 6, 225, True),
                                         ("cortex-m33", 4, 49, True), ("cortex-m33", 4, 31, False),
                                         ("cortex-m7", 32, 256, True), ("cortex-m7", 16, 64, False),
                                         ("cortex-m7", 33, 576, False)):
        first = gemm_variants(CPUS[cpu], 9, channels=channels, input_rows=True, depth=depth)[0].label
        assert (first == "2x2/s16") == direct, (cpu, channels, depth)
        assert gemm_variants(CPUS[cpu], 9, channels=channels, depth=depth)[0].label != "2x2/s16"   # im2col rows
    assert [micro_kernel(s).fused for s in gemm_variants(m4, 9)] == [True, True, True, True, False, False, False, False]
    m0 = CPUS["cortex-m0"]   # one or two channels over the input's rows: the direct kernel, no padded quad
    assert [s.label for s in gemm_variants(m0, 1, channels=1, input_rows=True)] == ["1x4/s16", "1x4/int8"]
    assert [s.label for s in gemm_variants(m0, 9, channels=2, input_rows=True)] == ["1x4/s16", "2x2/int8", "1x4/int8"]
    assert [s.label for s in gemm_variants(m0, 9, channels=3, input_rows=True)] == ["2x2/int8", "1x4/int8", "1x4/s16"]
    assert [s.label for s in gemm_variants(m0, 9, channels=2)] == ["2x2/int8", "1x4/int8"]


@pytest.mark.slow
def test_metadata_names_the_micro_kernel_the_generated_c_calls(tmp_path):
    from checkout import SHARED_MODELS
    from mtk.compiler import compile_model

    model = SHARED_MODELS / "ad_fc_int8.tflite"
    if not model.exists():
        pytest.skip(f"{model} is missing")
    compiled = compile_model(model, tmp_path / "lib", cpu="cortex-m3")
    kernels_c = (compiled.path / "src" / "tvmgen_default_kernels.c").read_text()
    for op in compiled.ops:
        assert op.impl == "tvm+c:mtk_dot_1x8_rows_s8", op
        assert "mtk_dot_1x8_rows_s8(" in kernels_c


@pytest.mark.parametrize("depth", [8, 68])
def test_quad_streams_hold_each_pairs_head_and_requantization_in_a_line_after_the_weights(depth):
    """pack_quad_stream (2x4/fused): up to QUAD_STRAIGHT groups, per quad its weights, then per channel pair its head
    words (b0 + 256·b1, b1) and its channels' m, rounding term, e in 32 bytes; deeper, the head words first and the
    channels' m, rounding term, e after the weights. 5 channels: a second quad, zero-padded (m 0, e 1)."""
    rng = np.random.default_rng(3)
    w = rng.integers(-128, 128, (5, depth)).astype(np.int8)
    bias, mult, shift = np.arange(1, 6) * 1000, np.full(5, 1 << 30) + np.arange(5), -np.arange(1, 6)
    stream = microkernels.pack_quad_stream(w, bias, mult, shift, out_zp=3)
    groups = -(-depth // 4)
    assert len(stream) == microkernels.quad_stream_bytes(5, depth) == 2 * (16 * groups + 64)
    weights = microkernels.pack_weights_biased(w, 4).view(np.int32).reshape(2, -1)
    b = [*bias, 0, 0, 0]
    params = lambda c: [mult[c], (1 << (-shift[c] - 1)) + 3 * (1 << -shift[c]), -shift[c]] if c < 5 else [0, 7, 1]

    def quad(q: int) -> list[int]:
        c = 4 * q
        head = [b[c] + 256 * b[c + 1], b[c + 1], b[c + 2] + 256 * b[c + 3], b[c + 3]]
        if groups <= microkernels.QUAD_STRAIGHT:
            return [*weights[q], *head[:2], *params(c), *params(c + 1), *head[2:], *params(c + 2), *params(c + 3)]
        return [*head, *weights[q], *params(c), *params(c + 1), *params(c + 2), *params(c + 3)]

    assert stream.view(np.int32).tolist() == quad(0) + quad(1)


@pytest.mark.parametrize("cpu", ["cortex-m4", "cortex-m33"])
def test_the_quad_kernels_python_constants_are_those_their_c_builds_with(cpu):
    """gemm.quad_code_pairs's most pairs a call (gemm.QUAD_PAIRS), microkernels.QUAD_STRAIGHT and QUAD_TAIL (the
    stream's layout) are c/dsp/mtk_gemm_2x4_fused.h's MTK_QUAD2_PAIRS, MTK_QUAD2_STRAIGHT and MTK_QUAD2_TAIL under
    the core's own gcc flags: a call of more pairs than its kernel's code takes would leave rows out."""
    from mtk.ops.gemm import QUAD_PAIRS

    gcc = arm_gcc()
    folders = [arg for folder in sorted(C_DIR.iterdir()) for arg in ("-I", str(folder))]
    macros = subprocess.run([gcc, *CPUS[cpu].gcc_flags, "-dM", "-E", *folders, "-x", "c", "-"],
                            input='#include "mtk_gemm_2x4_fused.h"\n', text=True, check=True, capture_output=True).stdout
    defined = dict(re.findall(r"^#define (MTK_QUAD2_(?:PAIRS|STRAIGHT|TAIL)) (\d+)$", macros, re.M))
    assert defined == {"MTK_QUAD2_PAIRS": str(QUAD_PAIRS.get(cpu, 2)),
                       "MTK_QUAD2_STRAIGHT": str(microkernels.QUAD_STRAIGHT),
                       "MTK_QUAD2_TAIL": str(microkernels.QUAD_TAIL)}
