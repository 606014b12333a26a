"""`mtk tune` in QEMU: counts cached and repeatable, an interrupted tune resumed, depthwise and pooling tuned."""

from __future__ import annotations

import json

import numpy as np
import pytest

from mtk.autotune import candidate_tunings
from mtk import autotune
from mtk.boards import get_board
from mtk.cli import main
from mtk.ops import prepare_ops
from mtk.reader import read_model
from mtk.reference import run_reference_batch
from mtk.target import get_cpu
from mtk.tuning import tunable_layers

from checkout import REPO
from test_tune import depthwise_pool_model

MODEL = REPO / "models" / "digits_cnn_int8.tflite"
# Layers measured one at a time: the whole build of their choices may move code by a few cycles (0.02 % seen)
PLACEMENT = 1.001


@pytest.mark.qemu
def test_tuning_is_cached_and_repeatable(tmp_path, capsys):
    cache = tmp_path / "tuning.json"
    fewest = ["--flash-per-instruction", "inf"]   # the fully connected layers' int16 weights (+1 B flash per cycle)
    assert main(["tune", str(MODEL), "--board", "mps2/an386", "--tuning", str(cache), "--json", *fewest]) == 0
    first = json.loads(capsys.readouterr().out)
    entries = json.loads(cache.read_text())["boards"]["mps2/an386"]
    m4_layers = tunable_layers(prepare_ops(read_model(MODEL), get_cpu("cortex-m4")))
    assert first["builds_measured"] == max(len(layer.variants) for layer in m4_layers) - 1   # a variant of each
    assert not any(layer["cached"] for layer in first["layers"])
    assert set(entries) == {layer["key"] for layer in first["layers"]}
    assert all("cortex-m4" in key and "emulated_on" not in entry for key, entry in entries.items())
    assert (first["board"], first["emulated_on"], first["unit"]) == ("mps2/an386", None, "cycles (estimated)")
    # every layer takes its fewest-cycles schedule (the cycle model's estimate: no counter tick)
    for layer in first["layers"]:
        counts = layer["cycles"]
        chosen = "/".join(layer["schedule"].values())
        assert counts[chosen] == min(counts.values())
        assert set(layer["passed_over"]) == set(counts) - {chosen}
    assert first["tuned"]["cycles"] <= first["untuned"]["cycles"] * PLACEMENT

    assert main(["tune", str(MODEL), "--board", "mps2/an386", "--tuning", str(cache), "--json", *fewest]) == 0
    out = capsys.readouterr()
    second = json.loads(out.out)
    assert "nothing to measure" in out.err and second["builds_measured"] == 0
    assert all(layer["cached"] for layer in second["layers"])
    assert [layer["schedule"] for layer in second["layers"]] == [layer["schedule"] for layer in first["layers"]]
    assert second["tuned"] == first["tuned"]
    assert json.loads(cache.read_text())["boards"]["mps2/an386"] == entries

    assert main(["compile", str(MODEL), "--board", "mps2/an386", "--tuning", str(cache), "-o",
                 str(tmp_path / "lib"), "-q"]) == 0
    ops = json.loads((tmp_path / "lib" / "metadata.json").read_text())["ops"]
    assert [op["schedule"] for op in ops if "schedule" in op] == [entries[op["layer_key"]]["schedule"]
                                                                  for op in ops if "schedule" in op]

    # another flash limit: chosen again from the file's counts, nothing measured
    capsys.readouterr()
    assert main(["tune", str(MODEL), "--board", "mps2/an386", "--tuning", str(cache), "--json",
                 "--flash-per-instruction", "0"]) == 0
    third = json.loads(capsys.readouterr().out)
    assert third["builds_measured"] == 0 and third["flash_per_instruction"] == 0
    assert all(layer["extra_flash_bytes"]["/".join(layer["schedule"].values())] <= 0
               for layer in third["layers"])
    # a layer's extra flash is its constants' and its own code's: the whole firmware takes the least flash
    assert all(set(layer["code_bytes"]) == set(layer["cycles"]) for layer in third["layers"])
    assert third["tuned"]["flash_bytes"] < min(third["untuned"]["flash_bytes"], first["tuned"]["flash_bytes"])
    rechosen = json.loads(cache.read_text())["boards"]["mps2/an386"]
    assert all(entry["flash_per_instruction"] == 0 and entry["cycles"] == entries[key]["cycles"]
               for key, entry in rechosen.items())
    assert [rechosen[layer["key"]]["schedule"] for layer in third["layers"]] == [layer["schedule"]
                                                                                 for layer in third["layers"]]


@pytest.mark.qemu
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
    assert main(["tune", str(MODEL), "--board", "mps2/an386", "--tuning", str(cache), "-q"]) == 130
    partial = json.loads(cache.read_text())["boards"]["mps2/an386"]
    defaults = {layer.key: layer.variants[0].to_json() for layer in tunable_layers(prepare_ops(read_model(MODEL), get_cpu("cortex-m4")))}
    assert partial and all(entry["schedule"] == defaults[key] for key, entry in partial.items())
    assert max(len(entry["cycles"]) for entry in partial.values()) == 2   # default + the first candidate

    monkeypatch.setattr(autotune, "_run", real_run)
    assert main(["tune", str(MODEL), "--board", "mps2/an386", "--tuning", str(cache), "--json", "-q",
                 "--flash-per-instruction", "inf"]) == 0
    resumed = json.loads(capsys.readouterr().out)
    candidates = len(candidate_tunings(tunable_layers(prepare_ops(read_model(MODEL), get_cpu("cortex-m4")))))
    assert resumed["builds_measured"] == candidates - 1
    assert resumed["tuned"]["cycles"] <= resumed["untuned"]["cycles"] * PLACEMENT
    assert all(entry["cycles"].items() >= partial[key]["cycles"].items()
               for key, entry in json.loads(cache.read_text())["boards"]["mps2/an386"].items())


@pytest.mark.qemu
def test_depthwise_and_pooling_are_tuned_on_target(tmp_path):
    """Cortex-M55: one candidate build (the depthwise layer's c4 kernel, the pool's TVM loops) on two
    different inputs, bit-exact with the untuned build, which is tflite-micro's; a file choosing them
    compiles them, and metadata's `impl` names the kernels each variant calls."""
    model = tmp_path / "m.tflite"
    model.write_bytes(depthwise_pool_model())
    result = autotune.tune_model(model, get_board("mps3/corstone300/an547"), tmp_path / "tuning.json")
    assert result.builds_measured == 1 and len(result.untuned.inputs) == 2
    assert not np.array_equal(*(sample[0] for sample in result.untuned.inputs))
    assert [set(c.counts) for c in result.layers] == [{"mve-c16", "c4"}, {"mve", "tvm"}]
    for expected, got in zip(run_reference_batch(model.read_bytes(), result.untuned.inputs), result.untuned.outputs):
        assert all(np.array_equal(np.asarray(o).reshape(-1), np.asarray(w).reshape(-1)) for w, o in zip(expected, got))

    impl = {}
    for kernels in ({"dw": "mve-c16", "pool": "mve"}, {"dw": "c4", "pool": "tvm"}):
        entries = json.loads((tmp_path / "tuning.json").read_text())
        for c, kernel in zip(result.layers, kernels.values()):
            entries["boards"]["mps3/corstone300/an547"][c.key]["schedule"] = {"kernel": kernel}
        (tmp_path / "chosen.json").write_text(json.dumps(entries))
        out = tmp_path / kernels["dw"]
        assert main(["compile", str(model), "--board", "mps3/corstone300/an547", "--tuning",
                     str(tmp_path / "chosen.json"), "-o", str(out), "-q"]) == 0
        ops = json.loads((out / "metadata.json").read_text())["ops"]
        assert [op["schedule"] for op in ops] == [{"kernel": k} for k in kernels.values()]
        impl[kernels["dw"]] = [op["impl"] for op in ops]
    assert impl == {"mve-c16": ["tvm+c:mtk_depthwise_mve_s8", "tvm+c:mtk_pool_mve"],
                    "c4": ["tvm+c:mtk_dw_s8,mtk_dw_requant_mve_s8", "tvm"]}


@pytest.mark.qemu
def test_a_physical_board_is_tuned_by_its_estimated_cycles_in_its_cores_qemu(tmp_path, capsys):
    """--emulate: the builds run on mps2/an386 under the STM32L4R5's cycle model; the counts and choices are kept
    under nucleo_l4r5zi, taken by its builds and refused for the an386's."""
    model, cache = tmp_path / "m.tflite", tmp_path / "tuning.json"
    model.write_bytes(depthwise_pool_model())
    assert main(["tune", str(model), "--board", "nucleo_l4r5zi", "--emulate", "--tuning", str(cache), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert (result["board"], result["emulated_on"], result["unit"]) == ("nucleo_l4r5zi", "mps2/an386",
                                                                        "cycles (estimated)")
    entries = json.loads(cache.read_text())["boards"]
    assert list(entries) == ["nucleo_l4r5zi"]
    assert {key: entry["cycles"] for key, entry in entries["nucleo_l4r5zi"].items()} == {
        layer["key"]: layer["cycles"] for layer in result["layers"]}
    assert all(entry["emulated_on"] == "mps2/an386" for entry in entries["nucleo_l4r5zi"].values())

    assert main(["compile", str(model), "--board", "nucleo_l4r5zi", "--tuning", str(cache), "-o",
                 str(tmp_path / "l4r5"), "-q"]) == 0
    ops = json.loads((tmp_path / "l4r5" / "metadata.json").read_text())["ops"]
    assert [op["schedule"] for op in ops] == [layer["schedule"] for layer in result["layers"]]
    assert main(["compile", str(model), "--board", "mps2/an386", "--tuning", str(cache), "-o",
                 str(tmp_path / "an386"), "-q"]) == 2
    assert f"tuning file {cache} holds schedules measured for nucleo_l4r5zi, none for mps2/an386" in \
        capsys.readouterr().err
