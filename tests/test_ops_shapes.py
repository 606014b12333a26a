"""Layer shapes beyond the shared models (issue 11): depthwise with any depth multiplier (1→N, a
convolution with one input channel per group, included) and any channel count, convolutions over
1-3 input channels with kernels up to 10×8: bit-exact with tflite-micro on the host, on every C path
(DSP formulation, Cortex-M3 long multiply, ARMv6-M), and in QEMU (tests/test_kernels_qemu.py)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

import modelgen
from test_ops_conv import assert_bit_exact_on_c_paths, conv_model

CPUS = ["cortex-m4", "cortex-m3", "cortex-m0plus"]
SHAPES = settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                        HealthCheck.too_slow])


def depthwise(in_shape, kernel, multiplier, out_hw, stride=(1, 1), padding="SAME", dilation=(1, 1),
              activation="RELU", seed=0) -> bytes:
    channels = in_shape[3] * multiplier
    return conv_model("DEPTHWISE_CONV_2D", in_shape, (1, *kernel, channels), (1, *out_hw, channels),
                      per_channel=True, seed=seed, padding=padding, stride_h=stride[0], stride_w=stride[1],
                      depth_multiplier=multiplier, dilation_h_factor=dilation[0], dilation_w_factor=dilation[1],
                      fused_activation_function=activation)


def conv(in_shape, kernel, out_c, out_hw, stride=(1, 1), padding="SAME", dilation=(1, 1), activation="NONE") -> bytes:
    return conv_model("CONV_2D", in_shape, (out_c, *kernel, in_shape[3]), (1, *out_hw, out_c), per_channel=True,
                      padding=padding, stride_h=stride[0], stride_w=stride[1], dilation_h_factor=dilation[0],
                      dilation_w_factor=dilation[1], fused_activation_function=activation)


LAYERS = {
    # a keyword model's first layer (TFLM's micro_speech): 1 input channel, multiplier 8, 10×8, stride 2
    "dw-1to8-10x8-s2": lambda: depthwise((1, 49, 40, 1), (10, 8), 8, (25, 20), stride=(2, 2)),
    "dw-1to3-valid": lambda: depthwise((1, 7, 9, 1), (3, 2), 3, (5, 8), padding="VALID", activation="NONE"),
    "dw-3to6-dilated": lambda: depthwise((1, 9, 8, 3), (3, 3), 2, (9, 8), dilation=(2, 1), activation="RELU6"),
    "dw-5to20-s3": lambda: depthwise((1, 10, 10, 5), (4, 5), 4, (4, 4), stride=(3, 3)),
    "dw-7to21-valid": lambda: depthwise((1, 6, 7, 7), (2, 3), 3, (5, 5), padding="VALID"),
    "dw-67-s2": lambda: depthwise((1, 5, 6, 67), (3, 3), 1, (3, 3), stride=(2, 2)),
    "dw-6-partial": lambda: depthwise((1, 4, 4, 6), (3, 3), 1, (4, 4), activation="NONE"),
    "conv-1ch-3x3-s2": lambda: conv((1, 24, 20, 1), (3, 3), 8, (12, 10), stride=(2, 2), activation="RELU"),
    "conv-1ch-10x4-s2": lambda: conv((1, 49, 10, 1), (10, 4), 7, (25, 5), stride=(2, 2)),
    "conv-2ch-10x8-valid": lambda: conv((1, 13, 11, 2), (10, 8), 5, (4, 4), padding="VALID"),
    "conv-3ch-dilated": lambda: conv((1, 11, 9, 3), (3, 3), 5, (7, 3), stride=(1, 2), padding="VALID",
                                     dilation=(2, 2)),
}


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
