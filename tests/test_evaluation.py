"""On-target accuracy and the float/TFLM comparison of `mtk run` and `mtk validate` with labelled data
(accuracy and the figures): the metrics themselves, then the shipped digits model end to end in QEMU."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from mtk.cli import main
from mtk.errors import MtkError
from mtk.evaluation import Comparison, Evaluation, format_evaluation
from mtk.metrics import accuracy, error_metrics

MODELS_DIR = Path(__file__).resolve().parents[1] / "models"
FLOAT_MODEL, INT8_MODEL = MODELS_DIR / "digits_cnn_float.tflite", MODELS_DIR / "digits_cnn_int8.tflite"
CALIB = MODELS_DIR / "digits_calib.npz"


def test_error_metrics_against_hand_computed_figures():
    reference = np.array([[3.0, 4.0], [0.0, 0.0]])
    actual = np.array([[3.0, 4.0], [0.0, 0.0]]) + np.array([[0.0, 1.0], [0.0, 0.0]])
    m = error_metrics(reference, actual)
    assert m.rmse == pytest.approx(0.5) and m.mae == pytest.approx(0.25) and m.max_abs_error == 1.0
    assert m.l2_relative == pytest.approx(1 / 5)
    assert m.cosine == pytest.approx((1 + (3 * 3 + 4 * 5) / (5 * math.hypot(3, 5))) / 2)   # all-zero pair: 1
    assert m.snr_db == pytest.approx(10 * math.log10(25))
    exact = error_metrics(reference, reference)
    assert (exact.rmse, exact.l2_relative, exact.cosine) == (0.0, 0.0, 1.0) and math.isinf(exact.snr_db)
    assert exact.to_json()["snr_db"] is None


def test_accuracy_overall_and_per_class():
    scores = np.array([[0.9, 0.1, 0.0], [0.2, 0.8, 0.0], [0.6, 0.4, 0.0], [0.1, 0.9, 0.0]])
    result = accuracy("target", np.array([0, 1, 1, 1]), scores)
    assert (result.correct, result.samples, result.top1) == (3, 4, 0.75)
    assert [(c.label, c.samples, c.correct) for c in result.per_class] == [(0, 1, 1), (1, 3, 2), (2, 0, 0)]
    assert result.to_json()["per_class"][2]["accuracy"] is None
    with pytest.raises(MtkError, match=r"range over 0\.\.3.*3 classes"):
        accuracy("target", np.array([0, 1, 3, 1]), scores)


def test_summary_is_a_table_and_many_classes_are_listed_only_with_verbose():
    labels = np.arange(40) % 40
    scores = np.eye(40)[labels]
    scores[0] = np.eye(40)[1]
    target, reference = accuracy("target", labels, scores), accuracy("float model", labels, np.eye(40)[labels])
    agreement = Comparison("target", "float model", "out", 39 / 40, error_metrics(np.eye(40)[labels], scores))
    evaluation = Evaluation(40, (target, reference), (agreement,))
    text = format_evaluation(evaluation)
    assert text.startswith("accuracy   top-1 97.50% on the target (39/40), float model 100.00%")
    assert "40 classes: -v prints" in text and "\n0 " not in text
    assert "97.50%" in text.splitlines()[-1] and "RMSE" in text and "\n\n\n" not in text
    verbose = format_evaluation(evaluation, verbose=True)
    assert "\n0      1        0.0%    100.0%" in verbose and "\n39 " in verbose
    assert evaluation.to_json()["comparisons"][0]["top1_agreement"] == 0.975


@pytest.fixture(scope="module")
def labelled(tmp_path_factory) -> Path:
    """The first 12 test digits with their labels, as the shipped digits_test.npz holds them."""
    with np.load(MODELS_DIR / "digits_test.npz") as data:
        x, y = data["x"][:12], data["y"][:12]
    path = tmp_path_factory.mktemp("digits") / "digits12.npz"
    np.savez(path, x=x, y=y)
    return path


@pytest.mark.slow
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


@pytest.mark.slow
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


@pytest.mark.slow
@pytest.mark.qemu
def test_run_int8_model_prints_each_sample_only_with_verbose(labelled, tmp_path, capsys):
    with np.load(labelled) as data:
        np.savez(tmp_path / "three.npz", x=data["x"][:3], y=data["y"][:3])
    code = main(["run", str(INT8_MODEL), "--input", str(tmp_path / "three.npz"), "-n", "1", "-v"])
    out = capsys.readouterr().out
    assert code == 0
    assert len([line for line in out.splitlines() if line.startswith("output ")]) == 3
    assert "accuracy   top-1" in out and "RMSE" not in out   # an int8 model: no float model to compare with
