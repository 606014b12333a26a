"""On a board whose flash fetch misses cost half a cycle a byte or more (the NUCLEO-L4R5ZI's ART: 5 wait states a
64-bit read, 1 KB of instruction cache; the Picos' XIP cache: compiler.code_cache_bytes, read from boards.yaml's
memory_timing), a GEMM layer of several rows whose default kernel code overflows the fetch cache takes
the first variant whose code fits it, 2x4/compact where it does (KWS's 64 -> 64 pointwise convs: 2x4/fused's 8.8 KB,
1,756,827 estimated cycles a layer on the L4R5, 2x4/compact's 984 B, 842,439; 2x2/biased's 736 B, 1,135,962); a tuning
file's variant, boards with cheap code misses and boards that run the model's code from a code RAM (the L4R5's
SRAM2 on the code bus: boards.yaml code_ram) keep the default. The L4R5 without its code RAM stands for a flash-only
board here."""

from __future__ import annotations

from dataclasses import replace

import pytest

from harness import conv, conv_model, layer_kernel
from mtk.boards import get_board
from mtk.compiler import compile_model
from mtk.cycles.emulate import emulation_board
from mtk.ops.variants import Variant
from mtk.tuning import Tuning

DEFAULT = "2x4/fused"   # the Cortex-M4's GEMM of several rows in whole quads (kernels/table.CORE_SEVERAL_ROWS_FIRST)
COMPACT = "2x4/compact"   # its products in a loop of little code, the next there
L4R5 = get_board("nucleo_l4r5zi")
FLASH_ONLY = replace(L4R5, name="l4r5_code_in_flash", code_ram=None)


def test_a_pointwise_conv_whose_straight_code_overflows_the_art_cache_takes_one_that_fits_on_the_l4r5(tmp_path):
    model = tmp_path / "pw64.tflite"
    model.write_bytes(conv((1, 12, 12, 64), (1, 1), 64, (12, 12)))
    zero_wait = compile_model(model, tmp_path / "an386", board="mps2/an386")
    assert layer_kernel(zero_wait) == DEFAULT and zero_wait.ops[0].code_bytes > 1024
    in_flash = compile_model(model, tmp_path / "in_flash", board=FLASH_ONLY)
    assert layer_kernel(in_flash) == COMPACT and in_flash.ops[0].code_bytes <= 1024
    emulated = compile_model(model, tmp_path / "emulated", board=emulation_board(FLASH_ONLY))
    assert layer_kernel(emulated) == layer_kernel(in_flash)
    pinned = Tuning({zero_wait.ops[0].layer_key: Variant(DEFAULT)}, "pinned.json")
    assert layer_kernel(compile_model(model, tmp_path / "pinned", board=FLASH_ONLY, tuning=pinned)) == DEFAULT


def test_a_board_that_runs_the_models_code_from_its_code_ram_keeps_the_default(tmp_path):
    model = tmp_path / "pw64.tflite"
    model.write_bytes(conv((1, 12, 12, 64), (1, 1), 64, (12, 12)))
    assert layer_kernel(compile_model(model, tmp_path / "l4r5", board=L4R5)) == DEFAULT
    assert layer_kernel(compile_model(model, tmp_path / "emulated", board=emulation_board(L4R5))) == DEFAULT


def pointwise(depth: int, dead: tuple[int, ...] = ()) -> bytes:
    return conv_model("CONV_2D", (1, 6, 6, depth), (depth, 1, 1, depth), (1, 6, 6, depth), per_channel=True,
                      dead=dead, padding="SAME", stride_h=1, stride_w=1, dilation_h_factor=1, dilation_w_factor=1,
                      fused_activation_function="NONE")


def test_a_deep_layer_takes_a_variant_whose_code_fits_unless_its_fused_kernel_leaves_channels_out(tmp_path):
    """128 deep (2x4/fused's loop, 2,344 B: 1,969,782 estimated cycles on the L4R5, 2x2/biased 1,088,529) moves to
    2x4/compact (1,000 B); with most channels constant (VWW's deep layers: 2x4/fused 236k, 2x2/biased 1,098k) only a
    fused variant may take it: 2x4/compact, whose loop fits though the live channels' tables take its code over
    (compiler.HOT_CODE_FITS)."""
    model = tmp_path / "pw128.tflite"
    model.write_bytes(pointwise(128))
    assert layer_kernel(compile_model(model, tmp_path / "live", board=FLASH_ONLY)) == COMPACT
    model.write_bytes(pointwise(128, dead=tuple(range(0, 128, 2)) + tuple(range(1, 96, 2))))
    assert layer_kernel(compile_model(model, tmp_path / "dead", board=FLASH_ONLY)) == COMPACT
