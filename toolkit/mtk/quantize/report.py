"""Float vs int8 (or 16x8): per-output SNR, cosine similarity and max abs error; accuracy and agreement
given labels. The field names say int8 for either kind of quantized model."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .. import ui
from ..metrics import check_labels, error_metrics, predicted_classes


KINDS = {"int8": "int8", "int16": "16x8"}   # a quantized model's kind, by its activation type


@dataclass
class OutputComparison:
    name: str
    snr_db: float           # inf when int8 equals float exactly
    cosine: float           # mean over samples of the cosine similarity of float and int8 outputs
    max_abs_error: float
    rms_error: float


@dataclass
class LabelScores:
    float_accuracy: float
    int8_accuracy: float
    agreement: float        # fraction of samples where float and int8 predict the same class


@dataclass
class QuantizeReport:
    float_model: Path
    int8_model: Path
    float_bytes: int
    int8_bytes: int
    calibration: str                       # "minmax" or "percentile 99.99"
    calibration_samples: int
    float_io: bool
    eval_source: str
    eval_samples: int
    outputs: list[OutputComparison]
    labels: LabelScores | None = None
    float_ops: list[str] = field(default_factory=list)   # ops kept in float (--allow-float), see leftover_float_ops
    activations: str = "int8"                            # "int16": a 16x8 model

    def to_dict(self) -> dict:
        """JSON-ready: paths as strings, an infinite SNR as null."""
        data = dataclasses.asdict(self)
        data["float_model"], data["int8_model"] = str(self.float_model), str(self.int8_model)
        for output in data["outputs"]:
            output["snr_db"] = None if math.isinf(output["snr_db"]) else output["snr_db"]
        return data


def compare_outputs(names: list[str], float_outputs: list[np.ndarray],
                    int8_outputs: list[np.ndarray]) -> list[OutputComparison]:
    comparisons = []
    for name, reference, quantized in zip(names, float_outputs, int8_outputs):
        m = error_metrics(reference, quantized)
        comparisons.append(OutputComparison(name, m.snr_db, m.cosine, m.max_abs_error, m.rmse))
    return comparisons


def score_labels(labels: np.ndarray, float_scores: np.ndarray, int8_scores: np.ndarray) -> LabelScores:
    """Accuracy of the class (argmax) predicted by the first output of each model."""
    check_labels(labels, float_scores)
    float_pred, int8_pred = predicted_classes(float_scores), predicted_classes(int8_scores)
    return LabelScores(float(np.mean(float_pred == labels)), float(np.mean(int8_pred == labels)),
                       float(np.mean(float_pred == int8_pred)))


def format_report(report: QuantizeReport) -> str:
    kind = KINDS[report.activations]
    io_kind = "float" if report.float_io else report.activations
    lines = [f"{report.int8_model}: {report.int8_bytes / 1024:.1f} KB {kind} "
             f"(float {report.float_bytes / 1024:.1f} KB), {io_kind} input/output",
             f"calibration: {report.calibration} over {report.calibration_samples} samples",
             f"float vs {kind} on {report.eval_samples} samples of {report.eval_source}:", ""]
    rows = [[o.name, "exact" if math.isinf(o.snr_db) else f"{o.snr_db:.1f}", f"{o.cosine:.5f}", f"{o.max_abs_error:.4g}",
             f"{o.rms_error:.4g}"]
            for o in report.outputs]
    lines.append(ui.table(["output", "SNR dB", "cosine", "max abs error", "RMS error"], rows))
    if report.labels:
        scores = report.labels
        lines += ["", f"accuracy: float {scores.float_accuracy:.2%}, {kind} {scores.int8_accuracy:.2%}; "
                      f"same prediction on {scores.agreement:.2%}"]
    if report.float_ops:
        lines += ["", f"left in float (--allow-float): {', '.join(report.float_ops)}"]
    return "\n".join(lines)
