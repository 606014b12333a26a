"""SPLIT, SPLIT_V, PACK, UNPACK, SPACE_TO_DEPTH, DEPTH_TO_SPACE (mtk/ops/rearrange.py): bit-exact with
tflite-micro on random models (every output of a split compared), the C builds for Cortex-M with
warnings as errors, and what TFLM rejects is a ModelError."""

from __future__ import annotations

import numpy as np
import pytest

from mtk.tflite_builder import ModelBuilder
from harness import assert_bit_exact, assert_example_c_builds, compile_error, random_models_test

pytestmark = pytest.mark.slow   # compiles models with TVM

test_split_random = random_models_test("SPLIT", max_examples=8)
test_pack_random = random_models_test("PACK", max_examples=6)
test_unpack_random = random_models_test("UNPACK", max_examples=6)
test_space_to_depth_random = random_models_test("SPACE_TO_DEPTH", max_examples=5)
test_depth_to_space_random = random_models_test("DEPTH_TO_SPACE", max_examples=5)


def test_split_of_int16_with_unlike_output_quantization():
    """TFLM copies bytes whatever the quantization says, for int16 as for int8."""
    b = ModelBuilder(description="split int16")
    x = b.tensor("x", (2, 6, 3), "int16", scale=0.001, zero_point=0)
    parts = [b.tensor(f"y{k}", (2, 2, 3), "int16", scale=0.002 * (k + 1), zero_point=0) for k in range(3)]
    b.op("SPLIT", [b.const("axis", np.array([-2], np.int32)), x], parts, num_splits=3)
    b.inputs([x])
    b.outputs(parts)
    rng = np.random.default_rng(0)
    assert_bit_exact(b.build(), inputs=[[rng.integers(-32768, 32768, size=(2, 6, 3)).astype(np.int16)]])


def test_rejected_configurations():
    b = ModelBuilder(description="split computed axis")
    x = b.tensor("x", (4, 2), "int8", scale=0.1, zero_point=0)
    axis = b.tensor("axis", (1,), "int32")
    parts = [b.tensor(f"y{k}", (2, 2), "int8", scale=0.1, zero_point=0) for k in range(2)]
    b.op("SPLIT", [axis, x], parts, num_splits=2)
    b.inputs([axis, x])
    b.outputs(parts)
    assert "axis must be a constant" in compile_error(b.build())

    b = ModelBuilder(description="space_to_depth int16")
    x = b.tensor("x", (1, 2, 2, 1), "int16", scale=0.1, zero_point=0)
    y = b.tensor("y", (1, 1, 1, 4), "int16", scale=0.1, zero_point=0)
    b.op("SPACE_TO_DEPTH", [x], [y], block_size=2)
    b.inputs([x])
    b.outputs([y])
    assert "int16 tensors; mtk supports int8 here" in compile_error(b.build())


@pytest.mark.parametrize("cpu", ["cortex-m4", "cortex-m3"])
def test_generated_c_builds_for_cortex_m(cpu, tmp_path):
    assert_example_c_builds(("SPLIT", "PACK", "UNPACK", "SPACE_TO_DEPTH", "DEPTH_TO_SPACE"), cpu, tmp_path)
