"""How close outputs are to a reference and how often a classifier is right: the figures
`mtk quantize`, `mtk run` and `mtk validate` report (stedgeai's validation metrics:
RMSE, MAE, L2 relative error, cosine; top-1 accuracy, per class)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .errors import MtkError


@dataclass(frozen=True)
class ErrorMetrics:
    """`actual` against `reference`, both dequantized to real values, over all samples."""

    rmse: float
    mae: float
    max_abs_error: float
    l2_relative: float      # ||actual - reference|| / ||reference|| (inf when the reference is all zero and they differ)
    cosine: float           # mean over samples of each sample's cosine similarity
    snr_db: float           # inf when actual equals reference exactly

    def to_json(self) -> dict[str, float | None]:
        """JSON has no infinity: an infinite figure is null."""
        return {key: None if math.isinf(value) else round(value, 8) for key, value in vars(self).items()}


def error_metrics(reference: np.ndarray, actual: np.ndarray) -> ErrorMetrics:
    """Both shaped (N, ...): N samples of one output tensor."""
    reference = reference.reshape(len(reference), -1).astype(np.float64)
    actual = actual.reshape(len(actual), -1).astype(np.float64)
    error = actual - reference
    noise, signal = float(np.sum(error ** 2)), float(np.sum(reference ** 2))
    norms = np.linalg.norm(reference, axis=1) * np.linalg.norm(actual, axis=1)
    both_zero = norms == 0
    cosines = np.where(both_zero, 1.0, np.sum(reference * actual, axis=1) / np.where(both_zero, 1.0, norms))
    return ErrorMetrics(
        rmse=float(np.sqrt(np.mean(error ** 2))), mae=float(np.mean(np.abs(error))),
        max_abs_error=float(np.max(np.abs(error))),
        l2_relative=0.0 if noise == 0 else (math.inf if signal == 0 else math.sqrt(noise / signal)),
        cosine=float(np.mean(cosines)),
        snr_db=math.inf if noise == 0 else 10 * math.log10(max(signal, 1e-30) / noise))


def predicted_classes(scores: np.ndarray) -> np.ndarray:
    """Top-1 class of each sample of a classifier's output shaped (N, ...)."""
    return scores.reshape(len(scores), -1).argmax(axis=1)


def check_labels(labels: np.ndarray, scores: np.ndarray) -> None:
    """Labels must index the classes of the output they are scored against."""
    check_label_range(labels, int(np.prod(scores.shape[1:])), len(scores))


def check_label_range(labels: np.ndarray, classes: int, samples: int) -> None:
    """One label a sample, each a class of an output of `classes` values."""
    if classes < 2:
        raise MtkError(f"labels `y` were given, but the model's first output holds {classes} value per sample, "
                       "not one score per class")
    if labels.min() < 0 or labels.max() >= classes:
        raise MtkError(f"labels `y` range over {labels.min()}..{labels.max()}, "
                       f"but the model's first output has {classes} classes")
    if len(labels) != samples:
        raise MtkError(f"{len(labels)} labels `y` for {samples} samples")


@dataclass(frozen=True)
class ClassAccuracy:
    label: int
    samples: int
    correct: int

    @property
    def accuracy(self) -> float:
        return self.correct / self.samples if self.samples else math.nan


@dataclass(frozen=True)
class Accuracy:
    """Top-1 accuracy of one model's predictions against the labels, overall and per class."""

    model: str              # whose predictions: "target", "TFLM", "float model", ...
    samples: int
    correct: int
    per_class: tuple[ClassAccuracy, ...]   # every class of the output, in label order

    @property
    def top1(self) -> float:
        return self.correct / self.samples

    def to_json(self) -> dict:
        return {"model": self.model, "samples": self.samples, "correct": self.correct, "top1": round(self.top1, 6),
                "per_class": [{"label": c.label, "samples": c.samples, "correct": c.correct,
                               "accuracy": None if math.isnan(c.accuracy) else round(c.accuracy, 6)}
                              for c in self.per_class]}


def accuracy(model: str, labels: np.ndarray, scores: np.ndarray) -> Accuracy:
    """`scores`: the classifier output (N, classes...) whose argmax is the prediction."""
    check_labels(labels, scores)
    hits = predicted_classes(scores) == labels
    classes = int(np.prod(scores.shape[1:]))
    per_class = tuple(ClassAccuracy(c, int(np.sum(labels == c)), int(np.sum(hits[labels == c])))
                      for c in range(classes))
    return Accuracy(model, len(labels), int(hits.sum()), per_class)
