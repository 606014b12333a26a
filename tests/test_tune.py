"""`mtk tune` (autotune.py) and tuning files (tuning.py): measured once, cached, read by --tuning."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pytest

from mtk.autotune import choose
from mtk import autotune
from mtk.cli import main
from mtk.compiler import compile_model
from mtk.errors import MtkError
from mtk.ops.gemm import GemmVariant, packed_weight_bytes
from mtk.ops.microkernels import pack_weight_pairs, pack_weights, pack_weights_int16
from mtk.ops import prepare_ops
from mtk.reader import read_model
from mtk.target import get_cpu
from mtk.tuning import Tuning, tunable_layers

MODEL = Path(__file__).resolve().parents[1] / "models" / "digits_cnn_int8.tflite"


@pytest.mark.qemu
@pytest.mark.slow
def test_tuning_is_cached_and_repeatable(tmp_path, capsys):
    cache = tmp_path / "tuning.json"
    assert main(["tune", str(MODEL), "--board", "mps2/an386", "--cache", str(cache), "--json"]) == 0
    first = json.loads(capsys.readouterr().out)
    entries = json.loads(cache.read_text())["layers"]
    assert first["builds_measured"] == 3 and not any(layer["cached"] for layer in first["layers"])
    assert set(entries) == {layer["key"] for layer in first["layers"]}
    assert all("cortex-m4" in key and entry["board"] == "mps2/an386" for key, entry in entries.items())
    assert first["tuned"]["instructions"] < first["untuned"]["instructions"]
    assert first["tuned"]["flash_bytes"] > first["untuned"]["flash_bytes"]   # int16 weights chosen somewhere

    assert main(["tune", str(MODEL), "--board", "mps2/an386", "--cache", str(cache), "--json"]) == 0
    out = capsys.readouterr()
    second = json.loads(out.out)
    assert "nothing to measure" in out.err and second["builds_measured"] == 0
    assert all(layer["cached"] for layer in second["layers"])
    assert [layer["schedule"] for layer in second["layers"]] == [layer["schedule"] for layer in first["layers"]]
    assert second["tuned"] == first["tuned"]
    assert json.loads(cache.read_text())["layers"] == entries

    assert main(["compile", str(MODEL), "--board", "mps2/an386", "--tuning", str(cache), "-o",
                 str(tmp_path / "lib"), "-q"]) == 0
    ops = json.loads((tmp_path / "lib" / "metadata.json").read_text())["ops"]
    assert [op["schedule"] for op in ops if "schedule" in op] == [entries[op["layer_key"]]["schedule"]
                                                                  for op in ops if "schedule" in op]

    # another flash limit: chosen again from the file's counts, nothing measured
    capsys.readouterr()
    assert main(["tune", str(MODEL), "--board", "mps2/an386", "--cache", str(cache), "--json",
                 "--flash-per-instruction", "0"]) == 0
    third = json.loads(capsys.readouterr().out)
    assert third["builds_measured"] == 0 and third["flash_per_instruction"] == 0
    assert all(layer["extra_flash_bytes"][f"{layer['schedule']['block']}/{layer['schedule']['weights']}"] <= 0
               for layer in third["layers"])
    assert any("+" in reason and "B flash" in reason for layer in third["layers"]
               for reason in layer["passed_over"].values())
    assert third["tuned"]["flash_bytes"] < first["tuned"]["flash_bytes"]
    rechosen = json.loads(cache.read_text())["layers"]
    assert all(entry["flash_per_instruction"] == 0 and entry["instructions"] == entries[key]["instructions"]
               for key, entry in rechosen.items())
    assert [rechosen[layer["key"]]["schedule"] for layer in third["layers"]] == [layer["schedule"]
                                                                                 for layer in third["layers"]]


@pytest.mark.parametrize("content", ["{not json", '{"format": "other", "layers": {}}',
                                     '{"format": "mtk-tuning/1", "layers": {"k": {"schedule": "2x2"}}}',
                                     '{"format": "mtk-tuning/1", "layers": {"k": {"schedule": {"block": "2x2", '
                                     '"weights": "int8"}, "instructions": [1]}}}'])
def test_a_bad_tuning_file_is_a_clear_error(content, tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    assert main(["compile", str(MODEL), "--tuning", str(bad), "-o", str(tmp_path / "lib")]) == 2
    assert str(bad) in capsys.readouterr().err
    assert main(["run", str(MODEL), "--tuning", str(tmp_path / "missing.json")]) == 2
    assert "missing.json does not exist" in capsys.readouterr().err


def test_a_schedule_the_layer_cannot_take_is_refused(tmp_path):
    layer = tunable_layers(prepare_ops(read_model(MODEL), get_cpu("cortex-m3")))[0]
    tuning = Tuning({layer.key: GemmVariant("2x2", "int16")}, "shared.json")   # int16 weights need DSP
    with pytest.raises(MtkError, match="shared.json: schedule 2x2/int16 is not one op 0 can take"):
        compile_model(MODEL, tmp_path / "lib", cpu="cortex-m3", tuning=tuning)


def test_counts_within_a_tick_are_equal_and_the_first_wins():
    layer = tunable_layers(prepare_ops(read_model(MODEL), get_cpu("cortex-m4")))[0]
    labels = [s.label for s in layer.variants]   # 2x2/biased (the default), 2x2/int16, 1x4/biased, 1x4/int16
    inf = float("inf")
    assert choose(layer, dict(zip(labels, [1000, 960, 990, 1000])), 40, inf)[0] == layer.variants[0]
    assert choose(layer, dict(zip(labels, [1000, 960, 920, 910])), 40, inf)[0] == layer.variants[2]
    variant, passed_over = choose(layer, {labels[0]: 1000, labels[3]: 900}, 40, inf)
    assert variant == layer.variants[3]
    assert passed_over[labels[1]] == passed_over[labels[2]] == "not measured: the build did not fit the board"


def test_more_flash_is_chosen_only_for_enough_instructions_saved():
    layer = tunable_layers(prepare_ops(read_model(MODEL), get_cpu("cortex-m4")))[0]
    labels = [s.label for s in layer.variants]   # 2x2/biased (the default), 2x2/int16, 1x4/biased, 1x4/int16
    extra = layer.extra_flash
    assert extra[labels[0]] == extra[labels[2]] == 0 and extra[labels[1]] == extra[labels[3]] > 0
    per_100 = extra[labels[1]] / 100   # bytes per instruction that let int16 weights save 100 instructions
    variant, passed_over = choose(layer, dict(zip(labels, [10_000, 9_901, 9_950, 9_900])), 0, per_100)
    assert variant == layer.variants[3]
    assert passed_over == {labels[0]: "+100 instructions", labels[2]: "+50 instructions",
                           labels[1]: f"+{extra[labels[1]]:,} B flash for 99 instructions saved "
                                      f"(limit {per_100:g} B per instruction)"}
    assert choose(layer, dict(zip(labels, [10_000, 9_901, 9_950, 9_901])), 0, per_100)[0] == layer.variants[2]
    assert choose(layer, dict(zip(labels, [10_000, 9_000, 9_950, 9_000])), 0, 0)[0] == layer.variants[2]
    assert choose(layer, dict(zip(labels, [10_000, 10_000, 10_000, 10_100])), 0, float("inf"))[0] == layer.variants[0]


def test_flash_is_priced_against_the_leanest_schedule_not_the_default():
    """Cortex-M3 fully connected, 10 channels: the default 1x8 blocks pad the weights to 16 channels,
    1x4 int8 ones to 12 (the leanest), paired 1x4 ones take twice that; each schedule's extra flash
    is priced against the leanest's."""
    layer = [l for l in tunable_layers(prepare_ops(read_model(MODEL), get_cpu("cortex-m3"))) if l.op.type == "FULLY_CONNECTED"][1]
    eight, paired, lean = layer.variants
    assert (eight.label, paired.label, lean.label) == ("1x8/int8", "1x4/pairs", "1x4/int8") and layer.leanest == lean
    extra = layer.extra_flash
    assert extra[lean.label] == 0 < extra[eight.label] < extra[paired.label]
    counts = {s.label: 10_000 - extra[s.label] // 2 for s in layer.variants}   # 2 B per instruction saved
    assert choose(layer, counts, 0, 1.0)[0] == lean
    assert choose(layer, counts, 0, 2.0)[0] == paired
    counts[eight.label] = 10_000 - extra[eight.label]   # 1 B per instruction saved
    assert choose(layer, counts, 0, 1.0)[0] == eight


@pytest.mark.parametrize("channels, depth", [(10, 27), (64, 64), (3, 5)])
def test_packed_weight_bytes_are_the_packed_arrays(channels, depth):
    w = np.arange(channels * depth, dtype=np.int8).reshape(channels, depth)
    for variant, group, packed in [(GemmVariant("2x2", "int8"), 4, pack_weights(w, 2)),
                                    (GemmVariant("1x4", "int8"), 16, pack_weights(w, 4, 16)),
                                    (GemmVariant("1x8", "int8"), 4, pack_weights(w, 8)),
                                    (GemmVariant("2x2", "int16"), 4, pack_weights_int16(w, 2)),
                                    (GemmVariant("1x4", "pairs"), 4, pack_weight_pairs(w))]:
        assert packed.nbytes == packed_weight_bytes(channels, depth, variant, group)


@pytest.mark.qemu
@pytest.mark.slow
def test_an_interrupted_tune_keeps_its_counts_and_resumes(tmp_path, monkeypatch, capsys):
    """Ctrl-C after the first candidate build: the file holds the counts measured so far (the
    layers keep their default schedule), and tuning again measures only the remaining candidates."""
    cache = tmp_path / "tuning.json"
    real_run, runs = autotune._run, []

    def interrupted_after_one_candidate(*args):
        runs.append(args)
        if len(runs) == 3:   # the untuned build, one candidate, then Ctrl-C
            raise KeyboardInterrupt
        return real_run(*args)

    monkeypatch.setattr(autotune, "_run", interrupted_after_one_candidate)
    assert main(["tune", str(MODEL), "--board", "mps2/an386", "--cache", str(cache), "-q"]) == 130
    partial = json.loads(cache.read_text())["layers"]
    defaults = {layer.key: asdict(layer.variants[0]) for layer in tunable_layers(prepare_ops(read_model(MODEL), get_cpu("cortex-m4")))}
    assert partial and all(entry["schedule"] == defaults[key] for key, entry in partial.items())
    assert max(len(entry["instructions"]) for entry in partial.values()) == 2   # default + the first candidate

    monkeypatch.setattr(autotune, "_run", real_run)
    assert main(["tune", str(MODEL), "--board", "mps2/an386", "--cache", str(cache), "--json", "-q"]) == 0
    resumed = json.loads(capsys.readouterr().out)
    assert resumed["builds_measured"] == 2 and resumed["tuned"]["instructions"] < resumed["untuned"]["instructions"]
    assert all(entry["instructions"].items() >= partial[key]["instructions"].items()
               for key, entry in json.loads(cache.read_text())["layers"].items())
