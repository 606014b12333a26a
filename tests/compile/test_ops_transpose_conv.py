"""TRANSPOSE_CONV (mtk/ops/transpose_conv.py): bit-exact with tflite-micro on random models (strides
larger and smaller than the filter, SAME and VALID, with and without bias, per-channel weights,
fused activations) and on a decoder-sized layer; the C builds for Cortex-M."""

from __future__ import annotations

import numpy as np
import pytest

from mtk.tflite_builder import ModelBuilder
from harness import assert_bit_exact, assert_example_c_builds, compile_error, random_models_test

pytestmark = pytest.mark.slow   # compiles models with TVM

test_transpose_conv_random = random_models_test("TRANSPOSE_CONV", max_examples=8)


def _decoder_layer(in_zp: int = -3, filter_zp: int = 0) -> bytes:
    """16 channels at 8x8 up to 8 channels at 16x16: stride 2, 3x3 filter, SAME, RELU."""
    rng = np.random.default_rng(5)
    b = ModelBuilder(description="decoder")
    x = b.tensor("x", (1, 8, 8, 16), "int8", scale=0.05, zero_point=in_zp)
    w_scales = 2.0 ** rng.uniform(-9, -6, size=8)
    w = b.const("w", rng.integers(-127, 128, size=(8, 3, 3, 16)).astype(np.int8), scale=w_scales,
                zero_point=np.full(8, filter_zp), axis=0)
    bias = b.const("bias", rng.integers(-2000, 2000, size=8).astype(np.int32), scale=0.05 * w_scales,
                   zero_point=np.zeros(8), axis=0)
    y = b.tensor("y", (1, 16, 16, 8), "int8", scale=0.02, zero_point=-10)
    b.op("TRANSPOSE_CONV", [b.const("shape", np.array([1, 16, 16, 8], np.int32)), w, x, bias], [y],
         padding="SAME", stride_h=2, stride_w=2, fused_activation_function="RELU")
    b.inputs([x])
    b.outputs([y])
    return b.build()


def test_decoder_layer():
    assert_bit_exact(_decoder_layer(), samples=3)


def test_asymmetric_filter_is_refused():
    assert "symmetric" in compile_error(_decoder_layer(filter_zp=1))


@pytest.mark.parametrize("cpu", ["cortex-m4", "cortex-m3"])
def test_generated_c_builds_for_cortex_m(cpu, tmp_path):
    assert_example_c_builds(("TRANSPOSE_CONV",), cpu, tmp_path)
