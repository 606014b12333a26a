"""One of each op family of issue 12 (TRANSPOSE_CONV, RESIZE_*, SPACE_TO_DEPTH/DEPTH_TO_SPACE, PRELU,
MAXIMUM, SQUARED_DIFFERENCE, BATCH_MATMUL, SPLIT, PACK, UNPACK, GATHER, REDUCE_MAX, SUM, ARG_MAX) in one
model, bit-exact with tflite-micro in QEMU on a Cortex-M4 (DSP) and a Cortex-M55 (Helium) board."""

from __future__ import annotations

import numpy as np
import pytest

import modelgen
from mtk.boards import get_board
from mtk.pipeline import RunOptions, run_model
from mtk.reference import run_reference_batch

pytestmark = [pytest.mark.qemu, pytest.mark.slow]


@pytest.mark.parametrize("board", ["mps2/an386", "mps3/corstone300/an547"])
def test_one_of_each_family_bit_exact_on_target(board, tmp_path):
    model = modelgen.example_models(0)["CHAIN_ONE_OF_EACH"]
    path = tmp_path / "model.tflite"
    path.write_bytes(model)
    samples = [modelgen.random_inputs(model, seed) for seed in range(2)]
    result = run_model(path, RunOptions(board=get_board(board), runs=1), samples)
    for expected, got in zip(run_reference_batch(model, samples), result.outputs):
        assert len(got) == len(expected)
        for want, out in zip(expected, got):
            assert np.array_equal(np.asarray(out).reshape(-1), np.asarray(want).reshape(-1))
