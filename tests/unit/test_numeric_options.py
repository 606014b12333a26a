"""Numbers on the command line are checked while it is parsed (exit 2, before any work), and the labels of
`--input` against the model before any build: never written into a prj.conf, never found by the target."""

from __future__ import annotations

import re

import numpy as np
import pytest

from mtk.argtypes import MAX_TIMED_RUNS
from mtk.cli import main
from mtk.errors import MtkError
from mtk.platforms import ProjectOptions

from checkout import REPO

INT8 = str(REPO / "models" / "digits_cnn_int8.tflite")
FLOAT = str(REPO / "models" / "digits_cnn_float.tflite")
CALIB = str(REPO / "models" / "digits_calib.npz")

BAD = [
    (["project", INT8, "--board", "mps2/an386", "-o", "{tmp}/app", "--stack-bytes", "-1"], "stack bytes must be"),
    (["project", INT8, "--board", "mps2/an386", "-o", "{tmp}/app", "--stack-bytes", "99999999999"], "stack bytes must be"),
    (["project", INT8, "--board", "mps2/an386", "-o", "{tmp}/app", "--stack-bytes", "1e3"], "not a whole number"),
    (["run", INT8, "-n", "33"], "inferences must be 1 to 32"),
    (["run", INT8, "-n", "0"], "inferences must be 1 to 32"),
    (["bench", INT8, "-n", "-5"], "inferences must be 1 to 32"),
    (["bench", INT8, "--lab-timeout", "nan"], "seconds must be"),
    (["bench", INT8, "--lab-timeout", "-1"], "seconds must be"),
    (["quantize", FLOAT, "--calib", CALIB, "--mean", "inf"], "mean must be"),
    (["quantize", FLOAT, "--calib", CALIB, "--scale", "1e39"], "scale must be"),
    (["tune", INT8, "--flash-per-instruction", "-1"], "bytes must be"),
    (["tune", INT8, "--flash-per-instruction", "nan"], "bytes must be"),
]


@pytest.mark.parametrize("argv, message", BAD, ids=[" ".join(a[:1] + a[-2:]) for a, _ in BAD])
def test_numbers_out_of_range_are_refused_while_parsing(argv, message, tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        main([a.format(tmp=tmp_path) for a in argv])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and message in err and "Traceback" not in err
    assert not (tmp_path / "app").exists()


def test_the_timed_runs_limit_is_the_firmware_s():
    header = (REPO / "firmware" / "mtk_core.h").read_text()
    assert int(re.search(r"#define MTK_STATS_MAX (\d+)", header).group(1)) == MAX_TIMED_RUNS


def test_the_api_refuses_a_stack_out_of_range():
    with pytest.raises(MtkError, match="stack of -1 bytes"):
        ProjectOptions(stack_bytes=-1)


def test_labels_out_of_range_are_refused_before_any_build(tmp_path, capsys):
    data = np.load(REPO / "models" / "digits_test.npz")
    x, y = data["x"][:4], data["y"][:4].copy()
    y[2] = 10   # the digits CNN has 10 classes: 0..9
    np.savez(tmp_path / "bad.npz", x=x, y=y)
    code = main(["run", INT8, "--input", str(tmp_path / "bad.npz"), "--build-dir", str(tmp_path / "work")])
    err = capsys.readouterr().err
    assert code == 2 and "labels `y` range over" in err and "10 classes" in err
    assert not (tmp_path / "work" / "compiled").exists() and "lowering" not in err
    np.savez(tmp_path / "short.npz", x=x, y=y[:3] % 10)
    assert main(["run", INT8, "--input", str(tmp_path / "short.npz"), "--build-dir", str(tmp_path / "work")]) == 2
    assert "3 labels `y` for 4 samples" in capsys.readouterr().err


def test_labels_are_checked_before_a_float_model_is_quantized(tmp_path, capsys):
    data = np.load(REPO / "models" / "digits_test.npz")
    np.savez(tmp_path / "bad.npz", x=data["x"][:4], y=np.array([0, 1, 2, 11]))
    code = main(["run", FLOAT, "--calib", CALIB, "--input", str(tmp_path / "bad.npz")])
    err = capsys.readouterr().err
    assert code == 2 and "labels `y` range over 0..11" in err and "quantizing" not in err
