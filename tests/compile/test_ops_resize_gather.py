"""RESIZE_NEAREST_NEIGHBOR, RESIZE_BILINEAR (mtk/ops/resize.py) and GATHER (mtk/ops/gather.py):
bit-exact with tflite-micro on random models and on what modelgen does not draw (int16 nearest,
extreme up- and down-scaling, positions computed at run time); the C builds for Cortex-M."""

from __future__ import annotations

import numpy as np
import pytest

from mtk.tflite_builder import ModelBuilder
from harness import assert_bit_exact, assert_example_c_builds, compile_error, random_models_test

pytestmark = pytest.mark.slow   # compiles models with TVM

test_resize_nearest_random = random_models_test("RESIZE_NEAREST_NEIGHBOR", max_examples=6)
test_resize_bilinear_random = random_models_test("RESIZE_BILINEAR", max_examples=8)
test_gather_random = random_models_test("GATHER", max_examples=8)


def _resize(op: str, in_shape, size, dtype="int8", **options) -> bytes:
    b = ModelBuilder(description=op)
    x = b.tensor("x", in_shape, dtype, scale=0.02, zero_point=0 if dtype == "int16" else -3)
    y = b.tensor("y", (in_shape[0], *size, in_shape[3]), dtype, scale=0.02, zero_point=0 if dtype == "int16" else -3)
    b.op(op, [x, b.const("size", np.array(size, np.int32))], [y], **options)
    b.inputs([x])
    b.outputs([y])
    return b.build()


@pytest.mark.parametrize("size, options", [
    ((31, 2), dict(align_corners=True)),
    ((1, 17), dict(half_pixel_centers=True)),
    ((16, 16), dict()),
])
def test_bilinear_extreme_scales(size, options):
    rng = np.random.default_rng(size[0])
    x = rng.integers(-128, 128, size=(1, 5, 7, 3)).astype(np.int8)
    assert_bit_exact(_resize("RESIZE_BILINEAR", (1, 5, 7, 3), size, **options), inputs=[[x], [np.full_like(x, -128)]])


def test_nearest_int16():
    rng = np.random.default_rng(7)
    model = _resize("RESIZE_NEAREST_NEIGHBOR", (2, 3, 4, 2), (7, 5), "int16", half_pixel_centers=True)
    assert_bit_exact(model, inputs=[[rng.integers(-32768, 32768, size=(2, 3, 4, 2)).astype(np.int16)]])


def test_gather_with_positions_from_a_model_input():
    """An embedding lookup: the positions are the model's second input, evaluated at run time."""
    b = ModelBuilder(description="embedding")
    table = b.const("table", np.random.default_rng(1).integers(-128, 128, size=(10, 6)).astype(np.int8),
                    scale=0.1, zero_point=2)
    ids = b.tensor("ids", (2, 3), "int32")
    y = b.tensor("y", (2, 3, 6), "int8", scale=0.1, zero_point=2)
    b.op("GATHER", [table, ids], [y], axis=0)
    b.inputs([ids])
    b.outputs([y])
    samples = [[np.array([[0, 9, 3], [3, 3, 1]], np.int32)], [np.array([[9, 8, 7], [0, 0, 0]], np.int32)]]
    assert_bit_exact(b.build(), inputs=samples)


def test_rejected_configurations():
    assert "both set" in compile_error(_resize("RESIZE_BILINEAR", (1, 2, 2, 1), (4, 4), align_corners=True,
                                               half_pixel_centers=True))
    assert "int16 -> int16" in compile_error(_resize("RESIZE_BILINEAR", (1, 2, 2, 1), (4, 4), "int16"))
    b = ModelBuilder(description="gather out of range")
    x = b.tensor("x", (4, 2), "int8", scale=0.1, zero_point=0)
    y = b.tensor("y", (1, 2), "int8", scale=0.1, zero_point=0)
    b.op("GATHER", [x, b.const("positions", np.array([4], np.int32))], [y])
    b.inputs([x])
    b.outputs([y])
    assert "outside 0..3" in compile_error(b.build())


@pytest.mark.parametrize("cpu", ["cortex-m4", "cortex-m3"])
def test_generated_c_builds_for_cortex_m(cpu, tmp_path):
    assert_example_c_builds(("RESIZE_NEAREST_NEIGHBOR", "RESIZE_BILINEAR", "GATHER"), cpu, tmp_path)
