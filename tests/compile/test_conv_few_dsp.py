"""CONV_2D with 1 to 4 input channels on DSP cores (ops/conv_few_dsp.py, c/dsp/mtk_conv_few_dsp.h): which
layers it takes and how it pairs their pixels, and its C (mtk_few_pass_c, what builds without the assembly) against
tflite-micro on the host; tests/target/test_conv_few_dsp_qemu.py runs the assembly."""

from __future__ import annotations

import tempfile
from dataclasses import replace
from pathlib import Path

import pytest

from harness import assert_bit_exact, conv_model
from mtk.ops import conv_few_dsp, prepare_ops
from mtk.ops.conv import FEW_INPUTS, Conv2D
from mtk.reader import read_model
from mtk.target import get_cpu


def conv(in_shape, channels, kernel, stride=(1, 1), padding="SAME", activation="NONE", dilation=(1, 1), seed=0,
         **extra) -> bytes:
    h, w, c = in_shape
    out = tuple(-(-n // s) if padding == "SAME" else (n - (k - 1) * d - 1) // s + 1
                for n, k, s, d in zip((h, w), kernel, stride, dilation))
    return conv_model("CONV_2D", (1, h, w, c), (channels, *kernel, c), (1, *out, channels), per_channel=True,
                      seed=seed, padding=padding, stride_h=stride[0], stride_w=stride[1],
                      dilation_h_factor=dilation[0], dilation_w_factor=dilation[1],
                      fused_activation_function=activation, **extra)


LAYERS = {
    # VWW's first layer, smaller: 3 channels, 3x3 stride 2, pairs side by side, odd kernel rows (9 values)
    "rgb-3x3-s2": lambda: conv((24, 24, 3), 8, (3, 3), (2, 2)),
    # KWS's: one channel, 10x4 stride 2, 25x5 outputs (pairs one above the other, an odd last row)
    "kws-10x4-s2": lambda: conv((49, 10, 1), 64, (10, 4), (2, 2), activation="RELU"),
    # odd widths and heights side by side, a partial block of 7 channels, ReLU6's clamps, VALID
    "rgb-5x5-s2-valid-7": lambda: conv((17, 19, 3), 7, (5, 5), (2, 2), padding="VALID", activation="RELU6"),
    # one channel, 3x3 stride 2 (a kernel row of 3 values), 2 channels only, the sign term (no activation)
    "gray-3x3-s2-2ch": lambda: conv((15, 13, 1), 2, (3, 3), (2, 2), seed=3),
    # 2 and 4 input channels, stride 1, dilated rows, 5 channels
    "2ch-3x3-s1": lambda: conv((9, 11, 2), 5, (3, 3), seed=1),
    "4ch-3x2-s1-dilated": lambda: conv((12, 9, 4), 12, (3, 2), dilation=(2, 1), seed=2),
    # every other pixel on an odd value (stride 1 over 3 and 1 channels): pixel 1 from the band one value on; an
    # odd width (a pixel without partner a row), magic wand's 4x3 window over 3 columns
    "rgb-3x3-s1-odd": lambda: conv((11, 9, 3), 6, (3, 3), activation="RELU", seed=4),
    "gray-4x3-s1": lambda: conv((16, 3, 1), 8, (4, 3), seed=5),
    # kernel rows of one value: every k pair two rows' values (the last row's alone)
    "gray-3x1-s1": lambda: conv((10, 7, 1), 4, (3, 1), activation="RELU", seed=6),
    # a stride longer than the window: the band's ring keeps no row for the next output row
    "gray-2x2-s3": lambda: conv((11, 14, 1), 4, (2, 2), (3, 3), padding="VALID", activation="RELU", seed=7),
    # dead channels (zero weights, biases of ±2^30) folded into constants by the fused stream's parameters
    "rgb-dead": lambda: conv((10, 10, 3), 8, (3, 3), (2, 2), dead=(1, 6)),
}


def variants(model: bytes, cpu: str) -> list:
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "m.tflite").write_bytes(model)
        data = prepare_ops(read_model(Path(tmp) / "m.tflite"), get_cpu(cpu))[0]
    return Conv2D().variants(data)


@pytest.mark.parametrize("name", sorted(LAYERS))
@pytest.mark.parametrize("cpu", ["cortex-m4", "cortex-m33", "cortex-m7"])
def test_the_layers_take_it_by_default_on_dsp_cores(name, cpu):
    assert variants(LAYERS[name](), cpu)[0] == FEW_INPUTS


def test_other_cores_keep_the_gemm():
    assert FEW_INPUTS not in variants(LAYERS["rgb-3x3-s2"](), "cortex-m3")
    assert FEW_INPUTS not in variants(LAYERS["rgb-3x3-s2"](), "cortex-m55")


def test_wide_inputs_and_dilated_rows_keep_the_gemm():
    assert FEW_INPUTS not in variants(conv((9, 9, 8), 8, (3, 3), (2, 2)), "cortex-m4")          # 8 input channels
    assert FEW_INPUTS not in variants(conv((9, 9, 2), 8, (3, 3), dilation=(1, 2)), "cortex-m4")  # dilated rows


def planned(model: bytes) -> conv_few_dsp.Plan:
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "m.tflite").write_bytes(model)
        return conv_few_dsp.plan(prepare_ops(read_model(Path(tmp) / "m.tflite"), get_cpu("cortex-m4"))[0])


def test_pairs_lie_one_above_the_other_where_fewer_pixels_go_without_a_partner():
    assert planned(LAYERS["kws-10x4-s2"]()).vertical                # 25x5: 5 alone one above the other, 25 side by side
    assert not planned(LAYERS["rgb-3x3-s2"]()).vertical             # 12x12: none either way
    shifted = planned(LAYERS["rgb-3x3-s1-odd"]())                   # odd starts: side by side, the second band
    assert shifted.shifted and not shifted.vertical and shifted.band_rows == 2 * (3 + 1)   # two rings of 3 + 1 rows


def test_the_bands_ring_keeps_the_rows_the_next_block_reads_too():
    rgb = planned(LAYERS["rgb-3x3-s2"]())                            # 3 rows, 2 new an output row
    assert (rgb.span, rgb.step, rgb.band_rows) == (3, 2, 5)
    kws = planned(LAYERS["kws-10x4-s2"]())                           # a vertical pair's 10 + 2 rows, 4 new a pair
    assert (kws.span, kws.step, kws.band_rows) == (12, 4, 16) and kws.partner == 2 * 2 * kws.row_values
    dilated = planned(LAYERS["4ch-3x2-s1-dilated"]())               # rows 0, 2, 4 (and 1, 3, 5) of 6, vertical
    assert (dilated.span, dilated.band_rows) == (6, 8) and dilated.x_offsets(dilated.pairs) == (4 * dilated.row_values,)
    assert planned(LAYERS["gray-2x2-s3"]()).band_rows == 2 * 2        # no row kept: two bands (shifted) of 2 rows


def test_odd_kernel_rows_pair_their_last_values_two_rows_a_k_pair():
    rgb = planned(LAYERS["rgb-3x3-s2"]())                           # 3 rows of 9 values: 4 + 4 + 4 + 2 k pairs
    assert rgb.joined and rgb.k_pairs == 14
    assert rgb.taps[12:] == [((0, 8), (1, 8)), ((2, 8), None)]
    assert rgb.x_offsets(12) == (16, 16 + 2 * rgb.row_values) and rgb.x_offsets(13) == (16 + 4 * rgb.row_values,)
    assert planned(LAYERS["gray-4x3-s1"]()).k_pairs == 4 * 1 + 2     # 4 rows of 3 values
    assert planned(LAYERS["gray-3x1-s1"]()).k_pairs == 2
    kws = planned(LAYERS["kws-10x4-s2"]())                           # rows of 4 values: whole pairs only
    assert not kws.joined and kws.k_pairs == 10 * 2


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_its_c_is_bit_exact_on_the_host(name, tmp_path):
    assert_bit_exact(LAYERS[name](), tmp_path, cpu="cortex-m4")


def test_under_a_ram_limit_it_reads_its_stream_from_flash_then_leaves_the_layer_to_the_gemm():
    """OpDef.leaner: the Cortex-M4's copy of the stream in the scratch (KWS's 6 KB) left out, the stream read from
    flash; then the GEMM."""
    from mtk.ops.base import Scratch

    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "m.tflite").write_bytes(conv((49, 10, 1), 64, (10, 4), (2, 2)))
        data = prepare_ops(read_model(Path(tmp) / "m.tflite"), get_cpu("cortex-m4"))[0]
    lean = Conv2D().leaner(data, FEW_INPUTS)
    assert lean == replace(FEW_INPUTS, lean=True)
    copied, kept = (conv_few_dsp.plan(data, v.lean) for v in (FEW_INPUTS, lean))
    assert copied.stream_in_ram and not kept.stream_in_ram
    scratch = [a.nbytes for a in Conv2D().lower(data, lean).kernels[0].args if isinstance(a, Scratch)]
    assert scratch == [kept.scratch_bytes] == [copied.scratch_bytes - copied.stream_bytes]
    assert Conv2D().leaner(data, lean).kernel == "2x4/fused"
