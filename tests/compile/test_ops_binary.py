"""MINIMUM, MAXIMUM, PRELU, SQUARED_DIFFERENCE (mtk/ops/binary.py): bit-exact with tflite-micro on
random broadcasting models, on every pair of int8 values, on int16; the C builds for Cortex-M."""

from __future__ import annotations

import numpy as np
import pytest

from mtk.tflite_builder import ModelBuilder
from harness import (all_int8_pairs, assert_bit_exact, assert_example_c_builds, compile_error, random_models_test,
                     single_op_model)

pytestmark = pytest.mark.slow   # compiles models with TVM

test_minimum_random = random_models_test("MINIMUM", max_examples=4)
test_maximum_random = random_models_test("MAXIMUM", max_examples=4)
test_prelu_random = random_models_test("PRELU", max_examples=6)
test_squared_difference_random = random_models_test("SQUARED_DIFFERENCE", max_examples=6)


@pytest.mark.parametrize("op, quant", [
    ("PRELU", ((0.05, 3), (0.01, -20), (0.04, 7))),
    ("PRELU", ((0.5, -128), (0.002, 127), (0.9, -100))),
    ("SQUARED_DIFFERENCE", ((0.02, 3), (0.03, -5), (2.5, -128))),
    ("SQUARED_DIFFERENCE", ((0.004, -128), (0.004, 127), (0.01, -100))),   # saturating
])
def test_every_int8_pair(op, quant):
    (s1, z1), (s2, z2), (so, zo) = quant
    model = single_op_model(op, [((256, 1), s1, z1), ((1, 256), s2, z2)], ((256, 256), so, zo))
    assert_bit_exact(model, inputs=[all_int8_pairs()])


def _int16_model(op: str, alpha_dtype: str = "int16") -> bytes:
    b = ModelBuilder(description=f"{op} int16")
    x = b.tensor("x", (2, 3, 4), "int16", scale=0.001, zero_point=0)
    a = b.tensor("a", (3, 1), alpha_dtype, scale=0.01, zero_point=0 if alpha_dtype == "int16" else 5)
    y = b.tensor("y", (2, 3, 4), "int16", scale=0.0015, zero_point=0)
    b.op(op, [x, a], [y])
    b.inputs([x, a])
    b.outputs([y])
    return b.build()


@pytest.mark.parametrize("op, alpha_dtype", [("MAXIMUM", "int16"), ("MINIMUM", "int16"), ("PRELU", "int8")])
def test_int16(op, alpha_dtype):
    rng = np.random.default_rng(4)
    alpha_range = (-32768, 32768) if alpha_dtype == "int16" else (-128, 128)
    samples = [[rng.integers(-32768, 32768, size=(2, 3, 4)).astype(np.int16),
                rng.integers(*alpha_range, size=(3, 1)).astype(alpha_dtype)] for _ in range(2)]
    assert_bit_exact(_int16_model(op, alpha_dtype), inputs=samples)


def test_rejected_configurations():
    assert "int16, int16 -> int16; mtk supports" in compile_error(_int16_model("PRELU"))
    assert "do not broadcast" in compile_error(single_op_model("MAXIMUM", [((2, 3), 0.1, 0), ((2, 4), 0.1, 0)],
                                                               ((2, 4), 0.1, 0)))


@pytest.mark.parametrize("cpu", ["cortex-m4", "cortex-m3"])
def test_generated_c_builds_for_cortex_m(cpu, tmp_path):
    assert_example_c_builds(("MINIMUM", "PRELU", "SQUARED_DIFFERENCE"), cpu, tmp_path)
