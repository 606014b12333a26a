"""The DSP cores' GEMM: first layers packed a kernel row at a time (gemm.py runs_stage_bytes, runs_order;
c/mtk_im2col_runs_s8.h), which layers take it, the order of the values, the layers bit-exact with tflite-micro on the
host; the models of tests/target/test_gemm_dsp_qemu.py, which runs them and the fused kernels' assembly
(c/mtk_dot_biased_s8.h, scheduled for the Cortex-M7's dual issue) on the Cortex-M4, M7 and M33."""

from __future__ import annotations

import re

import pytest

from harness import assert_bit_exact_on_c_paths, conv, conv_model, depthwise
from mtk.ops import op_def, prepare_ops
from mtk.ops.conv import FEW_INPUTS
from mtk.ops.gemm import Patches
from mtk.ops.gemm_calls import runs_order, runs_stage_bytes
from mtk.ops.variants import Variant
from mtk.reader import read_model
from mtk.target import get_cpu
from mtk.tuning import Tuning, layer_key

RUNS_LAYERS = {
    "conv-3ch-3x3-s2": lambda: conv((1, 13, 11, 3), (3, 3), 8, (7, 6), stride=(2, 2)),   # padded right and bottom
    "conv-3ch-3x3-relu": lambda: conv((1, 6, 7, 3), (3, 3), 5, (6, 7), activation="RELU"),   # padded on every side
    "conv-3ch-5x5-valid": lambda: conv((1, 8, 9, 3), (5, 5), 6, (4, 5), padding="VALID"),   # 15 left over: 4 groups
    "conv-1ch-3x3-s2": lambda: conv((1, 12, 10, 1), (3, 3), 7, (6, 5), stride=(2, 2)),   # no whole word, all left over
    "conv-2ch-3x3-dilated-rows": lambda: conv((1, 9, 8, 2), (3, 3), 4, (9, 8), dilation=(2, 1)),
    "conv-1ch-6x4-s2": lambda: conv((1, 14, 10, 1), (6, 4), 8, (7, 5), stride=(2, 2)),   # runs of one whole word
    # 1 -> N depthwise: a convolution on the GEMM (up to 16 channels on DSP cores dsp-3x3's)
    "dw-1to20-3x3": lambda: depthwise((1, 9, 8, 1), (3, 3), 20, (9, 8), activation="RELU6"),
}


def patches(in_c: int, kh: int, kw: int, dil_w: int = 1) -> Patches:
    return Patches(n=1, in_h=8, in_w=8, in_c=in_c, out_h=8, out_w=8, out_c=4, k_h=kh, k_w=kw, stride_h=1, stride_w=1,
                   dil_h=1, dil_w=dil_w, pad_top=1, pad_left=1, in_zp=0)


def test_runs_order_puts_each_kernel_rows_whole_words_first_then_what_is_left_of_every_row():
    order = runs_order(patches(3, 3, 3))   # runs of 9: 8 values from each row, then its 9th
    assert order.tolist() == [*range(0, 8), *range(9, 17), *range(18, 26), 8, 17, 26]
    assert runs_order(patches(1, 2, 4)).tolist() == list(range(8))   # runs of whole words: the natural order
    assert sorted(runs_order(patches(3, 5, 5)).tolist()) == list(range(75))


@pytest.mark.parametrize("cpu, in_c, dil_w, stage", [
    ("cortex-m4", 3, 1, 12 + 4),   # a run of 9 bytes in 12, 3 left-over values in a group
    ("cortex-m33", 1, 1, 4 + 12),  # runs of 3: no whole word, 9 left-over values
    ("cortex-m4", 2, 1, 8),        # runs of 8: whole words, nothing left over
    ("cortex-m4", 3, 2, 0),        # dilated kernel rows are not runs
    ("cortex-m4", 4, 1, 0),        # whole groups of channels: packed as taps
    ("cortex-m3", 3, 1, 0),        # no DSP: gathered
    ("cortex-m55", 3, 1, 0),       # Helium: its own GEMM
])
def test_which_layers_pack_kernel_row_runs(cpu, in_c, dil_w, stage):
    assert runs_stage_bytes(patches(in_c, 3, 4 if in_c == 2 else 3, dil_w), get_cpu(cpu)) == stage


@pytest.mark.slow
@pytest.mark.parametrize("cpu", ["cortex-m4", "cortex-m7"])
@pytest.mark.parametrize("name", RUNS_LAYERS)
def test_run_packed_layers_are_bit_exact_on_the_host(name, cpu, tmp_path):
    assert_bit_exact_on_c_paths(RUNS_LAYERS[name](), tmp_path, cpu=cpu)


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["1x4/int16", "2x2/int16", "2x2/biased"])
def test_run_packed_rows_feed_every_gemm_block(variant, tmp_path):
    """One row a block (1x4) and two (2x2), over int16 and biased weights as well as the default fused stream."""
    model = RUNS_LAYERS["conv-3ch-3x3-s2"]()
    (tmp_path / "m.tflite").write_bytes(model)
    data = prepare_ops(read_model(tmp_path / "m.tflite"), get_cpu("cortex-m4"))[0]
    assert runs_stage_bytes(data.params.patches, data.cpu) > 0
    assert_bit_exact_on_c_paths(model, tmp_path, tuning=Tuning({layer_key(data): Variant(variant)}))


def test_a_run_packed_layer_includes_the_runs_header_not_the_gather(tmp_path):
    """(On the GEMM: the layer's default is the band kernel of ops/conv_few_dsp.py.)"""
    (tmp_path / "m.tflite").write_bytes(RUNS_LAYERS["conv-3ch-3x3-s2"]())
    data = prepare_ops(read_model(tmp_path / "m.tflite"), get_cpu("cortex-m4"))[0]
    gemm = next(v for v in op_def("CONV_2D").variants(data) if v != FEW_INPUTS)
    [kernel] = op_def("CONV_2D").lower(data, gemm).kernels
    assert "im2col_runs_s8" in kernel.headers and "im2col_s8" not in kernel.headers


def pointwise(channels: int, out_c: int, activation: str = "NONE", dead: tuple[int, ...] = (), y_zp: int = 5,
              pixels: tuple[int, int] = (5, 3)) -> bytes:
    """A 1x1 CONV_2D over `pixels` (5x3 by default, an odd count: the last row pair's second row is its first; small
    enough that 2x4/fused takes one row pair a call, gemm.quad_call_pairs)."""
    return conv_model("CONV_2D", (1, *pixels, channels), (out_c, 1, 1, channels), (1, *pixels, out_c), per_channel=True,
                      dead=dead, y_zp=y_zp, padding="VALID", stride_h=1, stride_w=1, dilation_h_factor=1, dilation_w_factor=1,
                      fused_activation_function=activation)


def fully_connected(depth: int, units: int, per_channel: bool, activation: str = "NONE", y_zp: int = 5) -> bytes:
    return conv_model("FULLY_CONNECTED", (1, depth), (units, depth), (1, units), per_channel=per_channel, y_zp=y_zp,
                      fused_activation_function=activation)


FUSED_MODELS = {   # the fused kernels' assembly (c/mtk_dot_biased_s8.h), its sums and saturated outputs interleaved
    "pointwise-8-to-16": lambda: pointwise(8, 16),
    "pointwise-live": lambda: pointwise(16, 12, "RELU", dead=(0, 2, 3, 5, 6, 7, 10)),   # constant channels left out
    # ReLU: no "- 1 when negative" (requant.negative_rounding_matters), all of int8 (out_zp -128) or clamped at out_zp
    "pointwise-relu": lambda: pointwise(8, 16, "RELU", y_zp=-128),
    "pointwise-relu-clamped": lambda: pointwise(8, 16, "RELU"),
    # two rows' kernels of 1 to 8 groups, each its own (1, 4, 6, 7: ReLU; 3, 5, 8), and of more (9: any number's)
    "pointwise-1-group-relu": lambda: pointwise(3, 6, "RELU", y_zp=-128),
    "pointwise-3-groups": lambda: pointwise(12, 6),
    "pointwise-4-groups-relu": lambda: pointwise(16, 6, "RELU", y_zp=-128),
    "pointwise-5-groups": lambda: pointwise(20, 6),
    "pointwise-6-groups-relu": lambda: pointwise(24, 6, "RELU", y_zp=-128),
    "pointwise-7-groups-relu": lambda: pointwise(27, 6, "RELU", y_zp=-128),
    "pointwise-8-groups": lambda: pointwise(32, 6),
    "pointwise-9-groups-relu": lambda: pointwise(36, 6, "RELU", y_zp=-128),
    "pointwise-17-groups-relu": lambda: pointwise(68, 6, "RELU", y_zp=-128),   # M7: one whole pass, then the last group
    "pointwise-18-groups": lambda: pointwise(70, 6),   # two passes of the loop, entered 14 groups in (M7: 15)
    # channel quads (2x4, mtk_gemm_2x4_fused.h, on the Cortex-M4 and M33): each its own kernel for 1 to 16 groups, any
    # number's for more (18: two passes of 16, entered 14 groups in; 33: three)
    "quads-1-group-relu": lambda: pointwise(4, 8, "RELU", y_zp=-128),
    "quads-3-groups": lambda: pointwise(12, 12),
    "quads-9-groups-relu": lambda: pointwise(36, 8, "RELU", y_zp=-128),
    "quads-12-groups": lambda: pointwise(48, 8),
    "quads-16-groups": lambda: pointwise(64, 16),
    "quads-18-groups": lambda: pointwise(70, 4),
    "quads-33-groups-relu": lambda: pointwise(130, 8, "RELU", y_zp=-128),
    # up to 4 row pairs a call (8-16 groups, layers of 16 times their scratch; the M33 2): a last call of 5, 6 and 8
    # rows (M33: 1, 2, 4)
    "quads-16-groups-133-rows": lambda: pointwise(64, 64, pixels=(19, 7)),
    "quads-9-groups-150-rows-relu": lambda: pointwise(36, 32, "RELU", y_zp=-128, pixels=(15, 10)),
    "quads-8-groups-128-rows": lambda: pointwise(32, 32, pixels=(16, 8)),
    # over 16 groups a pair a call, the last one an odd row (its copy's outputs over its own, not past the output)
    "quads-32-groups-9-rows": lambda: pointwise(128, 16, pixels=(3, 3)),
    # 5 computed channels (one constant one computed too: whole quads), 7 constant ones filled in
    "quads-live-relu": lambda: pointwise(16, 12, "RELU", dead=(0, 2, 3, 5, 6, 7, 10), y_zp=-128),
    "fc-quads-relu": lambda: fully_connected(150, 12, per_channel=False, activation="RELU", y_zp=-128),
    "fc-quads-per-channel-relu": lambda: fully_connected(37, 10, per_channel=True, activation="RELU", y_zp=-128),
    "fc-quads-per-channel-relu-clamped": lambda: fully_connected(37, 10, per_channel=True, activation="RELU"),
    "fc-quads": lambda: fully_connected(150, 12, per_channel=False),
    "fc-quads-per-channel": lambda: fully_connected(37, 10, per_channel=True),
    "fc-chunks": lambda: fully_connected(604, 13, per_channel=False),   # a row deeper than a chunk
    # one row's quads over 1, 2 (no pass: the last pair only) and 5 groups (an odd first group, then the pairs)
    "fc-quads-1-group": lambda: fully_connected(3, 8, per_channel=False),
    "fc-quads-2-groups-relu": lambda: fully_connected(8, 8, per_channel=False, activation="RELU", y_zp=-128),
    "fc-quads-5-groups": lambda: fully_connected(20, 8, per_channel=True),
    # the Cortex-M33's quads in pairs, saturated with the layer's m, C, e, no sign term
    "fc-pairs-relu": lambda: fully_connected(128, 16, per_channel=False, activation="RELU", y_zp=-128),
}


@pytest.mark.slow
@pytest.mark.parametrize("cpu, split", [("cortex-m4", 0), ("cortex-m7", 1), ("cortex-m33", 1)])
@pytest.mark.parametrize("activation, y_zp, sign", [("RELU", -128, 0), ("NONE", 5, 1)])
def test_two_row_fused_calls_say_the_sign_term_and_the_schedule(cpu, split, activation, y_zp, sign, tmp_path):
    """mtk_gemm_2x2_fused_s8's constant arguments (6 channels: not whole quads): the sign term only where
    requant.negative_rounding_matters (not for a ReLU at out_zp -128), the SPLIT schedule where two loads beat an LDRD
    (the M7 and M33); bit-exact on the host."""
    assert_bit_exact_on_c_paths(pointwise(8, 6, activation, y_zp=y_zp), tmp_path, cpu=cpu)
    source = (tmp_path / "lib" / "src" / "tvmgen_default_kernels.c").read_text()
    assert re.findall(r"mtk_gemm_2x2_fused_s8\(.*, (\d), (\d)\);", source) == [(str(sign), str(split))]


@pytest.mark.slow
@pytest.mark.parametrize("cpu, kernel", [("cortex-m4", "band"), ("cortex-m33", "band"), ("cortex-m7", "2x2")])
@pytest.mark.parametrize("activation, y_zp", [("RELU", -128), ("NONE", 5), ("RELU", 5)])
def test_whole_channel_quads_take_the_quads_kernel_on_the_m4_and_m33(cpu, kernel, activation, y_zp, tmp_path):
    """16 channels of 8 over the input's rows: the quads' band kernel (mtk_gemm_band_fused_s8, over 2x4/fused's stream)
    on the Cortex-M4 and M33 where the outputs span all of int8, the pairs' kernel where they are clamped (ReLU at
    out_zp 5: 2x4 would clamp in C) and on the M7; bit-exact on the host."""
    assert_bit_exact_on_c_paths(pointwise(8, 16, activation, y_zp=y_zp), tmp_path, cpu=cpu)
    source = (tmp_path / "lib" / "src" / "tvmgen_default_kernels.c").read_text()
    called = re.findall(r"mtk_gemm_(2x\d|band)_fused_s8\(\(", source)
    assert called == ["2x2" if (activation, y_zp) == ("RELU", 5) else kernel]


@pytest.mark.slow
@pytest.mark.parametrize("name, channels", [("clamped", 16), ("partial-quad", 6)])
def test_the_quads_kernel_computes_in_c_what_its_assembly_leaves(name, channels, tmp_path):
    """2x4/fused asked for by a tuning file where its assembly does not reach: clamped outputs, a last quad of 2
    channels; bit-exact on the host."""
    model = pointwise(8, channels, "RELU", y_zp=5 if name == "clamped" else -128)
    (tmp_path / "m.tflite").write_bytes(model)
    data = prepare_ops(read_model(tmp_path / "m.tflite"), get_cpu("cortex-m4"))[0]
    assert_bit_exact_on_c_paths(model, tmp_path, tuning=Tuning({layer_key(data): Variant("2x4/fused")}))
    assert "mtk_gemm_2x4_fused_s8((" in (tmp_path / "lib" / "src" / "tvmgen_default_kernels.c").read_text()


@pytest.mark.slow
@pytest.mark.parametrize("cpu, kernel", [("cortex-m4", "2x4"), ("cortex-m7", "2x2")])
def test_constant_channels_are_left_out_of_whole_quads(cpu, kernel, tmp_path):
    """A layer with 7 constant channels of 12: on the Cortex-M4 2x4/fused computes 8 (the 5 others and a constant
    one, whole quads), on the M7 2x2/fused the 5; bit-exact on the host."""
    assert_bit_exact_on_c_paths(FUSED_MODELS["quads-live-relu"](), tmp_path, cpu=cpu)
    source = (tmp_path / "lib" / "src" / "tvmgen_default_kernels.c").read_text()
    assert re.findall(r"mtk_gemm_(2x\d)_fused_live_s8\(\(.*?, \d+, (\d+), ", source) == [
        (kernel, "8" if kernel == "2x4" else "5")]


def test_under_a_ram_limit_a_deep_row_is_packed_in_smaller_chunks(tmp_path):
    """AD's 640-deep first layer packs its row CHUNK values at a time (1,792 B arena: the 640 B input, 1,024 B of
    scratch, the 128 B output); under a --max-ram its chunked GEMM cannot meet, LEAN_CHUNK at a time (OpDef.leaner):
    256 B less, only at the step above the limit; under a lower one, LEANEST_CHUNK (128 B less again)."""
    from checkout import SHARED_MODELS
    from mtk.compiler import compile_model
    from harness import assert_outputs_match, random_samples
    from mtk.hostrun import HostModel
    from mtk.ops.gemm import CHUNK, LEAN_CHUNK, LEANEST_CHUNK

    model = SHARED_MODELS / "ad_fc_int8.tflite"
    if not model.exists():
        pytest.skip(f"{model} is missing")
    untiled = compile_model(model, tmp_path / "untiled", cpu="cortex-m4")
    assert untiled.arena_bytes == 1792 and untiled.ops[0].variant["chunk"] == CHUNK
    lean = compile_model(model, tmp_path / "lean", cpu="cortex-m4", max_ram=1606)
    assert lean.arena_bytes == 1536 and lean.ops[0].variant["chunk"] == LEAN_CHUNK
    assert [op.variant for op in lean.ops[1:]] == [op.variant for op in untiled.ops[1:]]
    leanest = compile_model(model, tmp_path / "leanest", cpu="cortex-m4", max_ram=1478)
    assert leanest.arena_bytes == 1408 and leanest.ops[0].variant["chunk"] == LEANEST_CHUNK
    samples = random_samples(model.read_bytes())
    assert_outputs_match(model.read_bytes(), samples, [HostModel(leanest.path).run(sample) for sample in samples])


@pytest.mark.parametrize("depth, lean", [(64, Variant("2x4/fused", lean=True)), (68, None)])
def test_under_a_ram_limit_the_quads_kernel_takes_a_row_pair_a_call(depth, lean, tmp_path):
    """2x4/fused's leaner variant (OpDef.leaner) where it takes several row pairs a call: one, a pair's scratch (256 B
    for 64 values, not 4 pairs' 1 KB); over more than 16 groups it takes one already (and its rows are no chunk's)."""
    from mtk.ops.base import Scratch

    (tmp_path / "m.tflite").write_bytes(pointwise(depth, 64, pixels=(15, 11)))
    data = prepare_ops(read_model(tmp_path / "m.tflite"), get_cpu("cortex-m4"))[0]
    layer = op_def(data.op.type)
    assert layer.leaner(data, Variant("2x4/fused")) == lean
    if lean is not None:
        scratches = [[a.nbytes for a in layer.lower(data, v).kernels[0].args if isinstance(a, Scratch)]
                     for v in (Variant("2x4/fused"), lean)]
        assert scratches == [[4 * 256], [256]] and layer.leaner(data, lean) is None
        assert lean.to_json() == {"kernel": "2x4/fused", "lean": True}


@pytest.mark.parametrize("cpu, depth, pairs", [("cortex-m4", 64, 4), ("cortex-m33", 64, 2), ("cortex-m4", 68, 1)])
def test_the_quads_kernel_takes_several_row_pairs_a_call_from_a_line_aligned_stream(cpu, depth, pairs, tmp_path):
    """2x4/fused over 8-16 groups: 4 row pairs a call on the Cortex-M4, 2 on the M33 (gemm.QUAD_PAIRS: each pair
    packed after the one before; their scratch within 1/16 of the layer), the last call the rows left; over more
    groups, a pair a call. Its stream aligned to 32 bytes (a quad's words at cache line boundaries), pack_quad_stream's
    bytes. (Asked for by a tuning file: the band kernel comes first for such layers on the M33.)"""
    from mtk.compiler import compile_model
    from mtk.ops.microkernels import quad_stream_bytes

    (tmp_path / "m.tflite").write_bytes(pointwise(depth, 64, pixels=(15, 11)))
    data = prepare_ops(read_model(tmp_path / "m.tflite"), get_cpu(cpu))[0]
    quads = next(v for v in op_def(data.op.type).variants(data) if v.kernel == "2x4/fused")
    compiled = compile_model(tmp_path / "m.tflite", tmp_path / "lib", cpu=cpu, tuning=Tuning({layer_key(data): quads}))
    kernels_c = (compiled.path / "src" / "tvmgen_default_kernels.c").read_text()
    rows = re.findall(rf"mtk_gemm_2x4_fused_s8\(.*, 64, .*, 64, (.*), {pairs}, -128, 127, 1\);", kernels_c)
    assert len(rows) == 1 and re.fullmatch(rf"\(\({2 * pairs}\) < \(v_\w*\) \? \({2 * pairs}\) : \(v_\w*\)\)", rows[0])
    assert re.findall(r"for \(int32_t pb = 0; pb < (\d+); \+\+pb\)", kernels_c) == [str(-(-165 // (2 * pairs)))]
    assert kernels_c.count("mtk_pack_pair_s16((") == pairs
    stream = f"_w[{quad_stream_bytes(64, depth)}] TVMGEN_ALIGNED(32)"
    assert stream in (compiled.path / "src" / "tvmgen_default.c").read_text()
