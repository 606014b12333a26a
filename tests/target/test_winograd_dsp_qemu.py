"""The Winograd F(2x2, 3x3) and F(4x4, 3x3) convolutions (c/dsp/mtk_winograd_s8_dsp.h, mtk_winograd4_s8_dsp.h: their
assembly) in QEMU against tflite-micro on the Cortex-M4, M7 and M33: tests/compile/test_winograd_dsp.py's layers, its
largest weights and inputs, and IC (ResNet-8), whose 3x3 stride-1 layers of 16, 32 and 64 channels take F(4x4),
whole, and F(2x2) in row bands."""

from __future__ import annotations

import pytest

from checkout import SHARED_MODELS
from harness import assert_bit_exact_on_target, assert_outputs_match, random_samples
from mtk.boards import get_board
from mtk.pipeline import run_model
from mtk.runoptions import RunOptions
from test_winograd_dsp import LAYERS, TRANSFORMS, extreme_inputs, extreme_weights_model, winograd_tuning

pytestmark = pytest.mark.qemu

BOARDS = ["mps2/an386", "mps2/an500", "mps2/an505"]


@pytest.mark.parametrize("board", BOARDS)
@pytest.mark.parametrize("t", TRANSFORMS)
@pytest.mark.parametrize("name", ["16to16-8x8", "5to7-odd-7x9", "13to4-valid", "32to33-valid-odd", "16to3-valid-1x1",
                                  "dead-channels"])
def test_layers_are_bit_exact_on_every_dsp_core(name, t, board, tmp_path):
    assert_winograd_bit_exact(LAYERS[name](), t, board, tmp_path)


@pytest.mark.parametrize("board", BOARDS)
@pytest.mark.parametrize("t", TRANSFORMS)
def test_the_largest_weights_and_inputs_are_bit_exact_on_every_dsp_core(t, board, tmp_path):
    assert_winograd_bit_exact(extreme_weights_model(), t, board, tmp_path, extreme_inputs())


def assert_winograd_bit_exact(model: bytes, t: str, board: str, tmp_path, inputs=None) -> None:
    """`model`'s layer as the Winograd kernel of transform `t` (TRANSFORMS) computes it on `board`, against
    tflite-micro."""
    target = get_board(board)
    path = tmp_path / "model.tflite"
    path.write_bytes(model)
    inputs = inputs or random_samples(model)
    tuning = winograd_tuning(model, target.cpu.name, TRANSFORMS[t])
    result = run_model(path, RunOptions(board=target, runs=1, tuning=tuning), inputs)
    assert_outputs_match(model, inputs, result.outputs, f"{board}: ")


@pytest.mark.parametrize("board", BOARDS)
def test_ic_is_bit_exact_on_every_dsp_core(board, tmp_path):
    model = SHARED_MODELS / "ic_resnet8_int8.tflite"
    if not model.exists():
        pytest.skip(f"{model} is missing")
    assert_bit_exact_on_target(model.read_bytes(), board, tmp_path, random_samples(model.read_bytes(), 3))



@pytest.mark.parametrize("max_ram", [27_002, 26_400], ids=["f4x4", "f2x2"])
def test_ic_in_row_bands_is_bit_exact(max_ram, tmp_path):
    """At --max-ram 27,002 B IC's first block is tiled with its F(4x4) layers (calls of 4 rows: whole tiles), at
    26,400 B with F(2x2) ones at the steps above it (tests/compile/test_winograd_dsp.py): each band a call of its
    own geometry (padding clipped at the image's edges)."""
    model = SHARED_MODELS / "ic_resnet8_int8.tflite"
    if not model.exists():
        pytest.skip(f"{model} is missing")
    assert assert_bit_exact_on_target(model.read_bytes(), "mps2/an386", tmp_path, max_ram=max_ram) <= max_ram
