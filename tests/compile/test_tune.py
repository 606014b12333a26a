"""`mtk tune` (autotune.py) and tuning files (tuning.py): measured once, cached, read by --tuning."""

from __future__ import annotations

import json
from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pytest

from mtk.autotune import candidate_tunings, choose
from mtk import autotune
from mtk.cli import main
from mtk.compiler import compile_model
from mtk.errors import MtkError
from mtk.ops.gemm import GemmLayout, gemm_variants, packed_weight_bytes
from mtk.ops.conv import DEPTHWISE_KERNELS
from mtk.kernels.table import ALL_ISAS, weight_group
from mtk.ops.microkernels import pack_weight_pairs, pack_weights, pack_weights_int16, pack_weights_narrow
from mtk.ops import op_def, prepare_ops
from mtk.ops.base import Scratch
from mtk.ops.pooling import POOL_KERNELS
from mtk.ops.variants import Variant
from mtk.pipeline import _layer_times
from mtk.runresult import LayerTime
from mtk.reader import read_model
from mtk.target import get_cpu
from mtk.tflite_builder import ModelBuilder
from mtk.tuning import Tuning, load_tuning, tunable_layers, write_entries

from checkout import REPO

MODEL = REPO / "models" / "digits_cnn_int8.tflite"


@pytest.mark.parametrize("content", ["{not json", '{"format": "other", "layers": {}}',
                                     '{"format": "mtk-tuning/1", "layers": {"k": {"schedule": "2x2"}}}',
                                     '{"format": "mtk-tuning/1", "layers": {"k": {"schedule": {"block": "2x2", '
                                     '"weights": "int8"}, "instructions": [1]}}}',
                                     '{"format": "mtk-tuning/1", "layers": {"k": {"schedule": {"kernel": "2x2/int8"}, '
                                     '"code_bytes": {"2x2/int8": "big"}}}}',
                                     '{"format": "mtk-tuning/1", "layers": {"k": {"schedule": {"kernel": "x"}}}}',
                                     '{"format": "mtk-tuning/2", "boards": {"mps2/an386": []}}',
                                     '{"format": "mtk-tuning/2", "layers": {}}'])
def test_a_bad_tuning_file_is_a_clear_error(content, tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    assert main(["compile", str(MODEL), "--tuning", str(bad), "-o", str(tmp_path / "lib")]) == 2
    assert str(bad) in capsys.readouterr().err
    assert main(["run", str(MODEL), "--tuning", str(tmp_path / "missing.json")]) == 2
    assert "missing.json does not exist" in capsys.readouterr().err


def test_a_schedule_the_layer_cannot_take_is_refused(tmp_path):
    layer = tunable_layers(prepare_ops(read_model(MODEL), get_cpu("cortex-m3")))[0]
    tuning = Tuning({layer.key: Variant("2x2/int16")}, "shared.json")   # int16 weights need DSP
    with pytest.raises(MtkError, match="shared.json: schedule 2x2/int16 is not one op 0 can take"):
        compile_model(MODEL, tmp_path / "lib", cpu="cortex-m3", tuning=tuning)


def pairs_schedules(layer):
    """`layer` without the band kernel (dsp-few, the Cortex-M4's default for it: ops/conv_few_dsp.py) and the channel
    quads' schedules (2x4/fused, 2x4/compact): the pairs' first."""
    return replace(layer, variants=[v for v in layer.variants if v.kernel not in ("dsp-few", "2x4/fused", "2x4/compact")])


def test_counts_within_a_tick_are_equal_and_the_first_wins():
    layer = pairs_schedules(tunable_layers(prepare_ops(read_model(MODEL), get_cpu("cortex-m4")))[0])
    labels = [s.label for s in layer.variants]   # 2x2/fused (the default), 2x2/biased, 2x2/int16, 1x4/biased, 1x4/int16
    inf = float("inf")
    assert choose(layer, dict(zip(labels, [1000, 1000, 960, 990, 1000])), 40, inf)[0] == layer.variants[0]
    assert choose(layer, dict(zip(labels, [1000, 1000, 960, 920, 910])), 40, inf)[0] == layer.variants[3]
    variant, passed_over = choose(layer, {labels[0]: 1000, labels[4]: 900}, 40, inf)
    assert variant == layer.variants[4]
    assert passed_over[labels[1]] == passed_over[labels[2]] == passed_over[labels[3]] == \
        "not measured: the build did not fit the board"


def test_more_flash_is_chosen_only_for_enough_cycles_saved():
    layer = pairs_schedules(tunable_layers(prepare_ops(read_model(MODEL), get_cpu("cortex-m4")))[0])
    assert [v.kernel for v in layer.variants[-2:]] == ["wino-f4x4", "wino-f2x2"]   # (1 input channel: the last
    layer = replace(layer, variants=layer.variants[:-2])                            # choices) left out here
    labels = [s.label for s in layer.variants]   # 2x2/fused (the default), 2x2/biased, 2x2/int16, 1x4/biased, 1x4/int16
    extra = layer.extra_flash()
    assert extra[labels[0]] == extra[labels[1]] == extra[labels[3]] == 0 and extra[labels[2]] == extra[labels[4]] > 0
    per_100 = extra[labels[2]] / 100   # bytes per cycle that let int16 weights save 100 cycles
    variant, passed_over = choose(layer, dict(zip(labels, [10_000, 10_000, 9_901, 9_950, 9_900])), 0, per_100)
    assert variant == layer.variants[4]
    assert passed_over == {labels[0]: "+100 cycles", labels[1]: "+100 cycles",
                           labels[3]: "+50 cycles",
                           labels[2]: f"+{extra[labels[2]]:,} B flash for 99 cycles saved "
                                      f"(limit {per_100:g} B per cycle)"}
    assert choose(layer, dict(zip(labels, [10_000, 10_000, 9_901, 9_950, 9_901])), 0, per_100)[0] == layer.variants[3]
    assert choose(layer, dict(zip(labels, [10_000, 10_000, 10_200, 10_100, 9_901])), 0, per_100)[1] == {
        labels[1]: f"a tie with {labels[0]} (within a tick), which comes first",
        labels[2]: f"+200 cycles and +{extra[labels[2]]:,} B flash over {labels[0]}",
        labels[3]: "+100 cycles", labels[4]: f"+{extra[labels[4]]:,} B flash for 99 cycles saved "
                                             f"(limit {per_100:g} B per cycle)"}
    assert choose(layer, dict(zip(labels, [10_000, 10_000, 9_000, 9_950, 9_000])), 0, 0)[0] == layer.variants[3]
    assert choose(layer, dict(zip(labels, [10_000, 10_000, 10_000, 10_000, 10_100])), 0, float("inf"))[0] == \
        layer.variants[0]


def test_a_variants_own_code_is_priced_with_its_weights():
    """2x2/biased takes the default's weight bytes; with 500 B more code of its own, saving 300 cycles is worth it
    at 2 B per cycle, not at 1; 50 B more code of the default's makes 1x4/biased the leanest."""
    layer = pairs_schedules(tunable_layers(prepare_ops(read_model(MODEL), get_cpu("cortex-m4")))[0])
    layer = replace(layer, variants=layer.variants[:-2])   # the Winograd kernels left out
    labels = [s.label for s in layer.variants]   # 2x2/fused (the default), 2x2/biased, 2x2/int16, 1x4/biased, 1x4/int16
    code = dict.fromkeys(labels, 100) | {labels[1]: 600}
    extra = layer.extra_flash(code)
    assert extra[labels[0]] == 0 and extra[labels[1]] == 500 and extra[labels[2]] == layer.extra_flash()[labels[2]]
    counts = dict(zip(labels, [10_000, 9_700, 10_000, 10_000, 10_000]))
    variant, passed_over = choose(layer, counts, 0, 1.0, code=code)
    assert variant == layer.variants[0]
    assert passed_over[labels[1]] == "+500 B flash for 300 cycles saved (limit 1 B per cycle)"
    assert choose(layer, counts, 0, 2.0, code=code)[0] == layer.variants[1]
    assert choose(layer, counts, 0, 0.0)[0] == layer.variants[1]   # priced by its weights alone
    heavy = code | {labels[0]: 150}
    assert layer.leanest(heavy) == layer.variants[3] and layer.extra_flash(heavy)[labels[0]] == 50
    assert layer.leanest(dict.fromkeys(labels, None)) == layer.leanest()   # not measured: its weights alone


def test_compiled_ops_carry_the_code_their_layer_takes_alone(tmp_path):
    """digits CNN on the M4: each op reports the code its layer's kernels take as if alone (its own function and
    the kernels only layers of its variant call), the same for every op of a key, each within the generated C's
    code; a run's layers and metadata.json carry it."""
    compiled = compile_model(MODEL, tmp_path / "out", cpu="cortex-m4", force=True)
    ops = [op for op in compiled.ops if op.kernel is not None]
    assert all(0 < op.code_bytes <= compiled.memory.code_bytes for op in ops)
    by_key = {op.layer_key: op.code_bytes for op in ops if op.layer_key}
    assert all(by_key[op.layer_key] == op.code_bytes for op in ops if op.layer_key)
    layers = _layer_times(compiled, [1] * len(compiled.ops))
    assert [t.code_bytes for t in layers] == [op.code_bytes for op in compiled.ops]
    saved = json.loads((tmp_path / "out" / "metadata.json").read_text())["ops"]
    assert [op["code_bytes"] for op in saved] == [op.code_bytes for op in compiled.ops]


def test_flash_is_priced_against_the_leanest_schedule_not_the_default():
    """Cortex-M3 fully connected, 10 channels: 1x8 s8 blocks take the weights as they are (the leanest, and the
    default: its last tile holds 2 channels), 1x4 int8 ones pad them to 12 channels, 1x8 int8 ones to 16, paired 1x4
    ones take twice 12; each schedule's extra flash is priced against the leanest's."""
    layer = [l for l in tunable_layers(prepare_ops(read_model(MODEL), get_cpu("cortex-m3"))) if l.op.type == "FULLY_CONNECTED"][1]
    direct, eight, paired, four = layer.variants
    assert [s.label for s in layer.variants] == ["1x8/s8", "1x8/int8", "1x4/pairs", "1x4/int8"]
    assert layer.leanest() == direct
    extra = layer.extra_flash()
    assert extra[direct.label] == 0 < extra[four.label] < extra[eight.label] < extra[paired.label]
    counts = {s.label: 10_000 - extra[s.label] // 2 for s in layer.variants}   # 2 B per instruction saved
    assert choose(layer, counts, 0, 1.0)[0] == direct
    assert choose(layer, counts, 0, 2.0)[0] == paired
    counts[eight.label] = 10_000 - extra[eight.label]   # 1 B per instruction saved
    assert choose(layer, counts, 0, 1.0)[0] == eight


@pytest.mark.parametrize("channels, depth", [(10, 27), (64, 64), (3, 5)])
def test_packed_weight_bytes_are_the_packed_arrays(channels, depth):
    w = np.arange(channels * depth, dtype=np.int8).reshape(channels, depth)
    for variant, group, packed in [(Variant("2x2/int8"), 4, pack_weights(w, 2)),
                                    (Variant("1x4/int8"), 16, pack_weights(w, 4, 16)),
                                    (Variant("1x8/int8"), 4, pack_weights(w, 8)),
                                    (Variant("1x8/s8"), 4, pack_weights_narrow(w, 8)),
                                    (Variant("2x2/int16"), 4, pack_weights_int16(w, 2)),
                                    (Variant("1x4/pairs"), 4, pack_weight_pairs(w))]:
        assert packed.nbytes == packed_weight_bytes(channels, depth, variant, group)


def depthwise_pool_model(hidden_scale: float = 0.1) -> bytes:
    """Depthwise 3x3 over 20 channels (Helium: a group of 16, then 4), then a 2x2 average pool with
    partial windows at the border (SAME); its requantization shifts left when `hidden_scale` is small."""
    rng = np.random.default_rng(0)
    b = ModelBuilder(description="mtk test tune depthwise and pool")
    x = b.tensor("x", (1, 6, 5, 20), "int8", scale=0.05, zero_point=-7)
    w_scale = rng.uniform(0.002, 0.02, 20)
    w = b.const("w", rng.integers(-127, 128, (1, 3, 3, 20)).astype(np.int8), scale=w_scale,
                zero_point=np.zeros(20, np.int64), axis=3)
    bias = b.const("b", rng.integers(-2000, 2000, 20).astype(np.int32), scale=0.05 * w_scale,
                   zero_point=np.zeros(20, np.int64), axis=0)
    h = b.tensor("h", (1, 6, 5, 20), "int8", scale=hidden_scale, zero_point=-3)
    b.op("DEPTHWISE_CONV_2D", [x, w, bias], [h], padding="SAME", stride_h=1, stride_w=1, depth_multiplier=1,
         dilation_h_factor=1, dilation_w_factor=1, fused_activation_function="RELU")
    y = b.tensor("y", (1, 3, 3, 20), "int8", scale=hidden_scale, zero_point=-3)
    b.op("AVERAGE_POOL_2D", [h], [y], padding="SAME", stride_h=2, stride_w=2, filter_height=2, filter_width=2,
         fused_activation_function="NONE")
    b.inputs([x])
    b.outputs([y])
    return b.build()


@pytest.mark.parametrize("table", [DEPTHWISE_KERNELS, POOL_KERNELS], ids=["depthwise", "pool"])
def test_every_instruction_set_has_a_kernel_for_every_layer(table):
    """Each family's table lists kernels for every instruction set, by distinct names, the last taking any layer."""
    assert set(table.by_isa) == set(ALL_ISAS)
    for choices in table.by_isa.values():
        assert len({c.name for c in choices}) == len(choices) and choices[-1].takes.__name__ == "_every_layer"


def test_one_candidate_build_measures_a_variant_of_every_layer(tmp_path):
    """Helium: the depthwise layer's c4 and the pool's TVM loops in one build; split, one build each."""
    (tmp_path / "m.tflite").write_bytes(depthwise_pool_model())
    layers = tunable_layers(prepare_ops(read_model(tmp_path / "m.tflite"), get_cpu("cortex-m55")))
    assert [[s.label for s in layer.variants] for layer in layers] == [["mve-c16", "c4"], ["mve", "tvm"]]
    [build] = candidate_tunings(layers)
    assert list(build.variants.values()) == [Variant("c4"), Variant("tvm")]
    assert [list(t.variants.values()) for t in autotune._split(build)] == [[Variant("c4")],
                                                                           [Variant("tvm")]]
    measured = {layers[0].key: {"mve-c16": 1, "c4": 1}, layers[1].key: {"mve": 1}}   # the untuned build's and c4
    assert candidate_tunings(layers, measured) == [Tuning({layers[1].key: Variant("tvm")}, "schedule tvm")]
    m4 = tunable_layers(prepare_ops(read_model(tmp_path / "m.tflite"), get_cpu("cortex-m4")))
    assert [[s.label for s in layer.variants] for layer in m4] == [["dsp-3x3", "dsp-c4", "c4"], ["c", "tvm"]]
    assert len(candidate_tunings(m4)) == 2   # the depthwise layer has two variants besides its default


def test_no_schedule_tune_may_choose_takes_more_scratch_than_the_default():
    """`mtk tune` weighs flash per instruction; RAM needs no price: on every instruction set the default
    schedule has the most block rows, so no alternative packs more (its arena can only stay or shrink),
    and compiler.chunk_scratch chunks whichever schedule a layer has."""
    for cpu in map(get_cpu, ("cortex-m0", "cortex-m3", "cortex-m4", "cortex-m7", "cortex-m55")):
        for rows, source in ((1, "rows"), (30, "rows"), (30, "taps"), (30, "gather")):
            variants = gemm_variants(cpu, rows)
            scratch = [GemmLayout(rows, 12, 72, s, source, weight_group(cpu)).scratch_bytes for s in variants]
            assert scratch[0] == max(scratch), (cpu.name, rows, source, scratch)


@pytest.mark.slow
@pytest.mark.parametrize("cpu", ["cortex-m55", "cortex-m4", "cortex-m3"])
def test_no_kernel_variant_takes_more_scratch_than_the_default(cpu, tmp_path):
    """RAM has no price in `mtk tune` (the GEMM's variants: the test above): a depthwise or pooling
    variant's scratch is never above its layer's default's."""
    (tmp_path / "m.tflite").write_bytes(depthwise_pool_model())
    for layer in tunable_layers(prepare_ops(read_model(tmp_path / "m.tflite"), get_cpu(cpu))):
        opdef = op_def(layer.op.type)
        scratch = [sum(a.nbytes for k in opdef.lower(layer.data, s).kernels for a in k.args if isinstance(a, Scratch))
                   for s in layer.variants]
        assert max(scratch) <= scratch[0]


def test_pools_of_other_windows_or_types_have_other_keys(tmp_path):
    """Same input, output, strides and padding: a 2x2 and a 3x3 window, an int8 and an int16 pool."""
    def pool_key(window: int, dtype: str) -> str:
        b = ModelBuilder(description="mtk test pool key")
        x = b.tensor("x", (1, 6, 6, 4), dtype, scale=0.1, zero_point=0)
        y = b.tensor("y", (1, 3, 3, 4), dtype, scale=0.1, zero_point=0)
        b.op("MAX_POOL_2D", [x], [y], padding="SAME", stride_h=2, stride_w=2, filter_height=window,
             filter_width=window, fused_activation_function="NONE")
        b.inputs([x])
        b.outputs([y])
        graph = read_model(b.save(tmp_path / f"{window}-{dtype}.tflite"))
        [layer] = tunable_layers(prepare_ops(graph, get_cpu("cortex-m55")))
        return layer.key

    keys = {pool_key(2, "int8"), pool_key(3, "int8"), pool_key(2, "int16")}
    assert len(keys) == 3 and "filter_height=3" in pool_key(3, "int8") and " int16 " in pool_key(2, "int16")


def test_a_layer_shifting_left_has_its_own_key(tmp_path):
    """Helium's depthwise kernel shifts right only: a layer with a channel that shifts left takes c4 alone,
    under a key of its own, so that a tuning file's mve-c16 for the same shapes is not refused for it."""
    keys = []
    for name, scale in (("right", 0.1), ("left", 1e-5)):
        (tmp_path / f"{name}.tflite").write_bytes(depthwise_pool_model(scale))
        [depthwise, _] = tunable_layers(prepare_ops(read_model(tmp_path / f"{name}.tflite"), get_cpu("cortex-m55")))
        keys.append(depthwise.key)
    assert [s.label for s in depthwise.variants] == ["c4"]
    assert keys[1] == keys[0].replace(" cortex-m55", " lshift cortex-m55")


@pytest.mark.slow
def test_layers_in_tiled_stages_are_not_measured(tmp_path):
    """A tiled stage's instructions are counted on its first op: its layers' own counts are unknown, so
    their keys keep the default, unless the same key also runs untiled (that layer measures it)."""
    model = tmp_path / "m.tflite"
    model.write_bytes(depthwise_pool_model())
    untiled = compile_model(model, tmp_path / "untiled", cpu="cortex-m55", force=True)
    tiled = compile_model(model, tmp_path / "tiled", cpu="cortex-m55", force=True,
                          max_ram=untiled.memory.arena_bytes - 1)
    layers = tunable_layers(prepare_ops(read_model(model), get_cpu("cortex-m55")))
    counts = [100, 0]
    assert [op.tiled for op in tiled.ops] == [True, False]   # the cap is met by tiling the depthwise alone
    assert autotune._measurable_layers(layers, SimpleNamespace(layers=_layer_times(tiled, counts))) == {
        layers[1].key: [layers[1]]}
    assert autotune._measurable_layers(layers, SimpleNamespace(layers=_layer_times(untiled, counts))) == {
        layer.key: [layer] for layer in layers}
    twice = [layers[0], replace(layers[0], data=replace(layers[0].data, op=replace(layers[0].op, index=5)))]
    times = [LayerTime(0, "DEPTHWISE_CONV_2D", 100, 0, tiled=True), LayerTime(5, "DEPTHWISE_CONV_2D", 100, 0)]
    assert [[layer.op.index for layer in same] for same in autotune._measurable_layers(
        twice, SimpleNamespace(layers=times)).values()] == [[5, 0]]


def test_tuning_files_hold_the_kernel_id_and_older_gemm_schedules_read_the_same(tmp_path):
    """One variant type: a GEMM's schedule is written {"kernel": "<block>/<weights>"}, the label of its
    micro-kernel; files of older versions, {"block": ..., "weights": ...}, name the same variant."""
    layer = tunable_layers(prepare_ops(read_model(MODEL), get_cpu("cortex-m4")))[0]
    file = tmp_path / "t.json"
    write_entries(file, "mps2/an386", {layer.key: {"schedule": Variant("2x2/int16").to_json(), "instructions": {}}})
    assert json.loads(file.read_text())["boards"]["mps2/an386"][layer.key]["schedule"] == {"kernel": "2x2/int16"}
    old = tmp_path / "old.json"
    old.write_text(json.dumps({"format": "mtk-tuning/1", "layers": {
        layer.key: {"schedule": {"block": "2x2", "weights": "int16"}, "board": "mps2/an386"}}}))
    assert load_tuning(old, "mps2/an386").variants == load_tuning(file, "mps2/an386").variants == {
        layer.key: Variant("2x2/int16")}
    assert Variant("1x4/biased", 48).to_json() == {"kernel": "1x4/biased", "chunk": 48}   # metadata.json's


def test_a_kernel_variant_is_read_from_the_file_and_checked(tmp_path):
    (tmp_path / "m.tflite").write_bytes(depthwise_pool_model())
    layers = tunable_layers(prepare_ops(read_model(tmp_path / "m.tflite"), get_cpu("cortex-m4")))
    file = tmp_path / "t.json"
    write_entries(file, "mps2/an386", {layers[0].key: {"schedule": {"kernel": "mve-c16"}}})
    assert load_tuning(file, None).variants == {layers[0].key: Variant("mve-c16")}
    with pytest.raises(MtkError, match="schedule mve-c16 is not one op 0 can take"):   # Helium's, on the M4
        compile_model(tmp_path / "m.tflite", tmp_path / "lib", cpu="cortex-m4", tuning=load_tuning(file, None))


def test_a_tuning_file_keeps_each_boards_schedules_apart(tmp_path, capsys):
    """The same layer key tuned for mps2/an386 and (emulated) for nucleo_l4r5zi, both Cortex-M4: each board's build
    takes its own; a board the file holds nothing for is refused naming the file, and without a board two
    different schedules of one key are."""
    layer = tunable_layers(prepare_ops(read_model(MODEL), get_cpu("cortex-m4")))[0]
    file = tmp_path / "t.json"
    write_entries(file, "mps2/an386", {layer.key: {"schedule": {"kernel": "2x2/biased"}}})
    write_entries(file, "nucleo_l4r5zi", {layer.key: {"schedule": {"kernel": "1x4/biased"},
                                                      "emulated_on": "mps2/an386"}})
    assert set(json.loads(file.read_text())["boards"]) == {"mps2/an386", "nucleo_l4r5zi"}
    assert load_tuning(file, "mps2/an386").variants == {layer.key: Variant("2x2/biased")}
    assert load_tuning(file, "nucleo_l4r5zi").variants == {layer.key: Variant("1x4/biased")}
    with pytest.raises(MtkError, match=f"tuning file {file} holds schedules measured for mps2/an386, nucleo_l4r5zi, "
                                       "none for nucleo_f746zg"):
        load_tuning(file, "nucleo_f746zg")
    with pytest.raises(MtkError, match="takes 2x2/biased on mps2/an386 and 1x4/biased on nucleo_l4r5zi"):
        load_tuning(file, None)
    only_l4r5 = tmp_path / "l4r5.json"
    write_entries(only_l4r5, "nucleo_l4r5zi", {layer.key: {"schedule": {"kernel": "1x4/biased"}}})
    assert main(["compile", str(MODEL), "--board", "mps2/an386", "--tuning", str(only_l4r5), "-o",
                 str(tmp_path / "lib")]) == 2
    err = capsys.readouterr().err
    assert f"tuning file {only_l4r5} holds schedules measured for nucleo_l4r5zi, none for mps2/an386" in err
    assert "mtk tune MODEL --board mps2/an386" in err


def test_an_old_tuning_file_reads_by_the_board_each_layer_names_and_is_rewritten_by_board(tmp_path):
    layer = tunable_layers(prepare_ops(read_model(MODEL), get_cpu("cortex-m4")))[0]
    old = tmp_path / "old.json"
    old.write_text(json.dumps({"format": "mtk-tuning/1", "layers": {layer.key: {
        "schedule": {"kernel": "2x2/biased"}, "cycles": {"2x2/biased": 100}, "board": "mps2/an386"}}}))
    assert load_tuning(old, "mps2/an386").variants == {layer.key: Variant("2x2/biased")}
    with pytest.raises(MtkError, match="none for nucleo_l4r5zi"):
        load_tuning(old, "nucleo_l4r5zi")
    write_entries(old, "nucleo_l4r5zi", {layer.key: {"schedule": {"kernel": "1x4/biased"}}})
    assert json.loads(old.read_text()) == {"format": "mtk-tuning/2", "boards": {
        "mps2/an386": {layer.key: {"schedule": {"kernel": "2x2/biased"}, "cycles": {"2x2/biased": 100}}},
        "nucleo_l4r5zi": {layer.key: {"schedule": {"kernel": "1x4/biased"}}}}}


def test_a_physical_board_is_tuned_emulated_under_its_cycle_model(tmp_path, capsys):
    from mtk.boards import get_board

    l4r5 = get_board("nucleo_l4r5zi")
    target = autotune.tune_target(l4r5, emulate=True)
    assert (target.board.name, target.board.cpu, target.emulate) == ("mps2/an386", l4r5.cpu, l4r5)
    assert target.runner_options["cycles"].label == "nucleo_l4r5zi"
    assert (autotune.measured_board(target), autotune.emulator_of(target)) == ("nucleo_l4r5zi", "mps2/an386")
    an386 = autotune.tune_target(get_board("mps2/an386"))
    assert (autotune.measured_board(an386), autotune.emulator_of(an386), an386.runner_options) == (
        "mps2/an386", None, {})
    assert main(["tune", str(MODEL), "--board", "nucleo_l4r5zi", "--tuning", str(tmp_path / "t.json")]) == 2
    assert "--board nucleo_l4r5zi --emulate" in capsys.readouterr().err
    assert main(["tune", str(MODEL), "--board", "mps2/an386", "--emulate", "--tuning", str(tmp_path / "t.json")]) == 2
    assert "mps2/an386 is a QEMU board" in capsys.readouterr().err
    assert not (tmp_path / "t.json").exists()


def test_the_untuned_builds_variants_are_those_the_compiler_chose():
    """On a board whose fetch misses are expensive the untuned build may run a layer in another variant than its
    default (compiler.code_fitting_tuning): its count is that variant's."""
    layers = tunable_layers(prepare_ops(read_model(MODEL), get_cpu("cortex-m4")))
    moved = layers[0].variants[1]
    untuned = SimpleNamespace(layers=[LayerTime(layers[0].op.index, "CONV_2D", 100, 0, variant=moved.label)])
    untuned_variants = autotune.untuned_variants(layers, untuned)
    assert untuned_variants == {layer.key: moved if layer is layers[0] else layer.variants[0] for layer in layers}
    measured = {layer.key: {variant.label: 100} for layer, variant in zip(layers, untuned_variants.values())}
    assert candidate_tunings(layers, measured)[0].variants[layers[0].key] == layers[0].variants[0]
