"""On-target accuracy and the float/TFLM comparison of `mtk run` and `mtk validate` with labelled data
(accuracy and the figures): the metrics themselves (the shipped digits model end to end in QEMU:
tests/target/test_evaluation_qemu.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mtk.errors import MtkError
from mtk.evaluation import Comparison, Evaluation, format_evaluation
from mtk.metrics import accuracy, error_metrics


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


