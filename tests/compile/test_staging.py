"""On a board whose flash loads wait (the NUCLEO-L4R5ZI: 5 wait states an 8-byte line behind a 256-byte data cache,
read from boards.yaml's memory_timing), a layer that reads a constant many times copies it into an arena scratch at
its start (codegen/staging.py): a pointwise conv's weights (read once a pair of output pixels), a Winograd conv's
transformed weights (once a pair of tiles), an int8 ADD's input tables; not a constant read once, one the cache
holds, constants already in RAM (--weights-in-ram), nor where the copy would take the arena over its limit. A staged
copy is aligned as its original in flash (a quad stream at 32 bytes). Zero-wait boards (the QEMU boards) stage
nothing. The staged layers stay bit-exact."""

from __future__ import annotations

import pytest

from harness import assert_outputs_match, conv, random_samples, single_op_model
from mtk.boards import get_board
from mtk.codegen.staging import STAGED_PREFIX, StagingRule, staging_rule
from mtk.compiler import compile_model
from mtk.cycles.emulate import emulation_board
from mtk.hostrun import HostModel

L4R5 = "nucleo_l4r5zi"
POINTWISE = conv((1, 12, 12, 64), (1, 1), 64, (12, 12))           # 4.6 KB of weights, 72 passes
WINOGRAD = conv((1, 16, 16, 16), (3, 3), 16, (16, 16), activation="RELU")   # 21 KB of U, 288 B of params: 8 passes
SHAPE = (1, 16, 16, 16)
ADD = single_op_model("ADD", [(SHAPE, 0.05, 3), (SHAPE, 0.04, -2)], (SHAPE, 0.08, 1))   # 2 x 1 KB tables, 16 passes


def staged_buffers(compiled) -> list:
    """The staged constants' scratches in the memory plan."""
    return [b for b in compiled.memory.plan if b.name.split(".")[-1].startswith(STAGED_PREFIX)]


def staged(compiled) -> list[str]:
    return [b.name for b in staged_buffers(compiled)]


@pytest.mark.parametrize("board, rule", [
    (L4R5, StagingRule(5, 8, 256, 0x90000 // 16)),   # SRAM1 + SRAM3 (SRAM2 holds the code)
    ("nucleo_u575zi_q", StagingRule(4, 16, 8192, 0xC0000 // 16)),   # the shared ICACHE in front of loads
    ("nucleo_g0b1re", StagingRule(2, 4, 0, 0x24000 // 16)),          # no data cache: each load waits
    ("mps2/an386", None), ("mps2/an505", None),                     # zero wait
])
def test_the_rule_comes_from_the_board_s_flash_timing(board, rule):
    physical = get_board(board)
    boards = [physical, emulation_board(physical)] if physical.qemu is None else [physical]   # --emulate: as the board
    assert [staging_rule(b) for b in boards] == [rule] * len(boards)


def test_a_constant_is_staged_where_its_later_passes_misses_exceed_the_copy():
    rule = StagingRule(5, 8, 256, 40960)
    assert rule.pays(4096, 3)                # 2 passes x 512 fills x 5 waits > 4,096 cycles of copy
    assert not rule.pays(4096, 1)            # read once
    assert not rule.pays(256, 100)           # the data cache holds it
    assert not rule.pays(65536, 2)           # one pass more: 40,960 waits, less than the copy


@pytest.mark.parametrize("model, count", [(POINTWISE, 1), (WINOGRAD, 2), (ADD, 2)])
def test_a_layer_re_reading_its_constants_stages_them_on_the_l4r5_only(tmp_path, model, count):
    path = tmp_path / "model.tflite"
    path.write_bytes(model)
    l4r5 = compile_model(path, tmp_path / "l4r5", board=L4R5)
    assert len(staged(l4r5)) == count
    assert staged(compile_model(path, tmp_path / "emulated", board=emulation_board(get_board(L4R5)))) == staged(l4r5)
    zero_wait = compile_model(path, tmp_path / "an386", board="mps2/an386")
    assert staged(zero_wait) == [] and "stage_" not in (zero_wait.path / "src/tvmgen_default.c").read_text()
    assert staged(compile_model(path, tmp_path / "in_ram", board=L4R5, weights_in_ram=True)) == []
    # the copy is a scratch of the layer's step, its one step here: an arena limit under it leaves it out
    unstaged = compile_model(path, tmp_path / "limited", board=L4R5, max_ram=l4r5.memory.arena_bytes - 1)
    assert staged(unstaged) == [] and unstaged.memory.arena_bytes < l4r5.memory.arena_bytes
    host = HostModel(l4r5.path)
    inputs = random_samples(model, 2)
    assert_outputs_match(model, inputs, [host.run(sample) for sample in inputs], "staged, on the host: ")


def test_a_layer_of_few_pixels_reads_its_weights_from_flash(tmp_path):
    """2x2 outputs: two passes over 4.6 KB of weights, one more than the first costs less than the copy."""
    path = tmp_path / "model.tflite"
    path.write_bytes(conv((1, 2, 2, 64), (1, 1), 64, (2, 2)))
    assert staged(compile_model(path, tmp_path / "l4r5", board=L4R5)) == []


def test_a_staged_quad_stream_is_aligned_as_in_flash(tmp_path):
    """The 64 -> 64 pointwise conv's GEMM stream (2x4/fused: 32-byte aligned in flash) at a multiple of 32 in an
    arena that starts at one; the QEMU boards' arena stays at 16."""
    path = tmp_path / "model.tflite"
    path.write_bytes(POINTWISE)
    l4r5 = compile_model(path, tmp_path / "l4r5", board=L4R5)
    [stream] = staged_buffers(l4r5)
    assert stream.offset % 32 == 0
    assert f"tvmgen_default_arena[{l4r5.memory.arena_bytes}] TVMGEN_ALIGNED(32);" in \
        (l4r5.path / "src/tvmgen_default.c").read_text()
    an386 = compile_model(path, tmp_path / "an386", board="mps2/an386")
    assert f"tvmgen_default_arena[{an386.memory.arena_bytes}] TVMGEN_ALIGNED(16);" in \
        (an386.path / "src/tvmgen_default.c").read_text()
