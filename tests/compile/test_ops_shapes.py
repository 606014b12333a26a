"""Layer shapes beyond the shared models: depthwise with any depth multiplier (1→N, a
convolution with one input channel per group, included) and any channel count, convolutions over
1-3 input channels with kernels up to 10×8: bit-exact with tflite-micro on the host, on every C path
(DSP formulation, Cortex-M3 long multiply, ARMv6-M), and in QEMU (tests/target/test_kernels_qemu.py)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

import modelgen
from harness import LAYERS, assert_bit_exact_on_c_paths, conv
from mtk.ops import op_def, prepare_ops
from mtk.ops.conv import FEW_INPUTS, first_layer_variants
from mtk.ops.gemm import micro_kernel
from mtk.reader import read_model
from mtk.target import get_cpu

CPUS = ["cortex-m4", "cortex-m3", "cortex-m0plus"]
SHAPES = settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                        HealthCheck.too_slow])


@pytest.mark.slow
@pytest.mark.parametrize("cpu", CPUS)
@pytest.mark.parametrize("name", LAYERS)
def test_layer_shapes_are_bit_exact(name, cpu, tmp_path):
    assert_bit_exact_on_c_paths(LAYERS[name](), tmp_path, cpu=cpu)


@pytest.mark.slow
@pytest.mark.parametrize("family", ["DEPTHWISE_CONV_2D_ANY", "CONV_2D_FIRST_LAYER"])
@pytest.mark.parametrize("cpu", CPUS)
def test_random_layer_shapes_are_bit_exact(family, cpu, tmp_path_factory):
    """modelgen's multiplier 1..8, 1..67 channels, strides 1..3, kernels up to 10×8, SAME and VALID."""
    @SHAPES
    @given(model=modelgen.strategies[family])
    def check(model):
        assert_bit_exact_on_c_paths(model, tmp_path_factory.mktemp(family.lower()), cpu=cpu)
    check()


@pytest.mark.parametrize("channels, default", [
    (8, "1x4/int16"),            # a depth of 3 groups: int16 weights, not the biased default
    (5, "2x2/int16"),            # 1x4 would pad 5 channels to 8, 2x2 to 6
    (600, "2x2/biased")])        # int16 weights would add more than 4 KB
def test_gathered_patch_gemms_take_int16_weights_over_a_biased_default_when_small(channels, default, tmp_path):
    model = tmp_path / "layer.tflite"
    model.write_bytes(conv((1, 12, 12, 1), (3, 3), channels, (6, 6), stride=(2, 2), activation="RELU"))
    data = prepare_ops(read_model(model), get_cpu("cortex-m4"))[0]
    variants = op_def(data.op.type).variants(data)
    assert variants[0] == FEW_INPUTS   # the band kernel (ops/conv_few_dsp.py), then the GEMM's
    variants = variants[1:]
    assert micro_kernel(variants[0]).weights == "fused"   # the fused kernel, where it may run, stays first
    unfused = [v for v in variants if micro_kernel(v).weights != "fused"]
    assert first_layer_variants(data, unfused)[0].label == default
