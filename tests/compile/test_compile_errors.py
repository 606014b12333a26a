"""Bad input to `mtk compile`: one clear message, a meaningful exit code, nothing written."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from mtk.cli import main
from mtk.tflite_builder import ModelBuilder

from checkout import REPO


def _int8_fc(builder: ModelBuilder, x: int, units: int, name: str) -> int:
    depth = 8
    w = builder.const(f"{name}_w", np.ones((units, depth), np.int8), scale=np.array([0.1]), zero_point=np.array([0]))
    y = builder.tensor(name, (1, units), "int8", scale=0.2, zero_point=0)
    builder.op("FULLY_CONNECTED", [x, w, None], [y])
    return y


def _run(capsys, *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return code, err


def _write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def test_not_a_tflite_file(tmp_path, capsys):
    model = _write(tmp_path, "notes.tflite", b"hello, this is text\n" * 10)
    code, err = _run(capsys, "compile", str(model), "-o", str(tmp_path / "out"))
    assert code == 2 and "not a TFLite model" in err and str(model) in err
    assert not (tmp_path / "out").exists()


def test_truncated_flatbuffer(tmp_path, capsys, shared_model_paths):
    data = shared_model_paths[0].read_bytes()
    model = _write(tmp_path, "cut.tflite", data[: len(data) // 3])
    code, err = _run(capsys, "compile", str(model), "-o", str(tmp_path / "out"))
    assert code == 2 and "corrupt or truncated" in err
    assert not (tmp_path / "out").exists()


def test_missing_file(tmp_path, capsys):
    code, err = _run(capsys, "compile", str(tmp_path / "nope.tflite"), "-o", str(tmp_path / "out"))
    assert code == 2 and "cannot read model" in err


def test_float_model_says_quantize_first(tmp_path, capsys):
    b = ModelBuilder()
    x = b.tensor("x", (1, 4), "float32")
    w = b.const("w", np.ones((2, 4), np.float32))
    y = b.tensor("y", (1, 2), "float32")
    b.op("FULLY_CONNECTED", [x, w, None], [y])
    b.inputs([x]); b.outputs([y])
    code, err = _run(capsys, "compile", str(_write(tmp_path, "f.tflite", b.build())), "-o", str(tmp_path / "out"))
    assert code == 2 and "float model" in err and "mtk quantize" in err


def test_int16_op_is_named_with_its_dtype(tmp_path, capsys):
    b = ModelBuilder()
    x = b.tensor("x", (1, 4), "int16", scale=0.1, zero_point=0)
    y = b.tensor("y", (1, 4), "int16", scale=0.1, zero_point=0)
    b.op("HARD_SWISH", [x], [y])
    b.inputs([x]); b.outputs([y])
    code, err = _run(capsys, "compile", str(_write(tmp_path, "i16.tflite", b.build())), "-o", str(tmp_path / "out"))
    assert code == 2 and "op 0 (HARD_SWISH): int16 -> int16" in err


def test_all_unsupported_ops_listed_at_once(tmp_path, capsys):
    """Every op in the way, with its index, type and element types; int16 tensors elsewhere in the
    model do not hide them behind a whole-model 'int16 activations' refusal."""
    b = ModelBuilder()
    x = b.tensor("x", (1, 8), "int8", scale=0.1, zero_point=0)
    h = b.tensor("h", (1, 8), "int8", scale=0.1, zero_point=0)
    wide = b.tensor("wide", (1, 8), "int16", scale=0.01, zero_point=0)
    relu = b.tensor("relu", (1, 8), "int16", scale=0.01, zero_point=0)
    y = b.tensor("y", (1, 8), "int16", scale=0.01, zero_point=0)
    b.op("FLOOR", [x], [h])
    b.op("QUANTIZE", [h], [wide])
    b.op("HARD_SWISH", [wide], [relu])
    b.op("SQUARE", [relu], [y])
    b.inputs([x]); b.outputs([y])
    code, err = _run(capsys, "compile", str(_write(tmp_path, "u.tflite", b.build())), "-o", str(tmp_path / "out"))
    assert code == 2 and "3 unsupported" in err
    assert "op 0: FLOOR (int8) is not supported" in err
    assert "op 2 (HARD_SWISH): int16 -> int16" in err
    assert "op 3: SQUARE (int16) is not supported" in err
    assert "int16 activations" not in err
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_model_too_big_for_board(tmp_path, capsys, shared_model_paths):
    ad = next(p for p in shared_model_paths if p.name.startswith("ad_"))
    code, err = _run(capsys, "compile", str(ad), "--board", "qemu_cortex_m3", "-o", str(tmp_path / "out"))
    assert code == 2 and "flash" in err and "qemu_cortex_m3" in err
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_output_folder_with_content_needs_force(tmp_path, capsys):
    b = ModelBuilder()
    x = b.tensor("x", (1, 8), "int8", scale=0.1, zero_point=0)
    y = _int8_fc(b, x, 4, "y")
    b.inputs([x]); b.outputs([y])
    model = _write(tmp_path, "m.tflite", b.build())
    out = tmp_path / "out"
    out.mkdir()
    (out / "mine.txt").write_text("keep me")
    code, err = _run(capsys, "compile", str(model), "-o", str(out))
    assert code == 2 and "--force" in err
    assert (out / "mine.txt").read_text() == "keep me"
    assert _run(capsys, "compile", str(model), "-o", str(out), "--force")[0] == 0
    assert not (out / "mine.txt").exists() and (out / "metadata.json").exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


@pytest.mark.parametrize("name", ["/dev/zero", "fifo"])
def test_a_model_path_that_is_not_a_regular_file(name, tmp_path, capsys):
    path = Path(name) if name.startswith("/") else tmp_path / name
    if not path.is_absolute() or not path.exists():
        os.mkfifo(path)
    code, err = _run(capsys, "compile", str(path), "-o", str(tmp_path / "out"))
    assert code == 2 and "not a regular file" in err, err


LONG = "a" * 300


@pytest.mark.parametrize("argv", [
    ["compile", "{model}", "--module-name", LONG, "-o", "{tmp}/out"],
    ["compile", "{model}", "--tuning", f"{LONG}.json", "-o", "{tmp}/out"],
    ["compile", "{model}", "--board", LONG, "-o", "{tmp}/out"],
    ["compile", "{model}", "--cpu", LONG, "-o", "{tmp}/out"],
    ["quantize", f"{{tmp}}/{LONG}.tflite", "--calib", "{tmp}/c.npz"],
])
def test_a_name_over_255_bytes_is_one_line_not_an_internal_error(argv, tmp_path, capsys, shared_model_paths):
    model = next(p for p in shared_model_paths if "kws" in p.name)
    try:
        code, err = _run(capsys, *(a.format(model=model, tmp=tmp_path) for a in argv))
    except SystemExit as exit:   # refused by argparse
        code, err = exit.code, capsys.readouterr().err
    assert code == 2 and "internal error" not in err and "Traceback" not in err, err
    assert len([line for line in err.splitlines() if "error" in line]) == 1, err


def test_a_module_name_too_long_for_a_file_name_is_refused(tmp_path, capsys):
    model = REPO / "models" / "digits_cnn_int8.tflite"
    assert main(["compile", str(model), "-o", str(tmp_path / "o"), "--module-name", "a" * 300]) == 2
    assert "--module-name of 300 characters: at most 64" in capsys.readouterr().err
