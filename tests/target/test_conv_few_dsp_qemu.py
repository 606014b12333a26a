"""CONV_2D with 1 to 4 input channels as ops/conv_few_dsp.py computes it (c/dsp/mtk_conv_few_dsp.h and the layer's
generated assembly, on the M7 ordered for its dual issue) in QEMU against tflite-micro on the Cortex-M4, M7 and M33: pairs side by side and one above the other,
pixels without a partner, a partial last block of channels, odd kernel rows, clamped ranges, the sign term, dilated
rows, dead channels."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

import modelgen
from harness import assert_bit_exact_on_target
from test_conv_few_dsp import LAYERS

pytestmark = pytest.mark.qemu


@pytest.mark.parametrize("board", ["mps2/an386", "mps2/an500", "mps2/an505"])
@pytest.mark.parametrize("name", sorted(LAYERS))
def test_few_input_channel_convolutions_are_bit_exact(name, board, tmp_path):
    assert_bit_exact_on_target(LAYERS[name](), board, tmp_path)


@pytest.mark.parametrize("board", ["mps2/an386", "mps2/an500", "mps2/an505"])
def test_random_first_layers_are_bit_exact(board, tmp_path_factory):
    """modelgen's first layers (1-3 channels, images from 1x1, kernels up to 10x8, strides, dilations, padding)."""
    @settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                    HealthCheck.too_slow])
    @given(model=modelgen.strategies["CONV_2D_FIRST_LAYER"])
    def check(model):
        assert_bit_exact_on_target(model, board, tmp_path_factory.mktemp("first"))
    check()


def test_its_stream_read_from_flash_is_bit_exact_on_the_m4(tmp_path):
    """Under a --max-ram its stream's copy in RAM does not fit, the M4 reads it from flash (OpDef.leaner)."""
    model = LAYERS["kws-10x4-s2"]()
    assert assert_bit_exact_on_target(model, "mps2/an386", tmp_path, max_ram=9_200) <= 9_200
