"""CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED (mtk/ops/conv.py, fully_connected.py, gemm.py) and
multi-op chains compiled by mtk: bit-exact with tflite-micro on the host over random models
(tests/modelgen.py) and hand-picked geometries; the generated C builds for Cortex-M4."""

from __future__ import annotations

import re

import pytest

import modelgen
from mtk.autotune import candidate_tunings
from mtk.compiled import CompiledModel
from mtk.kernels.table import GEMM_BY_ID, gemm_choices
from mtk.ops import prepare_ops
from mtk.ops.gemm import CHUNK, micro_kernel
from mtk.reader import read_model
from mtk.target import get_cpu
from mtk.tuning import tunable_layers
from harness import (GEMM_MODELS, LAYERS, assert_bit_exact, assert_bit_exact_on_c_paths, assert_builds_for_cortex_m4,
                     check_random_models, conv_model, few_channel_fc, few_channel_pointwise, long_fc_model)

pytestmark = pytest.mark.slow   # compiles models with TVM


@pytest.mark.parametrize("op", ["CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED"])
def test_random_models_are_bit_exact(op, tmp_path_factory):
    check_random_models(op, tmp_path_factory)


@pytest.mark.parametrize("family", [f for f in modelgen.FAMILIES if f.startswith("CHAIN_")])
@pytest.mark.parametrize("seed", [0, 1])
def test_fixed_chains_are_bit_exact(family, seed, tmp_path):
    model = modelgen.example_models(seed)[family]
    samples = [modelgen.random_inputs(model, s) for s in range(3)]
    assert_builds_for_cortex_m4(assert_bit_exact(model, tmp_path, samples), tmp_path)


@pytest.mark.parametrize("case", [
    # (in NHWC, filter OHWI, out NHWC, options)
    ((1, 9, 9, 3), (5, 3, 3, 3), (1, 5, 5, 5), dict(padding="SAME", stride_h=2, stride_w=2, dilation_h_factor=1,
                                                   dilation_w_factor=1, fused_activation_function="RELU")),
    ((1, 10, 8, 2), (3, 3, 2, 2), (1, 6, 5, 3), dict(padding="VALID", stride_h=1, stride_w=1, dilation_h_factor=2,
                                                    dilation_w_factor=3, fused_activation_function="NONE")),
    ((1, 7, 7, 4), (7, 1, 1, 4), (1, 7, 7, 7), dict(padding="VALID", stride_h=1, stride_w=1, dilation_h_factor=1,
                                                   dilation_w_factor=1, fused_activation_function="RELU6")),
    ((1, 1, 1, 9), (3, 1, 1, 9), (1, 1, 1, 3), dict(padding="SAME", stride_h=1, stride_w=1, dilation_h_factor=1,
                                                   dilation_w_factor=1, fused_activation_function="NONE")),
], ids=["strided-same", "dilated-valid", "pointwise-odd", "one-pixel"])
@pytest.mark.parametrize("per_channel", [True, False], ids=["per-channel", "per-tensor"])
def test_conv_geometries(case, per_channel, tmp_path):
    in_shape, w_shape, out_shape, options = case
    model = conv_model("CONV_2D", in_shape, w_shape, out_shape, per_channel=per_channel, **options)
    assert_bit_exact(model, tmp_path)


def test_depthwise_with_multiplier_and_dilation(tmp_path):
    model = conv_model("DEPTHWISE_CONV_2D", (1, 8, 8, 3), (1, 3, 3, 6), (1, 4, 4, 6), per_channel=True,
                       padding="SAME", stride_h=2, stride_w=2, depth_multiplier=2, dilation_h_factor=2,
                       dilation_w_factor=1, fused_activation_function="RELU6")
    assert_bit_exact(model, tmp_path)


@pytest.mark.parametrize("case", [
    # (in NHWC, filter 1HWC, out NHWC, options)
    ((1, 9, 7, 8), (1, 3, 3, 8), (1, 9, 7, 8), dict(padding="SAME", stride_h=1, stride_w=1)),
    ((1, 9, 7, 4), (1, 3, 3, 4), (1, 5, 4, 4), dict(padding="SAME", stride_h=2, stride_w=2)),
    ((1, 10, 9, 12), (1, 3, 3, 12), (1, 6, 5, 12), dict(padding="VALID", stride_h=1, stride_w=1,
                                                       dilation_h_factor=2, dilation_w_factor=2)),
    ((1, 6, 11, 4), (1, 5, 2, 4), (1, 6, 11, 4), dict(padding="SAME", stride_h=1, stride_w=1)),
    ((1, 2, 2, 4), (1, 3, 3, 4), (1, 2, 2, 4), dict(padding="SAME", stride_h=1, stride_w=1)),
], ids=["3x3-same", "strided", "dilated-valid", "5x2-same", "all-border"])
@pytest.mark.parametrize("per_channel", [True, False], ids=["per-channel", "per-tensor"])
def test_depthwise_kernel_geometries(case, per_channel, tmp_path):
    """The 4-channel depthwise kernel (depthwise.py): interior and border pixels, on both C paths."""
    in_shape, w_shape, out_shape, options = case
    options = {"depth_multiplier": 1, "dilation_h_factor": 1, "dilation_w_factor": 1,
               "fused_activation_function": "RELU", **options}
    model = conv_model("DEPTHWISE_CONV_2D", in_shape, w_shape, out_shape, per_channel=per_channel, **options)
    assert_bit_exact_on_c_paths(model, tmp_path)


@pytest.mark.parametrize("family", ["CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "CHAIN_CNN"])
def test_dsp_formulation_is_bit_exact(family, tmp_path):
    for seed in range(3):
        work = tmp_path / str(seed)
        work.mkdir()
        assert_bit_exact_on_c_paths(modelgen.example_models(seed)[family], work)


@pytest.mark.parametrize("channels, depth, kernels", [(10, 37, ("mtk_dot_1x8_rows_s8", "mtk_dot_1x2_rows_s8")),
                                                      (16, 600, ("mtk_dot_1x8_rows_s8",)),
                                                      (3, 8, ("mtk_dot_1x3_rows_s8",))])
@pytest.mark.parametrize("per_channel", [True, False], ids=["per-channel", "per-tensor"])
def test_fully_connected_for_cortex_m3_is_bit_exact(channels, depth, kernels, per_channel, tmp_path):
    """Compiled for the Cortex-M3, a single-row fully connected layer takes 1x8 s8 blocks (8-channel weight tiles read
    with the int8 row as it is), its last tile as many channels as are left (2 of 10, 3 of 3): its own kernel."""
    model = conv_model("FULLY_CONNECTED", (1, depth), (channels, depth), (1, channels), per_channel=per_channel,
                       fused_activation_function="NONE")
    assert_bit_exact_on_c_paths(model, tmp_path, cpu="cortex-m3")
    code = (tmp_path / "lib" / "src" / "tvmgen_default_kernels.c").read_text()
    assert set(re.findall(r"mtk_dot_\w+(?=\()", code)) == set(kernels)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["dw-5to20-s3", "dw-9to18-5x7-dilated"])
def test_cortex_m3_depthwise_of_an_even_multiplier_sums_pairs_of_lanes(name, tmp_path):
    """Multipliers 4 and 2 (border taps, a partial last group, dilation) compiled for the Cortex-M3: mtk_dw_pairs_s8
    (one SMLAL a pair of lanes sharing an input byte, paired weights), bit-exact on the host."""
    assert_bit_exact_on_c_paths(LAYERS[name](), tmp_path, cpu="cortex-m3")
    code = (tmp_path / "lib" / "src" / "tvmgen_default_kernels.c").read_text()
    assert set(re.findall(r"mtk_dw\w*(?=\()", code)) == {"mtk_dw_pairs_s8"}


@pytest.mark.slow
@pytest.mark.parametrize("cpu", ["cortex-m4", "cortex-m3"])
def test_long_fully_connected_packs_its_row_in_chunks(cpu, tmp_path):
    """4000 -> 4: packing the whole row (8,000 B) would set the arena; the Cortex-M4's GEMM packs 256 values
    at a time and adds up the partial sums (arena ≤ input + output, each 16-byte aligned, + 1 KB), the Cortex-M3's
    1x8/s8 packs none (no scratch); bit-exact with tflite-micro."""
    assert_bit_exact_on_c_paths(long_fc_model(), tmp_path, cpu=cpu)
    compiled = CompiledModel.load(tmp_path / "lib")
    assert compiled.memory.arena_bytes <= 4000 + 16 + (1024 if cpu == "cortex-m4" else 0)
    assert [op.variant.get("chunk") for op in compiled.ops] == [CHUNK if cpu == "cortex-m4" else None]


def test_constant_channels_are_left_out_of_the_fused_gemm(tmp_path):
    """A pointwise layer with pruned channels (zero weights, biases of ±2^30: past the fused stream's bounds, each
    output one constant) on a DSP core: 2x2/fused over its live channels, the constant ones filled in
    (mtk_gemm_2x2_fused_live_s8), an odd last row; bit-exact with tflite-micro on the C paths."""
    model = conv_model("CONV_2D", (1, 5, 3, 16), (12, 1, 1, 16), (1, 5, 3, 12), per_channel=True,
                       dead=(0, 2, 3, 5, 6, 7, 10), padding="VALID", stride_h=1, stride_w=1, dilation_h_factor=1,
                       dilation_w_factor=1, fused_activation_function="RELU")
    assert_bit_exact_on_c_paths(model, tmp_path)
    assert "mtk_gemm_2x2_fused_live_s8(" in (tmp_path / "lib" / "src" / "tvmgen_default_kernels.c").read_text()


@pytest.mark.parametrize("cpu, name", [(cpu, name) for cpu in ("cortex-m4", "cortex-m3") for name in GEMM_MODELS])
def test_every_gemm_schedule_is_bit_exact(cpu, name, tmp_path):
    """Each schedule `mtk tune` may choose (gemm.gemm_variants) other than the default: 1x4 blocks for
    conv, int16 weights on DSP cores (over packed rows, or rows of the input as they are: 1x4/s16); on the
    Cortex-M3 paired weights, and 1x8 and 1x4 int8 blocks over packed rows for fully connected layers (whose
    1x8 s8 default: test_fully_connected_for_cortex_m3_is_bit_exact)."""
    model = GEMM_MODELS[name]()
    (tmp_path / "m.tflite").write_bytes(model)
    candidates = candidate_tunings(tunable_layers(prepare_ops(read_model(tmp_path / "m.tflite"), get_cpu(cpu))))
    assert candidates
    for k, tuning in enumerate(candidates):
        work = tmp_path / f"candidate-{k}"
        work.mkdir()
        assert_bit_exact_on_c_paths(model, work, cpu, tuning)
        kernels = (work / "lib" / "src" / "tvmgen_default_kernels.c").read_text()
        wide = any(variant.kernel in GEMM_BY_ID and micro_kernel(variant).weights in ("int16", "s16")
                   for variant in tuning.variants.values())   # (Winograd's: int16 weights, not the _w16_ kernels)
        assert ("_w16_" in kernels) == wide


@pytest.mark.parametrize("seed", range(6))
def test_few_channel_pointwise_layers_are_bit_exact(seed, tmp_path):
    """Random 1x1 convs of 1 to 3 channels: on DSP cores pairs of the input's rows by 2x2/s16 (in C on the host),
    bit-exact with tflite-micro."""
    assert_bit_exact_on_c_paths(few_channel_pointwise(seed), tmp_path)
    assert re.search(r"mtk_dot_2x[12]_rows_w16_s8\(", (tmp_path / "lib" / "src" / "tvmgen_default_kernels.c").read_text())


@pytest.mark.parametrize("seed", range(6))
def test_few_channel_fully_connected_layers_are_bit_exact(seed, tmp_path):
    """Random fully connected layers of 1-3 or 5-7 channels: on DSP cores the input's row by 1x4/s16 and its tails
    (in C on the host), bit-exact with tflite-micro."""
    assert_bit_exact_on_c_paths(few_channel_fc(seed), tmp_path)
    assert re.search(r"mtk_dot_1x[1-4]_rows_w16_s8\(", (tmp_path / "lib" / "src" / "tvmgen_default_kernels.c").read_text())


@pytest.mark.parametrize("channels, first", [(3, "1x4/s16"), (4, "1x4/fused"), (5, "1x4/s16"), (7, "1x4/s16"),
                                             (8, "1x4/fused"), (10, "1x4/fused")])
def test_one_row_of_few_channels_takes_the_direct_kernel_on_dsp_cores(channels, first):
    """One row over the input (a fully connected layer): the direct kernel first for 1-3 and 5-7 channels on the
    DSP cores, the fused one for whole quads and from 8; several rows of no depth told only for 1-3 (else 2x4/fused
    for whole quads on the M4 and M33: CORE_SEVERAL_ROWS_FIRST; long rows: test_microkernels)."""
    for core in ("cortex-m4", "cortex-m7", "cortex-m33"):
        cpu = get_cpu(core)
        assert gemm_choices(cpu, 1, channels=channels, input_rows=True)[0].id == first
        several = gemm_choices(cpu, 2, channels=channels, input_rows=True)[0].id
        quads = core != "cortex-m7" and channels % 4 == 0
        assert several == ("2x2/s16" if channels <= 3 else "2x4/fused" if quads else "2x2/fused")
    assert gemm_choices(get_cpu("cortex-m4"), 1, channels=6)[0].id == "1x4/fused"   # im2col rows: no direct kernel
