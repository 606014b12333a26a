"""On a board whose flash loads wait (the NUCLEO-L4R5ZI: 5 wait states an 8-byte line behind a 256-byte data cache,
read from boards.yaml's memory_timing), a layer that reads a constant many times copies it into an arena scratch at
its start (codegen/staging.py): a pointwise conv's weights (read once a pair of output pixels), a Winograd conv's
transformed weights (once a pair of tiles), an int8 ADD's input tables; not a constant read once, one the cache
holds, constants already in RAM (--weights-in-ram). Where staging would take the arena over its limit, only the layers
whose staging does are left unstaged. A staged copy is aligned as its original in flash (a quad stream at 32 bytes).
Zero-wait boards (the QEMU boards) stage nothing. The staged layers stay bit-exact."""

from __future__ import annotations

import numpy as np
import pytest

import modelgen
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


def two_pointwise() -> bytes:
    """12x12: a 64 -> 64 pointwise conv (4 KB of weights, 18 KB of tensors live at its step), then a 64 -> 16 one
    (1 KB, 11.5 KB live)."""
    d = modelgen.Draw(np.random.default_rng(0))
    net = modelgen.Net("two pointwise")
    x = net.model_input((1, 12, 12, 64), modelgen.activation_quant(d))
    x = modelgen.weighted_sum(net, d, x, "CONV_2D", (64, 1, 1, 64), 0, 64, (1, 12, 12, 64), padding="SAME",
                              activation="NONE")
    return net.build(modelgen.weighted_sum(net, d, x, "CONV_2D", (16, 1, 1, 64), 0, 64, (1, 12, 12, 16),
                                           padding="SAME", activation="NONE"))


def tiled_then_pointwise() -> bytes:
    """24x24x16 -> 1x1 -> 24x24x32 -> 3x3 stride 2 -> 12x12x64 -> 1x1 (4 KB of weights) -> 12x12x64: the first two
    layers' steps 28.8 KB live, the last's 22.5 KB with its weights staged."""
    d = modelgen.Draw(np.random.default_rng(0))
    net = modelgen.Net("tiled then pointwise")
    x = net.model_input((1, 24, 24, 16), modelgen.activation_quant(d))
    for weights, out_shape, stride in (((32, 1, 1, 16), (1, 24, 24, 32), 1), ((64, 3, 3, 32), (1, 12, 12, 64), 2),
                                       ((64, 1, 1, 64), (1, 12, 12, 64), 1)):
        x = modelgen.weighted_sum(net, d, x, "CONV_2D", weights, 0, int(np.prod(weights[1:])), out_shape,
                                  padding="SAME", activation="RELU", stride_h=stride, stride_w=stride)
    return net.build(x)


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


def test_only_the_layers_whose_staging_takes_the_arena_over_its_limit_read_from_flash(tmp_path):
    """An arena limit under the staged arena but over both layers' steps unstaged: the 64 -> 64 layer's step,
    the peak, reads its weights from flash, the 64 -> 16 layer keeps its copy (before: neither)."""
    model = two_pointwise()
    path = tmp_path / "model.tflite"
    path.write_bytes(model)
    both = compile_model(path, tmp_path / "both", board=L4R5)
    assert [name.split(".")[0] for name in staged(both)] == ["scratch:op0", "scratch:op1"]
    limit = both.memory.arena_bytes - 1
    second = compile_model(path, tmp_path / "limited", board=L4R5, max_ram=limit)
    assert [name.split(".")[0] for name in staged(second)] == ["scratch:op1"]
    assert second.memory.arena_bytes <= limit and second.memory.tiling is None
    host = HostModel(second.path)
    inputs = random_samples(model, 2)
    assert_outputs_match(model, inputs, [host.run(sample) for sample in inputs], "one layer staged: ")


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


def test_the_layers_tiling_leaves_whole_stage_in_the_room_it_leaves(tmp_path):
    """At 26,000 B the first two layers are tiled (28.8 KB live untiled, their staging 20 KB more); the last one,
    untiled, stages its weights within the limit (before: every layer unstaged once the staged arena was over)."""
    model = tiled_then_pointwise()
    path = tmp_path / "model.tflite"
    path.write_bytes(model)
    compiled = compile_model(path, tmp_path / "tiled", board=L4R5, max_ram=26_000)
    assert compiled.memory.tiling is not None and [op.tiled for op in compiled.ops] == [True, True, False]
    assert [name.split(".")[0] for name in staged(compiled)] == ["scratch:op2"]
    assert compiled.memory.arena_bytes <= 26_000
    host = HostModel(compiled.path)
    inputs = random_samples(model, 2)
    assert_outputs_match(model, inputs, [host.run(sample) for sample in inputs], "tiled, then staged: ")
