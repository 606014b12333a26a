"""The bare-metal firmware's main stack: painted at reset, its high-water mark read back after a run
(`mtk-info`), within the reservation sized from the model's deepest call chain (budget.stack_reservation)."""

from __future__ import annotations

import pytest

from checkout import SHARED_MODELS
from harness import random_samples
from mtk.boards import get_board
from mtk.budget import FIRMWARE_STACK_BYTES, stack_reservation
from mtk.compiler import compile_model
from mtk.pipeline import run_model
from mtk.runoptions import RunOptions


@pytest.mark.qemu
@pytest.mark.parametrize("board", ["mps2/an386", "mps3/an547"])
def test_stack_high_water_mark_within_the_sized_reservation(board, tmp_path):
    path = SHARED_MODELS / "kws_dscnn_int8.tflite"
    if not path.is_file():
        pytest.skip(f"{path} not here")
    model_stack = compile_model(path, tmp_path / "lib", board=board).memory.stack_bytes
    result = run_model(path, RunOptions(board=get_board(board), runs=1, cache=False),
                       random_samples(path.read_bytes(), 1))
    assert model_stack is not None and result.sizes.stack_bytes == stack_reservation(model_stack)
    assert model_stack < result.stack_used_bytes <= FIRMWARE_STACK_BYTES + model_stack
    assert result.to_json()["stack_used_bytes"] == result.stack_used_bytes
