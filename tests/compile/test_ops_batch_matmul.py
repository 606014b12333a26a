"""BATCH_MATMUL (mtk/ops/batch_matmul.py): bit-exact with tflite-micro on random models (broadcast
batch dimensions, adj_x/adj_y, constant or computed second operand) and 5-D operands; the C builds
for Cortex-M."""

from __future__ import annotations

import pytest

from mtk.tflite_builder import ModelBuilder
from harness import assert_bit_exact, assert_example_c_builds, compile_error, random_models_test

pytestmark = pytest.mark.slow   # compiles models with TVM

test_batch_matmul_random = random_models_test("BATCH_MATMUL", max_examples=8)


def _matmul(lhs_shape, rhs_shape, out_shape, **options) -> bytes:
    b = ModelBuilder(description="batch_matmul")
    lhs = b.tensor("lhs", lhs_shape, "int8", scale=0.03, zero_point=-7)
    rhs = b.tensor("rhs", rhs_shape, "int8", scale=0.011, zero_point=12)
    y = b.tensor("y", out_shape, "int8", scale=0.05, zero_point=3)
    b.op("BATCH_MATMUL", [lhs, rhs], [y], **options)
    b.inputs([lhs, rhs])
    b.outputs([y])
    return b.build()


def test_5d_broadcast_both_transposed():
    assert_bit_exact(_matmul((2, 1, 3, 4, 5), (3, 1, 6, 4), (2, 3, 3, 5, 6), adj_x=True, adj_y=True))


def test_depth_mismatch_is_refused():
    assert "does not give" in compile_error(_matmul((2, 3), (4, 5), (2, 5)))


@pytest.mark.parametrize("cpu", ["cortex-m4", "cortex-m3"])
def test_generated_c_builds_for_cortex_m(cpu, tmp_path):
    assert_example_c_builds(("BATCH_MATMUL",), cpu, tmp_path)
