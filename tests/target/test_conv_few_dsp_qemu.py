"""CONV_2D with 1 to 4 input channels as ops/conv_few_dsp.py computes it (c/dsp/mtk_conv_few_dsp.h and the layer's
generated assembly) in QEMU against tflite-micro on the Cortex-M4 and M33: pairs side by side and one above the other,
pixels without a partner, a partial last block of channels, odd kernel rows, clamped ranges, the sign term, dilated
rows, dead channels."""

from __future__ import annotations

import pytest

from harness import assert_bit_exact_on_target
from test_conv_few_dsp import LAYERS

pytestmark = pytest.mark.qemu


@pytest.mark.parametrize("board", ["mps2/an386", "mps2/an505"])
@pytest.mark.parametrize("name", sorted(LAYERS))
def test_few_input_channel_convolutions_are_bit_exact(name, board, tmp_path):
    assert_bit_exact_on_target(LAYERS[name](), board, tmp_path)
