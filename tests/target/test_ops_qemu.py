"""One of each newer op family (TRANSPOSE_CONV, RESIZE_*, SPACE_TO_DEPTH/DEPTH_TO_SPACE, PRELU,
MAXIMUM, SQUARED_DIFFERENCE, BATCH_MATMUL, SPLIT, PACK, UNPACK, GATHER, REDUCE_MAX, SUM, ARG_MAX) in one
model, bit-exact with tflite-micro in QEMU on a Cortex-M4 (DSP) and a Cortex-M55 (Helium) board."""

from __future__ import annotations

import pytest

import modelgen
from harness import assert_bit_exact_on_target

pytestmark = pytest.mark.qemu


@pytest.mark.parametrize("board", ["mps2/an386", "mps3/corstone300/an547"])
def test_one_of_each_family_bit_exact_on_target(board, tmp_path):
    assert_bit_exact_on_target(modelgen.example_models(0)["CHAIN_ONE_OF_EACH"], board, tmp_path)
