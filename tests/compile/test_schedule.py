"""The order the run function computes the ops in (codegen/schedule.py): a residual block's strided shortcut right
after the block's first convolution, so the block's input dies there; bit-exact, and what it saves under --max-ram."""

from __future__ import annotations

import pytest

from checkout import SHARED_MODELS
from mtk.codegen.schedule import early_last_readers
from mtk.compiler import compile_model
from mtk.ops import prepare_ops
from mtk.reader import read_model
from mtk.target import get_cpu

from test_tiling import assert_host_bit_exact

IC = SHARED_MODELS / "ic_resnet8_int8.tflite"


def ic_or_skip():
    if not IC.is_file():
        pytest.skip(f"{IC} not here")
    return IC


def test_a_strided_shortcut_runs_right_after_the_blocks_first_convolution():
    """ResNet-8: blocks 2 and 3 read their input in a 3x3 stride-2 convolution (ops 4, 8) and in the 1x1 stride-2
    shortcut (ops 6, 10, after the main path's second convolution): the shortcut moves up; block 1's ADD reads its
    input itself and nothing moves there."""
    graph = read_model(ic_or_skip())
    order = [d.op.index for d in early_last_readers(graph, prepare_ops(graph, get_cpu("cortex-m4")))]
    assert order == [0, 1, 2, 3, 4, 6, 5, 7, 8, 10, 9, 11, 12, 13, 14, 15]


@pytest.mark.slow
def test_ic_under_half_tflms_ram_keeps_winograd_and_is_bit_exact(tmp_path):
    """At bench/ram_vs_tflm.py's --max-ram (27,002 B on the M4) IC tiles with its four Winograd layers in F(4x4):
    its first block in calls of 4 rows (whole tiles), the block's ADD writing its output over the block's input
    in place; bit-exact."""
    path = ic_or_skip()
    tiled = compile_model(path, tmp_path / "tiled", cpu="cortex-m4", max_ram=27_002)
    assert tiled.arena_bytes <= 27_002 and any(op.tiled for op in tiled.ops)
    kernels = [op.variant["kernel"] for op in tiled.ops if op.variant is not None]
    assert (kernels.count("wino-f2x2"), kernels.count("wino-f4x4")) == (0, 4)
    block = tiled.memory.tiling.stages[0]
    assert (block.ops, block.band_rows, block.cached) == ((1, 2, 3), 4, True)
    offsets = [b.offset for b in tiled.memory.plan if b.name.startswith(("model/activation/", "model/activation_2/"))]
    assert len(offsets) == 2 and offsets[0] == offsets[1]
    assert_host_bit_exact(path.read_bytes(), tiled.path)
