"""TRANSPOSE_CONV (mtk/ops/transpose_conv.py): bit-exact with tflite-micro on random models (strides
larger and smaller than the filter, SAME and VALID, with and without bias, per-channel weights,
fused activations) and on a decoder-sized layer; the C builds for Cortex-M."""

from __future__ import annotations

import numpy as np
import pytest

from mtk.tflite_builder import ModelBuilder
from harness import assert_bit_exact, assert_bit_exact_on_c_paths, assert_example_c_builds, compile_error, random_models_test
from mtk.ops import op_def, prepare_ops
from mtk.ops.base import Scratch
from mtk.reader import read_model
from mtk.target import get_cpu

pytestmark = pytest.mark.slow   # compiles models with TVM

test_transpose_conv_random = random_models_test("TRANSPOSE_CONV", max_examples=8)


def _decoder_layer(in_zp: int = -3, filter_zp: int = 0, out_c: int = 8, stride: int = 2) -> bytes:
    """16 channels at 8x8 up to `out_c` channels at 16x16: stride 2, 3x3 filter, SAME, RELU (another `stride`: an
    input of 16 // stride pixels a side)."""
    rng = np.random.default_rng(5)
    b = ModelBuilder(description="decoder")
    side = 16 // stride
    x = b.tensor("x", (1, side, side, 16), "int8", scale=0.05, zero_point=in_zp)
    w_scales = 2.0 ** rng.uniform(-9, -6, size=out_c)
    w = b.const("w", rng.integers(-127, 128, size=(out_c, 3, 3, 16)).astype(np.int8), scale=w_scales,
                zero_point=np.full(out_c, filter_zp), axis=0)
    bias = b.const("bias", rng.integers(-2000, 2000, size=out_c).astype(np.int32), scale=0.05 * w_scales,
                   zero_point=np.zeros(out_c), axis=0)
    out = (1, side * stride, side * stride, out_c)
    y = b.tensor("y", out, "int8", scale=0.02, zero_point=-10)
    b.op("TRANSPOSE_CONV", [b.const("shape", np.array(out, np.int32)), w, x, bias], [y],
         padding="SAME", stride_h=stride, stride_w=stride, fused_activation_function="RELU")
    b.inputs([x])
    b.outputs([y])
    return b.build()


def test_decoder_layer():
    assert_bit_exact(_decoder_layer(), samples=3)


@pytest.mark.parametrize("out_c, scatters", [(3, True), (8, True), (9, False), (16, False)])
def test_few_output_channels_scatter(out_c, scatters, tmp_path):
    """Up to 8 output channels the rows are scattered (an int32 row of sums), more take the per-phase GEMM."""
    model = _decoder_layer(out_c=out_c)
    (tmp_path / "m.tflite").write_bytes(model)
    kernel, = op_def("TRANSPOSE_CONV").lower(prepare_ops(read_model(tmp_path / "m.tflite"), get_cpu("cortex-m4"))[0]
                                             ).kernels
    assert any(isinstance(a, Scratch) and a.name == "sums" for a in kernel.args) == scatters
    assert_bit_exact_on_c_paths(model, tmp_path)


@pytest.mark.parametrize("out_c, stride, phases", [(3, 2, 4), (16, 1, 1), (5, 3, 9)])
def test_helium_computes_each_phase_on_the_fused_gemm(out_c, stride, phases, tmp_path):
    """On the Cortex-M55 a kernel per stride phase (every phase has pixels), its rows in pairs into output rows apart;
    a stride-1 layer's pairs too (a single phase)."""
    model = _decoder_layer(out_c=out_c, stride=stride)
    (tmp_path / "m.tflite").write_bytes(model)
    kernels = op_def("TRANSPOSE_CONV").lower(prepare_ops(read_model(tmp_path / "m.tflite"), get_cpu("cortex-m55"))[0]
                                             ).kernels
    assert len(kernels) == phases
    assert all(k.c_calls == ("mtk_gemm_mve_2x4_apart_s8",) for k in kernels)


@pytest.mark.parametrize("out_c", [9, 16])
def test_stride_one_is_a_convolution_on_the_int8_gemm(out_c, tmp_path):
    """Elsewhere than on Helium a stride-1 layer of more than 8 output channels is the CONV_2D it equals (taps
    rotated 180°) on the int8 GEMM, not the 16x8 one."""
    model = _decoder_layer(out_c=out_c, stride=1)
    (tmp_path / "m.tflite").write_bytes(model)
    kernel, = op_def("TRANSPOSE_CONV").lower(prepare_ops(read_model(tmp_path / "m.tflite"), get_cpu("cortex-m4"))[0]
                                             ).kernels
    assert kernel.c_calls and all(call.endswith("_s8") for call in kernel.c_calls)
    assert_bit_exact_on_c_paths(model, tmp_path)


def test_asymmetric_filter_is_refused():
    assert "symmetric" in compile_error(_decoder_layer(filter_zp=1))


@pytest.mark.parametrize("cpu", ["cortex-m4", "cortex-m3", "cortex-m55"])
def test_generated_c_builds_for_cortex_m(cpu, tmp_path):
    assert_example_c_builds(("TRANSPOSE_CONV",), cpu, tmp_path)
