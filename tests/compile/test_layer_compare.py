"""bench/layer_compare.py's layers: each one-op model's output shape is the one TFLite computes, and the padding
handed to CMSIS-NN is TFLM's (ComputePaddingHeightWidth). No QEMU: the figures themselves are a benchmark's."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from ai_edge_litert.interpreter import Interpreter

from checkout import REPO

sys.path.insert(0, str(REPO / "bench"))

import layer_compare  # noqa: E402
from layer_compare import Layer  # noqa: E402

LAYERS = [*layer_compare.LAYERS, *layer_compare.random_layers(18, seed=0)]


@pytest.mark.parametrize("layer", LAYERS, ids=[layer.name for layer in LAYERS])
def test_output_shape_is_tflites(layer):
    interpreter = Interpreter(model_content=layer_compare.layer_model(layer))
    interpreter.allocate_tensors()
    (output,) = interpreter.get_output_details()
    expected = (1, layer.out_channels) if layer.op == "FULLY_CONNECTED" else (1, *layer.output)
    assert tuple(output["shape"]) == expected
    assert output["dtype"] == np.dtype(layer.dtype)


@pytest.mark.parametrize("size, kernel, stride, dilation, padding, expected", [
    (96, 3, 2, 1, "SAME", (48, 0)),     # total padding 1: TFLM pads 0 before, 1 after
    (49, 10, 2, 1, "SAME", (25, 4)),    # total 9
    (20, 3, 1, 2, "SAME", (20, 2)),     # dilated: effective window 5
    (3, 3, 2, 1, "VALID", (1, 0)),
    (24, 5, 1, 1, "VALID", (20, 0)),
    (12, 7, 1, 1, "SAME", (12, 3)),
])
def test_window_is_tflms(size, kernel, stride, dilation, padding, expected):
    layer = Layer("t", "CONV_2D", (size, 1, 1), 1, (kernel, 1), (stride, 1), (dilation, 1), padding)
    assert layer.window(0) == expected


def test_the_cmsis_nn_harness_s_ram_decides_what_fits_a_small_board():
    """The micro:bit (16 KB of RAM): the digits CNN's largest FC fits beside the harness's 2 KB scratch and stack,
    the 96x96 first layer (96x96 input) does not."""
    from mtk.boards import get_board
    microbit = get_board("microbit")
    by_name = {layer.name: layer for layer in layer_compare.LAYERS}
    assert layer_compare.harness_ram_bytes(by_name["digits-fc-256to32"], microbit) == \
        2 * 256 + 256 * 32 + 32 * 12 + 32 + 2 * 2048
    assert layer_compare.harness_ram_bytes(by_name["conv-1ch-3x3-s2"], microbit) > microbit.ram_bytes
