"""`mtk run`, `mtk validate`, `mtk bench` end to end in QEMU: the shared MLPerf Tiny models bit-exact
against tflite-micro on the QEMU boards, repeatable instruction counts, the JSON contract, and
faults (float model without calibration data, a model too big for the board, missing tools)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from mtk.boards import get_board
from mtk.cli import main
from mtk.commands.validate import compare
from mtk.errors import ModelError, ToolMissing
from mtk.pipeline import run_model
from mtk.runoptions import RunOptions
from mtk.samples import load_samples
from mtk.runners import get_runner
from mtk.zephyr_env import find_zephyr

from checkout import REPO, shared_models
from harness import GEMM_MODELS, long_fc_model

pytestmark = pytest.mark.qemu

MODELS_DIR = REPO / "models"
BOARDS = ["mps2/an386", "qemu_cortex_m3", "mps2/an500", "mps3/corstone300/an547", "mps2/an505", "mps2/an521/cpu0",
          "mps3/an524"]


def fits(model: Path, board: str) -> bool:
    """qemu_cortex_m3 (LM3S6965: 256 KB flash, 64 KB RAM) cannot hold the anomaly detector's weights."""
    return not (board == "qemu_cortex_m3" and model.stem == "ad_fc_int8")


@pytest.mark.parametrize("board", BOARDS)
@pytest.mark.parametrize("model", shared_models(), ids=lambda p: p.stem)
def test_shared_models_bit_exact_on_target(model, board):
    if not fits(model, board):
        pytest.skip(f"{model.name} does not fit {board}")
    result = run_model(model, RunOptions(get_board(board), runs=2, random_samples=3))
    report = compare(result)
    assert len(report) == 3
    assert [r["mismatches"] for r in report] == [0, 0, 0]
    assert result.unit == "instructions"
    # the timed runs compute on what the run before left in the input's place (the arena): a kernel whose path
    # depends on the data (the M3's and M55's KWS) moves a count by tens of instructions in millions
    assert 0 < result.per_inference.min <= result.per_inference.max <= result.per_inference.min * 1.0001


@pytest.mark.parametrize("board", ["bbc_microbit", "qemu_cortex_m0"])
def test_the_digits_cnn_is_bit_exact_on_the_cortex_m0_boards(board):
    """The shared models need more than the micro:bit's 16 KB of RAM; the digits CNN fits (ARMv6-M's kernels)."""
    result = run_model(MODELS_DIR / "digits_cnn_int8.tflite", RunOptions(get_board(board), runs=1, random_samples=3))
    assert [r["mismatches"] for r in compare(result)] == [0, 0, 0]


@pytest.mark.parametrize("board", ["mps2/an521/cpu0", "qemu_cortex_m0"])
def test_zephyr_s_qemu_cortex_m33_and_m0_run_the_digits_cnn_bit_exact(board):
    """Through Zephyr (the workspace ZEPHYR_BASE names; skipped without one): the SSE-200's CPU0 built
    -mcpu=cortex-m33+nodsp by Zephyr, and the nRF51 counted on its TIMER0 at 1 MHz."""
    try:
        find_zephyr()
    except ToolMissing as err:
        pytest.skip(err.message)
    result = run_model(MODELS_DIR / "digits_cnn_int8.tflite",
                       RunOptions(get_board(board), platform="zephyr", runs=1, random_samples=2))
    assert [r["mismatches"] for r in compare(result)] == [0, 0]
    assert result.unit == "instructions"


def test_long_fully_connected_is_bit_exact_on_target(tmp_path):
    """4000 -> 4, its row packed 256 values at a time (test_ops_conv): bit-exact in QEMU too."""
    model = tmp_path / "fc4000.tflite"
    model.write_bytes(long_fc_model())
    result = run_model(model, RunOptions(get_board("mps2/an386"), runs=1, random_samples=2))
    assert [r["mismatches"] for r in compare(result)] == [0, 0]


@pytest.mark.parametrize("board", ["mps2/an386", "mps2/an385"])
def test_im2col_taps_packed_a_kernel_row_at_a_time_are_bit_exact_on_target(board, tmp_path):
    """A 3×3 dilated conv over 16 channels whose whole-window scratch would be its arena: its taps are
    packed one kernel row (48 values) at a time with int32 partial sums (int16 pairs on the M4, row
    pairs in int32 on the M3): bit-exact in QEMU. (Helium's fused GEMM requantizes inside its
    micro-kernel and is not chunked.)"""
    model = tmp_path / "conv.tflite"
    model.write_bytes(GEMM_MODELS["conv-taps-dilated"]())
    result = run_model(model, RunOptions(get_board(board), runs=1, random_samples=2, build_dir=tmp_path / "b"))
    assert [r["mismatches"] for r in compare(result)] == [0, 0]
    metadata = json.loads((tmp_path / "b" / "compiled" / "metadata.json").read_text())
    assert metadata["ops"][0]["schedule"]["chunk"] == 48


def test_model_too_big_is_refused_before_building(tmp_path):
    model = next(p for p in shared_models() if p.stem == "ad_fc_int8")
    with pytest.raises(ModelError, match=r"does not fit qemu_cortex_m3.*\d"):
        run_model(model, RunOptions(get_board("qemu_cortex_m3"), build_dir=tmp_path / "b"))
    assert not (tmp_path / "b" / "project").exists()


def test_instruction_counts_repeat_and_json_contract(capsys):
    model = next(p for p in shared_models() if p.stem == "kws_dscnn_int8")
    runs = []
    for _ in range(2):
        assert main(["run", str(model), "--board", "mps2/an386", "-n", "3", "--json", "--profile"]) == 0
        runs.append(json.loads(capsys.readouterr().out))
    first, second = runs
    assert first["per_inference"] == second["per_inference"] and first["layers"] == second["layers"]
    for key in ("board", "model", "unit", "per_inference", "macs", "arena_bytes", "ram_bytes", "flash_bytes",
                "code_bytes", "outputs"):
        assert key in first
    assert first["unit"] == "instructions" and first["macs"] == 2656768
    assert (first["platform"], first["tuning"]) == ("baremetal", None)
    assert first["code_bytes"] == first["flash_bytes"] - first["constant_bytes"] > 0
    assert len(first["outputs"]) == 1 and len(first["outputs"][0]) == 12
    profiling = first["profiling_build"]   # the layers' counts come from a profiling build run beside the plain one
    assert sum(layer["units"] for layer in first["layers"]) <= profiling["per_inference_median"]
    assert first["per_inference"]["median"] < profiling["per_inference_median"]
    assert first["flash_bytes"] < profiling["flash_bytes"]


def test_float_model_is_quantized_on_the_way_and_inputs_from_npz(tmp_path, capsys):
    """The README's main job: the shipped float model, its calibration data, real test digits."""
    x = np.load(MODELS_DIR / "digits_test.npz")["x"][:4]
    np.save(tmp_path / "digits.npy", x)
    code = main(["validate", str(MODELS_DIR / "digits_cnn_float.tflite"), "--calib",
                 str(MODELS_DIR / "digits_calib.npz"), "--input", str(tmp_path / "digits.npy"), "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0 and report["bit_exact"] and len(report["samples"]) == 4 and report["platform"] == "baremetal"


def test_float_model_without_calibration_data_is_a_clear_error(capsys):
    code = main(["run", str(MODELS_DIR / "digits_cnn_float.tflite")])
    err = capsys.readouterr().err
    assert code == 2 and "float model" in err and "--calib" in err and "Traceback" not in err


def test_bench_table_json_and_plot(tmp_path, capsys):
    model = next(p for p in shared_models() if p.stem == "ad_fc_int8")
    png = tmp_path / "bench.png"
    code = main(["bench", str(model), str(MODELS_DIR / "digits_cnn_int8.tflite"), "--board", "mps2/an386",
                 "--board", "qemu_cortex_m3", "-n", "1", "--json", "--plot", str(png), "--profile"])
    results = json.loads(capsys.readouterr().out)
    assert code == 4   # ad_fc on qemu_cortex_m3 does not fit: reported, the others ran
    failed = [r for r in results if "error" in r]
    assert [(r["model"], r["board"]) for r in failed] == [("ad_fc_int8.tflite", "qemu_cortex_m3")]
    assert len(results) - len(failed) == 3
    assert all(layer["macs"] >= 0 for r in results if "error" not in r for layer in r["layers"])
    with Image.open(png) as image:   # totals, memory, a row of per-layer charts per model: 4 rows
        assert image.format == "PNG" and image.size[1] >= 4 * 4 * 100
        assert len(image.convert("RGB").getcolors(1 << 16) or []) > 20   # not blank


def test_missing_qemu_names_the_debian_package(tmp_path, monkeypatch):
    elf = tmp_path / "firmware.elf"
    elf.write_bytes(b"\x7fELF")
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ToolMissing, match=r"(?s)qemu-system-arm.*apt-get install qemu-system-arm"):
        get_runner(get_board("mps2/an386")).start(elf)


def test_samples_with_and_without_batch_dimension(tmp_path):
    model = MODELS_DIR / "digits_cnn_int8.tflite"
    one = np.arange(64, dtype=np.int8).reshape(8, 8, 1)
    np.save(tmp_path / "one.npy", one)
    np.save(tmp_path / "three.npy", np.stack([one] * 3))
    assert len(load_samples(tmp_path / "one.npy", model)) == 1
    samples = load_samples(tmp_path / "three.npy", model)
    assert len(samples) == 3 and samples[0][0].shape == (1, 8, 8, 1) and samples[0][0].dtype == np.int8


def test_bench_over_a_lab_map_reports_each_failing_board(tmp_path, capsys):
    """No board is attached here: the known one fails (no Zephyr, or no probe) and is reported; the
    board mtk does not know is skipped with a message; nothing raises."""
    lab = tmp_path / "map.yaml"
    lab.write_text("- {connected: true, id: '0001', platform: nucleo_f746zg, product: STM32 STLink, runner: openocd,"
                   " serial: /dev/ttyNONE}\n"
                   "- {connected: true, id: '0002', platform: no_such_board, product: J-Link, runner: jlink}\n"
                   "- {connected: false, id: '0003', platform: nucleo_l4r5zi, product: STM32 STLink, runner: openocd}\n")
    code = main(["bench", str(MODELS_DIR / "digits_cnn_int8.tflite"), "--lab", str(lab), "--json"])
    captured = capsys.readouterr()
    results = json.loads(captured.out)
    assert code == 4
    assert [(r["board"], "error" in r) for r in results] == [("nucleo_f746zg", True)]
    assert "no_such_board" in captured.err


def test_run_parses_the_model_once_and_checks_its_fit_once_a_build(monkeypatch, capsys):
    """The graph read from the .tflite flows through every stage of `mtk run` (labels, samples, compile,
    evaluation, --profile's second build); the fit is checked when compiling, not again when rendering."""
    import sys

    from mtk import budget, reader

    model = MODELS_DIR / "digits_cnn_int8.tflite"
    parsed, checked = [], []
    parse, check_fits = reader._parse, budget.check_fits
    monkeypatch.setattr(reader, "_parse", lambda buf, path: parsed.append(path) or parse(buf, path))
    for module in [m for m in sys.modules.values() if getattr(m, "check_fits", None) is check_fits]:
        monkeypatch.setattr(module, "check_fits", lambda compiled, board, *rest:
                            checked.append(board.name) or check_fits(compiled, board, *rest))
    assert main(["run", str(model), "--input", str(MODELS_DIR / "digits_test.npz"), "-n", "1", "--profile",
                 "--no-cache"]) == 0
    assert "accuracy" in capsys.readouterr().out
    assert parsed == [model]
    assert checked == ["mps2/an386", "mps2/an386"]   # the plain build's and the profiling build's
