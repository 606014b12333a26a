"""A kernel family's own files on some cores (kernels/table.py CORE_FILES): the one-row fused GEMM's loop of the
Cortex-M7 and M33 (mtk_fused_row_dual.h), the two-row one's pair loop of the M7 (mtk_fused_pair_m7.h), the M33's
quads in pairs (mtk_fused_octets_m33.h), included
before the family's file whose loops they replace, on those cores only. Their
outputs: tests/target/test_kernels_qemu.py's one-row GEMMs on mps2/an500 and an505, test_gemm_dsp_qemu.py's fused
kernels and packed layers."""

from __future__ import annotations

import numpy as np
import pytest

from mtk.boards import get_board
from mtk.compiler import compile_model, one_stream_flash
from mtk.kernels.files import c_files
from mtk.kernels.table import core_files
from mtk.target import get_cpu

import modelgen
from armbuild import local_functions

DUAL = "dsp/mtk_fused_row_dual.h"
PAIR_M7 = "dsp/mtk_fused_pair_m7.h"
OCTETS_M33 = "dsp/mtk_fused_octets_m33.h"


@pytest.mark.parametrize("cpu, own", [("cortex-m7", {"dot_biased_s8": (DUAL, PAIR_M7)}),
                                      ("cortex-m33", {"dot_biased_s8": (DUAL, OCTETS_M33)}), ("cortex-m4", {}),
                                      ("cortex-m55", {})])
def test_which_cores_take_their_own_file(cpu, own):
    assert core_files(get_cpu(cpu)) == own


def test_a_flash_that_rewards_one_stream_leaves_the_two_stream_files_out():
    assert core_files(get_cpu("cortex-m33"), one_stream=True) == {"dot_biased_s8": (DUAL,)}
    assert core_files(get_cpu("cortex-m7"), one_stream=True) == {"dot_biased_s8": (DUAL, PAIR_M7)}


@pytest.mark.parametrize("board, one_stream", [("rpi_pico2", True), ("nucleo_u575zi_q", False), ("mps2/an505", False)])
def test_which_boards_flash_rewards_one_stream(board, one_stream):
    """The RP2350's QMI continues a sequential read for 48 cycles against a miss's 108; the U575's ICACHE and the QEMU
    boards' memory have no such difference."""
    assert one_stream_flash(get_board(board)) == one_stream


def test_a_cores_own_file_comes_just_before_its_familys_file():
    files = c_files("dsp", ["dot_s8", "dot_biased_s8"], {"dot_biased_s8": (DUAL, PAIR_M7)})
    assert files == [*c_files("dsp", ["dot_s8"]), DUAL, PAIR_M7, "dsp/mtk_dot_biased_s8.h"]
    assert c_files("dsp", ["dot_s8"], {"dot_biased_s8": (DUAL,)}) == c_files("dsp", ["dot_s8"])


def test_a_cores_own_file_comes_before_its_familys_file_where_another_family_holds_it_first():
    files = c_files("dsp", ["conv_few_dsp", "dot_biased_s8"], {"dot_biased_s8": (DUAL, PAIR_M7)})
    assert files.index(DUAL) < files.index(PAIR_M7) < files.index("dsp/mtk_dot_biased_s8.h")
    assert files.count(PAIR_M7) == 1


@pytest.mark.parametrize("cpu, included", [("cortex-m7", (True, True, False)), ("cortex-m33", (True, False, True)),
                                           ("cortex-m4", (False, False, False))])
def test_a_one_row_fully_connected_layer_includes_the_cores_loops(cpu, included, tmp_path):
    d = modelgen.Draw(np.random.default_rng(0))
    net = modelgen.Net("mtk test FULLY_CONNECTED")
    x = net.model_input((1, 40), modelgen.activation_quant(d))
    model = net.build(modelgen.weighted_sum(net, d, x, "FULLY_CONNECTED", (8, 40), 0, 40, (1, 8), per_channel=False,
                                            bias_optional=False, activation="NONE"))
    (tmp_path / "m.tflite").write_bytes(model)
    compile_model(tmp_path / "m.tflite", tmp_path / "lib", cpu=cpu)
    source = (tmp_path / "lib" / "src" / "tvmgen_default_kernels.c").read_text()
    for name, own in zip(("mtk_fused_row_dual.h", "mtk_fused_pair_m7.h", "mtk_fused_octets_m33.h"), included):
        assert (tmp_path / "lib" / "src" / name).exists() == own
        assert (f'#include "{name}"' in source) == own


@pytest.mark.parametrize("depth, units, paired", [(256, 8, True), (128, 128, True), (8, 128, True), (64, 8, False),
                                                  (256, 12, False)])
def test_the_m33_takes_a_rows_quads_in_pairs_where_they_pay(depth, units, paired, tmp_path):
    """mtk_fused_octets_m33.h's kernels for an even number of quads where the 2 cycles a group each pair saves outweigh
    the more code their pass fetches (mtk_fused_quads_paired: a 64-deep row of 2 quads keeps the quads' kernel, whose
    pass runs 8 of its pairs where the pairs' runs 16 groups); 3 quads keep it whatever the depth."""
    d = modelgen.Draw(np.random.default_rng(1))
    net = modelgen.Net("mtk test FULLY_CONNECTED")
    x = net.model_input((1, depth), modelgen.activation_quant(d))
    model = net.build(modelgen.weighted_sum(net, d, x, "FULLY_CONNECTED", (units, depth), 0, depth, (1, units),
                                            per_channel=False, bias_optional=False, activation="RELU"))
    (tmp_path / "m.tflite").write_bytes(model)
    compile_model(tmp_path / "m.tflite", tmp_path / "lib", cpu="cortex-m33")
    kernels = {f for f in local_functions(tmp_path / "lib", "cortex-m33", tmp_path / "obj") if f.startswith("mtk_gemm")}
    assert any(f.startswith("mtk_gemm_1x4_octets") for f in kernels) == paired
    assert any(f.startswith("mtk_gemm_1x4_fused") for f in kernels) != paired


def test_the_rp2350_keeps_a_rows_quads_one_stream(tmp_path):
    """Its XIP flash continues one sequential stream for less than a miss (one_stream_flash): the pairs' two weight
    streams miss at every line (AD 3,487,939 estimated cycles against the quads' 2,034,463)."""
    d = modelgen.Draw(np.random.default_rng(1))
    net = modelgen.Net("mtk test FULLY_CONNECTED")
    x = net.model_input((1, 256), modelgen.activation_quant(d))
    model = net.build(modelgen.weighted_sum(net, d, x, "FULLY_CONNECTED", (8, 256), 0, 256, (1, 8),
                                            per_channel=False, bias_optional=False, activation="RELU"))
    (tmp_path / "m.tflite").write_bytes(model)
    compile_model(tmp_path / "m.tflite", tmp_path / "lib", board="rpi_pico2")
    assert not (tmp_path / "lib" / "src" / "mtk_fused_octets_m33.h").exists()
    kernels = {f for f in local_functions(tmp_path / "lib", "cortex-m33", tmp_path / "obj") if f.startswith("mtk_gemm")}
    assert any(f.startswith("mtk_gemm_1x4_fused") for f in kernels)
