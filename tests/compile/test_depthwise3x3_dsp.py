"""depthwise3x3_dsp.py: which layers its generated assembly takes, and its fallback for bands it does not
(test_kernels_qemu.py runs the assembly against tflite-micro; test_ops_shapes.py its C version on the host)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from harness import assert_bit_exact_on_c_paths, depthwise
from mtk.codegen.tiling import band_data
from mtk.ops import depthwise3x3_dsp, op_def, prepare_ops
from mtk.ops.conv import DEPTHWISE_KERNELS, DepthwiseParams
from mtk.reader import read_model
from mtk.target import get_cpu


def layer(tmp_path, model: bytes, cpu: str = "cortex-m4"):
    (tmp_path / "m.tflite").write_bytes(model)
    return prepare_ops(read_model(tmp_path / "m.tflite"), get_cpu(cpu))[0]


@pytest.mark.parametrize("model, takes", [
    (depthwise((1, 12, 12, 16), (3, 3), 1, (12, 12)), True),
    (depthwise((1, 12, 11, 16), (3, 3), 1, (6, 6), stride=(2, 2)), True),
    (depthwise((1, 2, 12, 16), (3, 3), 1, (2, 12)), False),                 # fewer than 3 rows
    (depthwise((1, 12, 12, 8), (3, 3), 2, (12, 12)), True),                 # a depth multiplier
    (depthwise((1, 12, 12, 8), (5, 5), 1, (12, 12)), False),                # another window
    (depthwise((1, 12, 12, 8), (3, 3), 1, (12, 12), dilation=(2, 2)), False),
    (depthwise((1, 12, 13, 8), (3, 3), 1, (4, 5), stride=(3, 3)), False),   # a horizontal stride of 3
    (depthwise((1, 40, 40, 64), (3, 3), 1, (40, 40)), True),                # rows beyond LDRSB's: transposed
])
def test_the_3x3_assembly_is_the_dsp_default_where_it_fits(model, takes, tmp_path):
    data = layer(tmp_path, model)
    assert (DEPTHWISE_KERNELS.variants(data)[0].kernel == "dsp-3x3") == takes
    assert "dsp-3x3" not in [v.kernel for v in DEPTHWISE_KERNELS.variants(layer(tmp_path, model, "cortex-m3"))]


@pytest.mark.parametrize("model, cpu, sliding", [
    (depthwise((1, 96, 96, 1), (3, 3), 8, (48, 48), stride=(2, 2)), "cortex-m4", True),   # person_detect's first
    (depthwise((1, 9, 8, 1), (3, 3), 16, (9, 8)), "cortex-m33", True),
    (depthwise((1, 9, 8, 1), (3, 3), 20, (9, 8)), "cortex-m4", False),    # many channels: the GEMM packs once for all
    (depthwise((1, 9, 8, 1), (5, 5), 8, (9, 8)), "cortex-m4", False),     # not a window dsp-3x3 takes
    (depthwise((1, 9, 8, 1), (3, 3), 8, (9, 8)), "cortex-m3", False),     # no DSP
])
def test_one_input_channel_runs_the_sliding_window_for_few_channels(model, cpu, sliding, tmp_path):
    data = layer(tmp_path, model, cpu)
    assert isinstance(data.params, DepthwiseParams) == sliding
    assert (op_def(data.op.type).variants(data)[0].kernel == "dsp-3x3") == sliding


def test_a_band_of_two_rows_lowers_as_the_four_channel_kernel(tmp_path):
    data = layer(tmp_path, depthwise((1, 12, 12, 16), (3, 3), 1, (12, 12)))
    whole = depthwise3x3_dsp.lower(data)
    band = depthwise3x3_dsp.lower(band_data(data, (2, 1, 0)))
    assert whole.c_source is not None and whole.c_function.name.startswith("mtk_dw3x3_")
    assert band.c_source is None and band.c_calls == ("mtk_depthwise_dsp_s8",)


@pytest.mark.parametrize("model, swapped", [
    (depthwise((1, 25, 5, 16), (3, 3), 1, (25, 5)), True),                   # taller than wide: columns as rows
    (depthwise((1, 5, 25, 16), (3, 3), 1, (5, 25)), False),
    (depthwise((1, 12, 12, 16), (3, 3), 1, (12, 12)), False),
    (depthwise((1, 25, 2, 16), (3, 3), 1, (25, 2)), False),                   # 2 columns: not 3 rows
    (depthwise((1, 24, 24, 96), (3, 3), 1, (24, 24)), True),                  # rows 2,304 bytes apart
    (depthwise((1, 24, 24, 96), (3, 3), 1, (12, 12), stride=(2, 2)), True),
    (depthwise((1, 24, 30, 96), (3, 3), 1, (24, 30)), True),                  # wider than tall, but far rows
])
def test_a_layer_taller_than_wide_runs_transposed(model, swapped, tmp_path):
    data = layer(tmp_path, model)
    p = data.params
    planned, _ = depthwise3x3_dsp.plan(p.geometry, data.inputs[0].quant.zp, p.requant.out_zp, p.requant.act_min,
                                       p.requant.act_max)
    assert planned.swapped == swapped


@pytest.mark.parametrize("activation, sign_term", [("RELU", False), ("RELU6", False), ("NONE", True)])
def test_the_sign_term_only_where_a_negative_sum_can_output_above_act_min(activation, sign_term, tmp_path):
    """RELU and RELU6 clamp at the output zero point, which every negative sum reaches with or without TFLM's
    "- 1 when negative"; without an activation (output zero point above -128) the term counts."""
    data = layer(tmp_path, depthwise((1, 12, 12, 16), (3, 3), 1, (12, 12), activation=activation))
    assert data.params.requant.out_zp > -128 or activation != "NONE"
    src = depthwise3x3_dsp.lower(data).c_source
    assert ("lsr #31" in src) == sign_term


@pytest.mark.parametrize("model", [depthwise((1, 25, 5, 12), (3, 3), 1, (25, 5)),
                                   depthwise((1, 14, 7, 5), (3, 3), 1, (7, 4), stride=(2, 2), activation="NONE"),
                                   depthwise((1, 9, 7, 3), (3, 3), 3, (5, 4), stride=(2, 2), activation="NONE"),
                                   depthwise((1, 5, 9, 4), (3, 3), 2, (3, 7), padding="VALID"),
                                   depthwise((1, 11, 9, 1), (3, 3), 6, (6, 5), stride=(2, 2), activation="RELU6")])
def test_the_c_version_is_bit_exact_transposed_and_with_a_multiplier(model, tmp_path):
    assert_bit_exact_on_c_paths(model, tmp_path, cpu="cortex-m4")


@pytest.mark.parametrize("value, encodable", [(4960, True), (7936, True), (0xFF000000, True), (0x101, False),
                                              (0x12345, False)])
def test_steps_beyond_addw_as_thumb2_rotated_immediates(value, encodable):
    assert depthwise3x3_dsp.modified_immediate(value) == encodable


WIDE_SHIFTS = np.geomspace(1e-5, 0.02, 16)   # per-channel weight scales whose shifts lie 11 apart: no uniform one


@pytest.mark.parametrize("activation, w_scales, uniform", [("RELU", None, True), ("RELU6", None, True),
                                                           ("NONE", None, False),   # the sign's term
                                                           ("RELU", WIDE_SHIFTS, False)])
def test_channels_share_one_shift_where_their_scaled_weights_fit(activation, w_scales, uniform, tmp_path):
    data = layer(tmp_path, depthwise((1, 12, 12, 16), (3, 3), 1, (12, 12), activation=activation, w_scales=w_scales))
    src = depthwise3x3_dsp.lower(data).c_source
    assert ("smmla " in src and re.search(r"ssat r\d+, #8, r\d+, asr #", src) is not None) == uniform
    assert ("smmlar " in src) != uniform


def test_a_uniform_shift_scales_each_channel_to_the_one_nearest_the_preferred():
    w = np.full((1, 3, 3, 3), 127, np.int8)
    params = np.array([[200, 1 << 30, 16 + 5 * 32, 5], [-200, 1 << 30, 64 + 5 * 128, 7], [0, 1 << 30, 4, 3]], np.int32)
    assert depthwise3x3_dsp.uniform_shift(w, params) == 10     # 8 .. 10 fit: channel 2's weights by 2^7 at most
    stream = depthwise3x3_dsp.pack(w, params, 10).reshape(3, 8)
    assert list(stream[:, 7]) == [200 * 32, -200 * 8, 0]                           # 2 * bias scaled by 2^(E - e)
    assert list(stream[:, 1]) == [16 + (16 + 5 * 32) * 32, 4 + (64 + 5 * 128) * 8, 64 + 4 * 128]
    assert stream[0, 2] & 0xffff == 127 * 2 * 32
    wide = params.copy()
    wide[1:, 3] = 8, 1                     # E >= 9: channel 2's doubled weights scaled by 2^8 leave int16
    assert depthwise3x3_dsp.uniform_shift(w, wide) is None


@pytest.mark.parametrize("model", [depthwise((1, 9, 11, 6), (3, 3), 1, (9, 11), activation="RELU6"),
                                   depthwise((1, 9, 7, 3), (3, 3), 2, (5, 4), stride=(2, 2)),
                                   depthwise((1, 9, 11, 16), (3, 3), 1, (9, 11), w_scales=WIDE_SHIFTS)])
def test_the_c_version_is_bit_exact_with_and_without_a_uniform_shift(model, tmp_path):
    assert_bit_exact_on_c_paths(model, tmp_path, cpu="cortex-m4")


@pytest.mark.parametrize("model, calls", [(depthwise((1, 6, 6, 128), (3, 3), 1, (6, 6)), False),
                                          (depthwise((1, 12, 12, 64), (3, 3), 1, (6, 6), stride=(2, 2)), False),
                                          (depthwise((1, 25, 5, 64), (3, 3), 1, (25, 5)), False),   # rows looped
                                          (depthwise((1, 12, 12, 64), (3, 3), 1, (12, 12)), True),
                                          (depthwise((1, 48, 48, 8), (3, 3), 1, (48, 48)), True)])
def test_a_small_planes_rows_are_written_out_without_calls(model, calls, tmp_path):
    assert ("bl 9f" in depthwise3x3_dsp.lower(layer(tmp_path, model)).c_source) == calls
