"""CONCATENATION, PAD, PADV2, STRIDED_SLICE, TRANSPOSE (mtk/ops/movement.py): bit-exact with tflite-micro.

Random single-op models from modelgen plus hand-built ones for what modelgen does not draw
(PADV2, 5-D and 6-D inputs, out-of-range slice indices, pad output quantized unlike its input), each
compiled by mtk, run on the host and compared with TFLM; the generated C builds for
Cortex-M4F and M3 with warnings as errors; what TFLM rejects is a ModelError.
"""

from __future__ import annotations

import numpy as np
import pytest

from mtk.tflite_builder import ModelBuilder
from harness import assert_bit_exact, assert_example_c_builds, compile_error, random_models_test, single_op

pytestmark = pytest.mark.slow   # compiles models with TVM


# ---- random models from modelgen -------------------------------------------------------------

test_concatenation_random = random_models_test("CONCATENATION")
test_pad_random = random_models_test("PAD")
test_strided_slice_random = random_models_test("STRIDED_SLICE", max_examples=16)
test_transpose_random = random_models_test("TRANSPOSE")


# ---- what modelgen does not draw -------------------------------------------------------------

def test_concatenation_of_a_constant_and_a_repeated_input_in_6d():
    rng = np.random.default_rng(1)
    q = dict(scale=0.1, zero_point=-5)
    b = ModelBuilder(description="concat 6-d")
    x = b.tensor("x", (2, 1, 3, 1, 2, 4), "int8", **q)
    z = b.tensor("z", (2, 1, 3, 1, 1, 4), "int8", **q)
    c = b.const("c", rng.integers(-128, 128, size=(2, 1, 3, 1, 2, 4)).astype(np.int8), **q)
    y = b.tensor("y", (2, 1, 3, 1, 7, 4), "int8", **q)
    b.op("CONCATENATION", [x, c, z, x], [y], axis=-2)
    b.inputs([x, z])
    b.outputs([y])
    assert_bit_exact(b.build())


@pytest.mark.parametrize("value", [-128, 0, 77])
def test_padv2_with_a_constant_value_in_5d(value):
    rng = np.random.default_rng(value + 200)
    shape = (2, 1, 3, 2, 3)
    pads = rng.integers(0, 3, size=(5, 2))
    b = ModelBuilder(description="padv2")
    x = b.tensor("x", shape, "int8", scale=0.02, zero_point=-7)
    p = b.const("paddings", pads.astype(np.int32))
    v = b.const("value", np.array([value], dtype=np.int8), scale=0.05, zero_point=9)
    y = b.tensor("y", [s + a + c for s, (a, c) in zip(shape, pads)], "int8", scale=0.05, zero_point=9)
    b.op("PADV2", [x, p, v], [y])
    b.inputs([x])
    b.outputs([y])
    assert_bit_exact(b.build())


def test_pad_output_quantized_unlike_input_copies_bytes():
    model = single_op("PAD", (1, 3, 3, 2), (1, 5, 4, 2), [np.array([[0, 0], [1, 1], [0, 1], [0, 0]])],
                      x_quant=(0.1, 4), y_quant=(0.3, -20))
    assert_bit_exact(model)


@pytest.mark.parametrize("seed", range(4))
def test_transpose_5d(seed):
    rng = np.random.default_rng(seed)
    shape = tuple(int(s) for s in rng.integers(1, 5, size=5))
    perm = [int(p) for p in rng.permutation(5)]
    assert_bit_exact(single_op("TRANSPOSE", shape, [shape[p] for p in perm], [np.array(perm)]))


SLICES = [   # (input shape, begin, end, strides, begin_mask, end_mask, shrink_mask)
    ((5, 6), [-9, 2], [99, -99], [1, -1], 0, 0, 0),          # out-of-range indices clamp
    ((4, 7, 3), [1, 10, 0], [3, -20, 2], [2, -3, 1], 0, 0, 0),
    ((3, 4, 5, 2), [-1, 0, 4, 0], [0, 4, -6, 2], [1, 2, -2, 1], 0b0010, 0b0100, 0b0001),
    ((6, 5), [7, -2], [0, 0], [-2, 1], 0b01, 0b10, 0b00),
    ((2, 3, 4), [1, -3, -1], [2, 3, 0], [1, 1, 1], 0, 0, 0b101),
]


def _numpy_slice(shape, begin, end, strides, begin_mask, end_mask, shrink_mask):
    index = []
    for d in range(len(shape)):
        if shrink_mask >> d & 1:
            index.append(begin[d])
        else:
            index.append(slice(None if begin_mask >> d & 1 else begin[d], None if end_mask >> d & 1 else end[d],
                               strides[d]))
    return np.empty(shape)[tuple(index)].shape


@pytest.mark.parametrize("case", SLICES)
def test_strided_slice_clamping_masks_and_shrink(case):
    shape, begin, end, strides, bm, em, sm = case
    out = _numpy_slice(*case)
    assert_bit_exact(single_op("STRIDED_SLICE", shape, out, [np.array(begin), np.array(end), np.array(strides)],
                               begin_mask=bm, end_mask=em, shrink_axis_mask=sm))


def _int16(shape, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(-32768, 32768, size=shape).astype(np.int16)


def test_int16_movement():
    """16x8 models move int16 activations: the same kernels, two bytes an element; PAD fills with 0;
    RESHAPE, SQUEEZE and EXPAND_DIMS alias their input."""
    q = (0.001, 0)
    cases = [   # (model, input shape)
        (single_op("PAD", (1, 3, 3, 2), (1, 5, 4, 2), [np.array([[0, 0], [1, 1], [0, 1], [0, 0]])], q,
                   dtype="int16"), (1, 3, 3, 2)),
        (single_op("TRANSPOSE", (2, 3, 4), (4, 2, 3), [np.array([2, 0, 1])], q, dtype="int16"), (2, 3, 4)),
        (single_op("STRIDED_SLICE", (5, 6), (2, 3), [np.array([-1, 0]), np.array([0, 6]), np.array([-2, 2])], q,
                   dtype="int16"), (5, 6)),
        (single_op("RESHAPE", (2, 5), (10,), [np.array([10])], q, dtype="int16"), (2, 5)),
        (single_op("SQUEEZE", (2, 1, 5), (2, 5), [], q, dtype="int16", squeeze_dims=[1]), (2, 1, 5)),
        (single_op("EXPAND_DIMS", (2, 5), (2, 5, 1), [np.array([-1])], q, dtype="int16"), (2, 5)),
    ]
    for model, x_shape in cases:
        assert_bit_exact(model, inputs=[[_int16(x_shape, seed)] for seed in range(2)])
    b = ModelBuilder(description="concat int16")
    x = b.tensor("x", (2, 3), "int16", scale=0.001, zero_point=0)
    z = b.tensor("z", (2, 2), "int16", scale=0.004, zero_point=0)   # TFLM's int16 kernel copies, unscaled
    y = b.tensor("y", (2, 5), "int16", scale=0.002, zero_point=0)
    b.op("CONCATENATION", [x, z], [y], axis=1)
    b.inputs([x, z])
    b.outputs([y])
    assert_bit_exact(b.build(), inputs=[[_int16((2, 3), 5), _int16((2, 2), 6)]])


# ---- what TFLM rejects (or would silently compute differently) -------------------------------

def test_rejected_configurations():
    concat_relu = ModelBuilder(description="concat relu")
    a = concat_relu.tensor("a", (1, 2), "int8", scale=0.1, zero_point=0)
    y = concat_relu.tensor("y", (1, 4), "int8", scale=0.1, zero_point=0)
    concat_relu.op("CONCATENATION", [a, a], [y], axis=1, fused_activation_function="RELU")
    concat_relu.inputs([a])
    concat_relu.outputs([y])
    assert "fused activation" in compile_error(concat_relu.build())

    rescaled = ModelBuilder(description="concat rescale")
    a = rescaled.tensor("a", (1, 2), "int8", scale=0.1, zero_point=0)
    b = rescaled.tensor("b", (1, 2), "int8", scale=0.2, zero_point=0)
    y = rescaled.tensor("y", (1, 4), "int8", scale=0.1, zero_point=0)
    rescaled.op("CONCATENATION", [a, b], [y], axis=1)
    rescaled.inputs([a, b])
    rescaled.outputs([y])
    assert "does not rescale" in compile_error(rescaled.build())

    slice_params = [np.array([1, 0]), np.array([3, 2]), np.array([1, 1])]
    assert "ellipsis_mask" in compile_error(single_op("STRIDED_SLICE", (4, 2), (2, 2), slice_params,
                                                      ellipsis_mask=1))
    assert "offset" in compile_error(single_op("STRIDED_SLICE", (4, 2), (2, 2), slice_params, offset=True))
    assert "selects no element" in compile_error(single_op(
        "STRIDED_SLICE", (4, 2), (2,), [np.array([4, 0]), np.array([5, 2]), np.array([1, 1])], shrink_axis_mask=1))
    assert "does not match" in compile_error(single_op("STRIDED_SLICE", (4, 2), (3, 2), slice_params))
    assert "negative paddings" in compile_error(single_op("PAD", (4, 3), (3, 3), [np.array([[0, -1], [0, 0]])]))
    assert "at most 5" in compile_error(single_op("TRANSPOSE", (1,) * 6, (1,) * 6, [np.arange(6)]))
    assert "not a permutation" in compile_error(single_op("TRANSPOSE", (2, 3), (2, 2), [np.array([0, 0])]))


# ---- the generated C on Cortex-M ---------------------------------------------------------------


@pytest.mark.parametrize("cpu", ["cortex-m4", "cortex-m3"])
def test_generated_c_builds_for_cortex_m(cpu, tmp_path):
    assert_example_c_builds(("CONCATENATION", "PAD", "STRIDED_SLICE", "TRANSPOSE"), cpu, tmp_path)
