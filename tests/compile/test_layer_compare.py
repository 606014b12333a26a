"""bench/layer_compare.py's layers: each one-op model's output shape is the one TFLite computes, and the padding
handed to CMSIS-NN is TFLM's (ComputePaddingHeightWidth). No QEMU: the figures themselves are a benchmark's."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest
from ai_edge_litert.interpreter import Interpreter

from checkout import REPO

sys.path.insert(0, str(REPO / "bench"))

import layer_compare  # noqa: E402
from layer_compare import Layer  # noqa: E402

LAYERS = [*layer_compare.LAYERS, *layer_compare.random_layers(18, seed=0),
          *layer_compare.pointwise_layers(8, seed=0)]


@pytest.mark.parametrize("layer", LAYERS, ids=[layer.name for layer in LAYERS])
def test_output_shape_is_tflites(layer):
    interpreter = Interpreter(model_content=layer_compare.layer_model(layer))
    interpreter.allocate_tensors()
    (output,) = interpreter.get_output_details()
    expected = (1, layer.out_channels) if layer.flat else (1, *layer.output)
    assert tuple(output["shape"]) == expected
    assert output["dtype"] == np.dtype(layer.dtype)


def test_pointwise_draws_are_1x1_convolutions_of_mobilenets_maps_few_and_many_channels_seeded():
    drawn = layer_compare.pointwise_layers(64, seed=27)
    assert all(layer.op == "CONV_2D" and layer.kernel == (1, 1) and layer.input[0] == layer.input[1]
               in layer_compare.POINTWISE_SIZES and layer.stride[0] == layer.stride[1] in (1, 2) for layer in drawn)
    assert all(layer.macs <= layer_compare.POINTWISE_MACS for layer in drawn)
    assert {layer.stride for layer in drawn} == {(1, 1), (2, 2)}
    assert {layer.dtype for layer in drawn} == {"int8", "int16"}
    channels = [c for layer in drawn for c in (layer.input[2], layer.out_channels)]
    assert min(channels) < 8 and max(channels) > 128
    assert layer_compare.pointwise_layers(64, seed=27) == drawn


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


def _row(layer: str, board: str, mine: int, theirs: int | None) -> dict:
    return {"layer": layer, "board": board, "op": "CONV_2D", "dtype": "int8", "macs": 1, "mtk_instructions": mine,
            "cmsis_nn_instructions": theirs, "mtk_estimated_cycles": mine, "cmsis_nn_estimated_cycles": theirs,
            "exact": True}


def test_the_summary_counts_a_board_s_layers_at_most_1x_and_names_every_loser():
    rows = [_row("even", "b", 100, 100), _row("win", "b", 50, 100), _row("lose", "b", 120, 100),
            _row("lose-more", "b", 150, 100), _row("other-board", "c", 300, 100), _row("no-cmsis", "b", 10, None)]
    assert layer_compare.summary(rows, "b", worst=1) == \
        "b: 4 layers, 2 at most 1.0x CMSIS-NN in cycles; worst: lose-more 1.50, lose 1.20"
    assert layer_compare.summary(rows, "b", worst=3).endswith("worst: lose-more 1.50, lose 1.20, even 1.00")
    assert layer_compare.summary([], "b", worst=3) == "b: 0 layers, 0 at most 1.0x CMSIS-NN in cycles"


def test_saved_rows_print_again_with_each_board_s_summary(tmp_path, capsys):
    first, second = tmp_path / "m4.json", tmp_path / "m7.json"
    first.write_text(json.dumps([_row("a", "m4", 90, 100), {"layer": "big", "board": "m4", "left_out": "RAM"}]))
    second.write_text(json.dumps([_row("a", "m7", 110, 100)]))
    assert layer_compare.print_saved([first, second], worst=5) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-3:] == ["big on m4: left out, it does not fit (RAM)",
                        "m4: 1 layers, 1 at most 1.0x CMSIS-NN in cycles; worst: a 0.90",
                        "m7: 1 layers, 0 at most 1.0x CMSIS-NN in cycles; worst: a 1.10"]


@pytest.mark.parametrize("text", ["{\"a\": 1}", "not json", "[{\"layer\": \"a\", \"board\": \"b\"}]"])
def test_saved_rows_of_another_kind_exit_2_with_one_line(tmp_path, capsys, text):
    saved = tmp_path / "rows.json"
    saved.write_text(text)
    assert layer_compare.print_saved([saved], worst=5) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"{saved}: not the rows layer_compare.py --json writes") and err.count("\n") == 1


def test_the_softmax_harness_takes_tflms_parameters_of_the_layer_model_s_input(tmp_path):
    """CMSIS-NN's softmax work depends on diff_min: the harness gets what TFLM's Prepare computes from the model."""
    from mtk.ops.softmax import softmax_params
    from mtk.reader import read_model
    by_name = {layer.name: layer for layer in layer_compare.LAYERS}
    model = tmp_path / "softmax.tflite"
    model.write_bytes(layer_compare.layer_model(by_name["softmax-kws-12"]))
    graph = read_model(model)
    (op,) = graph.ops
    multiplier, shift, diff_min = softmax_params(float(graph.tensor(op.inputs[0]).quant.scale[0]), op.options["beta"])
    assert layer_compare.softmax_defines(by_name["softmax-kws-12"]) == \
        {"SOFTMAX_MULT": multiplier, "SOFTMAX_SHIFT": shift, "SOFTMAX_DIFF_MIN": diff_min}
    assert -255 < diff_min < 0   # some values of a random row fall below it: CMSIS-NN skips their exp
    assert layer_compare.softmax_defines(by_name["mul-odd-10x10x13"]) == {}


def test_a_cmsis_nn_harness_that_does_not_finish_leaves_its_row_without_cmsis_figures(tmp_path, monkeypatch, capsys):
    """A harness QEMU gives up on (CMSIS-NN's code jumping off) is a '-' in the table, not the end of the sweep."""
    from mtk.boards import get_board
    from mtk.errors import TargetError

    def never_exits(*_args):
        raise TargetError("QEMU did not exit within 120 s\nthe target printed nothing")
    monkeypatch.setattr(layer_compare, "run_measured", never_exits)
    monkeypatch.setattr(layer_compare.CmsisNN, "_harness", lambda self, layer, board: tmp_path / "harness.elf")
    (tmp_path / "Include").mkdir()
    (tmp_path / "Include" / "arm_nnfunctions.h").write_text("")
    cmsis = layer_compare.CmsisNN(tmp_path, tmp_path)
    assert cmsis.figures(layer_compare.LAYERS[0], get_board("mps2/an386")) == (None, None)
    assert capsys.readouterr().err == "  CMSIS-NN left out: QEMU did not exit within 120 s\n"


def test_the_cmsis_nn_library_of_other_source_folders_is_another(tmp_path, monkeypatch):
    """A --work kept from a run that compiled fewer CMSIS-NN folders (no SoftmaxFunctions) is not reused."""
    from mtk.boards import get_board
    (tmp_path / "Include").mkdir()
    (tmp_path / "Include" / "arm_nnfunctions.h").write_text("")
    cmsis = layer_compare.CmsisNN(tmp_path, tmp_path)
    m4 = get_board("mps2/an386")
    stale = tmp_path / "cmsis-nn" / m4.cpu.name / "libcmsis-nn.a"
    stale.parent.mkdir(parents=True)
    stale.write_text("")
    monkeypatch.setattr(layer_compare.CmsisNN, "_run", staticmethod(lambda command: None))
    assert cmsis.library(m4) != stale
    assert cmsis.library(m4).parent.name.startswith(m4.cpu.name + "-")
