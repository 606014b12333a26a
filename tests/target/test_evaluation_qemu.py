"""On-target accuracy and the float/TFLM comparison of `mtk run` and `mtk validate`: the shipped digits models
end to end in QEMU."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from mtk.cli import main

from checkout import REPO

MODELS_DIR = REPO / "models"

FLOAT_MODEL, INT8_MODEL = MODELS_DIR / "digits_cnn_float.tflite", MODELS_DIR / "digits_cnn_int8.tflite"

CALIB = MODELS_DIR / "digits_calib.npz"


@pytest.fixture(scope="module")
def labelled(tmp_path_factory) -> Path:
    """The first 12 test digits with their labels, as the shipped digits_test.npz holds them."""
    with np.load(MODELS_DIR / "digits_test.npz") as data:
        x, y = data["x"][:12], data["y"][:12]
    path = tmp_path_factory.mktemp("digits") / "digits12.npz"
    np.savez(path, x=x, y=y)
    return path


@pytest.mark.qemu
def test_run_float_model_reports_target_accuracy_and_stedgeai_comparison(labelled, capsys):
    code = main(["run", str(FLOAT_MODEL), "--calib", str(CALIB), "--input", str(labelled), "-n", "1", "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0
    evaluation = report["evaluation"]
    labels = np.load(labelled)["y"]
    predictions = np.array([np.argmax(out) for out in report["outputs"]])
    target, tflm, float_model = evaluation["accuracy"]
    assert (target["model"], tflm["model"], float_model["model"]) == ("target", "TFLM", "float model")
    assert target["samples"] == 12 and target["correct"] == int(np.sum(predictions == labels))
    assert target["correct"] == tflm["correct"] and float_model["top1"] >= 0.9
    assert [c["label"] for c in target["per_class"]] == list(range(10))
    assert sum(c["samples"] for c in target["per_class"]) == 12
    assert sum(c["correct"] for c in target["per_class"]) == target["correct"]
    rows = {(c["outputs"], c["reference"]): c for c in evaluation["comparisons"]}
    assert list(rows) == [("target", "float model"), ("TFLM", "float model"), ("target", "TFLM")]
    assert rows["target", "TFLM"]["rmse"] == 0 and rows["target", "TFLM"]["cosine"] == 1
    against_float = rows["target", "float model"]
    assert 0 < against_float["rmse"] < 0.05 and 0 < against_float["l2_relative"] < 0.1
    assert against_float["cosine"] > 0.99 and against_float["top1_agreement"] >= 0.9
    assert against_float == {**rows["TFLM", "float model"], "outputs": "target"}   # bit-exact on target


@pytest.mark.qemu
def test_validate_prints_a_summary_not_a_line_per_sample(labelled, capsys):
    code = main(["validate", str(FLOAT_MODEL), "--calib", str(CALIB), "--input", str(labelled)])
    out = capsys.readouterr().out
    assert code == 0
    assert "sample 0" not in out and "12 samples, bit-exact with tflite-micro" in out
    assert "accuracy   top-1" in out and "float model" in out
    assert "RMSE" in out and "L2 rel" in out and "cosine" in out
    classes = len(set(np.load(labelled)["y"].tolist()))
    assert len([line for line in out.splitlines() if line[:1].isdigit()]) == classes   # a row per class seen


@pytest.mark.qemu
def test_run_int8_model_prints_each_sample_only_with_verbose(labelled, tmp_path, capsys):
    with np.load(labelled) as data:
        np.savez(tmp_path / "three.npz", x=data["x"][:3], y=data["y"][:3])
    code = main(["run", str(INT8_MODEL), "--input", str(tmp_path / "three.npz"), "-n", "1", "-v"])
    out = capsys.readouterr().out
    assert code == 0
    assert len([line for line in out.splitlines() if line.startswith("output ")]) == 3
    assert "accuracy   top-1" in out and "RMSE" not in out   # an int8 model: no float model to compare with
