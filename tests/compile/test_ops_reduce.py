"""SUM, MEAN on int16, REDUCE_MAX, REDUCE_MIN, ARG_MAX, ARG_MIN (mtk/ops/pooling.py Mean, mtk/ops/reduce.py):
bit-exact with tflite-micro on random models, ties and int16; the C builds for Cortex-M."""

from __future__ import annotations

import numpy as np
import pytest

from mtk.tflite_builder import ModelBuilder
from harness import assert_bit_exact, assert_example_c_builds, compile_error, random_models_test

pytestmark = pytest.mark.slow   # compiles models with TVM

test_sum_random = random_models_test("SUM", max_examples=6)
test_reduce_max_random = random_models_test("REDUCE_MAX", max_examples=5)
test_arg_max_random = random_models_test("ARG_MAX", max_examples=5)
test_arg_min_random = random_models_test("ARG_MIN", max_examples=5)


def _reduce(op: str, shape, axes, out_shape, dtype="int8", quant=((0.05, 3), (0.05, 3)), out_dtype=None,
            **options) -> bytes:
    b = ModelBuilder(description=op)
    (s_in, z_in), (s_out, z_out) = quant
    x = b.tensor("x", shape, dtype, scale=s_in, zero_point=z_in)
    out_dtype = out_dtype or dtype
    y = b.tensor("y", out_shape, out_dtype, **({} if out_dtype == "int32" else dict(scale=s_out, zero_point=z_out)))
    b.op(op, [x, b.const("axis", np.array(axes, np.int32))], [y], **options)
    b.inputs([x])
    b.outputs([y])
    return b.build()


@pytest.mark.parametrize("op", ["MEAN", "SUM"])
def test_int16(op):
    rng = np.random.default_rng(2)
    quant = ((0.001, 0), (0.004 if op == "SUM" else 0.0008, 0))
    model = _reduce(op, (2, 5, 3, 4), [1, -1], (2, 3), "int16", quant, keep_dims=False)
    samples = [[rng.integers(-32768, 32768, size=(2, 5, 3, 4)).astype(np.int16)] for _ in range(2)]
    assert_bit_exact(model, inputs=samples + [[np.full((2, 5, 3, 4), 32767, np.int16)]])


def test_reduce_min_and_ties():
    """REDUCE_MIN over two axes; ARG_MAX/ARG_MIN on rows with repeated extremes take the first."""
    assert_bit_exact(_reduce("REDUCE_MIN", (3, 4, 5), [0, 2], (1, 4, 1), keep_dims=True))
    rows = np.array([[5, 5, -3, 5], [-128, 127, 127, -128], [0, 0, 0, 0]], np.int8)
    for op in ("ARG_MAX", "ARG_MIN"):
        assert_bit_exact(_reduce(op, (3, 4), [1], (3,), out_dtype="int32", output_type="INT32"), inputs=[[rows]])


def test_rejected_configurations():
    assert "quantized alike" in compile_error(_reduce("REDUCE_MAX", (3, 4), [1], (3,), quant=((0.05, 3), (0.1, 3))))
    assert "exactly one" in compile_error(_reduce("ARG_MAX", (3, 4), [0, 1], (3,), out_dtype="int32"))


@pytest.mark.parametrize("cpu", ["cortex-m4", "cortex-m3"])
def test_generated_c_builds_for_cortex_m(cpu, tmp_path):
    assert_example_c_builds(("SUM", "REDUCE_MAX", "ARG_MAX"), cpu, tmp_path)
