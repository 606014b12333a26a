"""No output of any command replaces one of its inputs, with or without --force, however the output
is spelled: the same name, `..`, a symlink to the input, a hard link of it, a folder holding it.
All refused before any work (exit 2, one line), the inputs byte for byte as they were."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import pytest

from mtk import fsutil
from mtk.cli import main

from checkout import REPO

MODELS = REPO / "models"


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def work(tmp_path, monkeypatch) -> Path:
    for name in ("digits_cnn_int8.tflite", "digits_cnn_float.tflite", "digits_calib.npz", "digits_test.npz"):
        shutil.copy(MODELS / name, tmp_path / name)
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path)
    return tmp_path


SPELLINGS = {
    "same name": lambda work, name: name,
    "dot-dot": lambda work, name: f"sub/../{name}",
    "absolute": lambda work, name: str(work / name),
    "symlink": lambda work, name: _link(work, name, os.symlink, "alias"),
    "hard link": lambda work, name: _link(work, name, os.link, "hardlink"),
}


def _link(work: Path, name: str, make, link: str) -> str:
    make(work / name, work / link)
    return link


INT8, FLOAT, CALIB, TEST = "digits_cnn_int8.tflite", "digits_cnn_float.tflite", "digits_calib.npz", "digits_test.npz"
COMMANDS = {   # command line with {out} for the output, and the input the output aliases
    "compile --format mlf": (["compile", INT8, "--format", "mlf", "-o", "{out}", "--force"], INT8),
    "compile --plot-memory": (["compile", INT8, "-o", "out", "--plot-memory", "{out}", "--force"], INT8),
    "compile --plot-memory onto --tuning": (["compile", INT8, "-o", "out", "--tuning", TEST,
                                             "--plot-memory", "{out}"], TEST),
    "quantize -o onto --calib": (["quantize", FLOAT, "--calib", CALIB, "-o", "{out}", "--force"], CALIB),
    "quantize -o onto --eval": (["quantize", FLOAT, "--calib", CALIB, "--eval", TEST, "-o", "{out}"], TEST),
    "quantize -o onto the model": (["quantize", FLOAT, "--calib", CALIB, "-o", "{out}", "--force"], FLOAT),
    "bench --plot": (["bench", INT8, "--plot", "{out}"], INT8),
    "tune --tuning onto the model": (["tune", INT8, "--tuning", "{out}"], INT8),
    "tune --tuning onto --calib": (["tune", FLOAT, "--calib", CALIB, "--tuning", "{out}"], CALIB),
    "project -o onto the model": (["project", INT8, "--board", "mps2/an386", "-o", "{out}", "--force"], INT8),
}


@pytest.mark.parametrize("spelling", sorted(SPELLINGS))
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_an_output_onto_an_input_is_refused_before_any_work(command, spelling, work, capsys):
    argv, victim = COMMANDS[command]
    before = {p.name: digest(p) for p in work.iterdir() if p.is_file()}
    out = SPELLINGS[spelling](work, victim)
    code = main([a.format(out=out) for a in argv])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "an input of this command" in err and len(err.strip().splitlines()) == 2   # the line and its hint
    assert "reading" not in err and "quantizing" not in err
    assert {p.name: digest(p) for p in work.iterdir() if p.is_file() and p.name in before} == before


def test_quantize_default_output_is_not_the_calibration_data(work, capsys):
    (work / "m.tflite").write_bytes((work / FLOAT).read_bytes())
    os.replace(work / CALIB, work / "m_int8.tflite")   # the default output path of m.tflite
    before = digest(work / "m_int8.tflite")
    code = main(["quantize", "m.tflite", "--calib", "m_int8.tflite", "--force"])
    assert code == 2 and "an input of this command" in capsys.readouterr().err
    assert digest(work / "m_int8.tflite") == before


def test_force_into_a_folder_holding_an_input_through_a_symlink(work, capsys):
    os.symlink(work, work / "sub" / "up")
    code = main(["compile", INT8, "-o", "sub/up", "--force"])
    assert code == 2 and "--force would delete" in capsys.readouterr().err
    assert (work / INT8).is_file()


def test_an_input_inside_the_output_is_found_by_the_api_too(work):
    from mtk.compiler import compile_model
    from mtk.errors import MtkError
    fsutil.set_inputs([])
    (work / "out").mkdir()
    shutil.copy(work / INT8, work / "out" / "m.tflite")
    with pytest.raises(MtkError, match="an input of this command"):
        compile_model(work / "out" / "m.tflite", work / "out", force=True)
    assert (work / "out" / "m.tflite").is_file()


def test_names_too_long_are_refused_in_one_line(work, capsys):
    code = main(["compile", INT8, "-o", "x" * 300])
    err = capsys.readouterr().err
    assert code == 2 and "a name of 300 bytes (at most 255)" in err


def test_a_new_output_beside_the_inputs_is_fine(work):
    fsutil.set_inputs([work / INT8, work / "sub"])
    fsutil.check_not_input(work / "other.tar")
    fsutil.check_not_input(work / "sub" / "new.png")   # inside an input folder, replacing nothing
    with pytest.raises(Exception, match="holds"):
        fsutil.check_not_input(work)


@pytest.mark.parametrize("model", ["missing.tflite", "sub", "/dev/zero", "fifo"])
def test_bench_refuses_a_model_it_cannot_read_as_bad_input(model, work, capsys):
    os.mkfifo(work / "fifo")
    assert main(["bench", INT8, model]) == 2
    assert "model" in capsys.readouterr().err


@pytest.mark.parametrize("command", [["run", INT8], ["bench", INT8], ["serve", INT8]])
@pytest.mark.parametrize("build_dir", [INT8, "sub/../" + CALIB])
def test_a_build_dir_that_is_a_file_is_refused_while_parsing(command, build_dir, work, capsys):
    before = digest(work / INT8)
    with pytest.raises(SystemExit) as exit_:
        main([*command, "--build-dir", build_dir])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.strip().splitlines()[-1].endswith(f"argument --build-dir: {build_dir} is a file, not a folder")
    assert err.startswith("usage:") and "Traceback" not in err
    assert digest(work / INT8) == before
