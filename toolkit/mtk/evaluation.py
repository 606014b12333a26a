"""What a run's outputs are worth (`mtk run`, `mtk validate`): top-1 accuracy on labelled data,
overall and per class, and, for a float model quantized on the way, how far the target's int8
outputs are from the float model's and from TFLM's, as real values (stedgeai's validation report:
RMSE, MAE, L2 relative error, cosine)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import ui
from .datafile import Npz
from .errors import MtkError
from .graph import Graph, Tensor
from .metrics import Accuracy, ErrorMetrics, accuracy, check_label_range, error_metrics, predicted_classes
from .runresult import RunResult
from .samples import Sample, model_inputs, sample_batches
from .reader import parse_model

TARGET, TFLM, FLOAT = "target", "TFLM", "float model"
PER_CLASS_ROWS = 32   # more classes than this: the per-class table only with -v


@dataclass(frozen=True)
class Comparison:
    """One model's outputs against another's on the same samples."""

    outputs: str                # whose outputs: TARGET or TFLM
    reference: str              # against whose: FLOAT or TFLM
    tensor: str                 # the output tensor's name
    agreement: float | None     # same top-1 class on this fraction of samples (a classifier's first output)
    errors: ErrorMetrics

    def to_json(self) -> dict:
        return {"outputs": self.outputs, "reference": self.reference, "tensor": self.tensor,
                "top1_agreement": None if self.agreement is None else round(self.agreement, 6),
                **self.errors.to_json()}


@dataclass(frozen=True)
class Evaluation:
    samples: int
    accuracy: tuple[Accuracy, ...]          # with labels: the target's first, then its references'
    comparisons: tuple[Comparison, ...]     # with a float model: target and TFLM against it, target against TFLM

    def to_json(self) -> dict:
        return {"samples": self.samples, "accuracy": [a.to_json() for a in self.accuracy],
                "comparisons": [c.to_json() for c in self.comparisons]}


def load_labels(path: str | Path) -> np.ndarray | None:
    """Class labels `y` of an .npz (indices or one-hot rows); None for a file without them."""
    from .quantize.dataset import as_labels
    path = Path(path)
    if path.suffix != ".npz":
        return None
    with Npz(path) as npz:   # only `y` is inflated
        labels = npz.read("y") if "y" in npz.headers else None
    return None if labels is None else as_labels(labels, str(path))


def check_data_labels(data: str | Path, graph: Graph) -> None:
    """Before any work (quantizing included): the labels `y` of `data`, if it has any, are one a sample
    and classes of the first output of the model `graph` (float or int8: the same classes)."""
    labels = load_labels(data)
    if labels is not None:
        first = graph.tensors[graph.outputs[0]]
        samples = len(sample_batches(data, [graph.tensors[i] for i in graph.inputs])[0][1])
        try:
            check_label_range(labels, int(np.prod(first.shape[1:], dtype=np.int64)), samples)
        except MtkError as err:
            raise MtkError(f"{data}: {err}") from None


def evaluate(result: RunResult, data: str | Path | None, tflm_outputs: list[Sample] | None = None) -> Evaluation | None:
    """Accuracy against the labels of `data` (the samples' file) and, when `result` was quantized on
    the way, comparisons with the float model and TFLM. `tflm_outputs`: TFLM's outputs for the same
    samples if already computed. None when there is nothing to report (no labels, no float model)."""
    labels = load_labels(data) if data is not None else None
    if labels is None and result.float_model is None:
        return None
    if labels is not None and len(labels) != len(result.outputs):
        raise MtkError(f"{data}: {len(labels)} labels `y` for {len(result.outputs)} samples")
    graph = result.graph or parse_model(result.int8_model, Path(result.model))
    tensors = [graph.tensors[i] for i in graph.outputs]
    outputs = {TARGET: _real_values(result.outputs, tensors)}
    if result.float_model is not None and tflm_outputs is None:
        from .reference import run_reference_sequence   # the samples in order, as the target ran them
        with ui.step(f"running the {len(result.inputs)} samples in tflite-micro on the host"):
            tflm_outputs = run_reference_sequence(result.int8_model, result.inputs)
    if tflm_outputs is not None:
        outputs[TFLM] = _real_values(tflm_outputs, tensors)
    if result.float_model is not None:
        with ui.step(f"running the {len(result.inputs)} samples through the float model"):
            outputs[FLOAT] = _float_outputs(result, graph, data)
    scores = () if labels is None else tuple(accuracy(name, labels, per_tensor[0])
                                             for name, per_tensor in outputs.items())
    classifier = labels is not None or _is_softmax_output(graph, graph.outputs[0])
    pairs = [(TARGET, FLOAT), (TFLM, FLOAT), (TARGET, TFLM)] if FLOAT in outputs else []
    comparisons = tuple(
        Comparison(name, reference, tensor.name,
                   _agreement(outputs[name][k], outputs[reference][k]) if classifier and k == 0 else None,
                   error_metrics(outputs[reference][k], outputs[name][k]))
        for name, reference in pairs for k, tensor in enumerate(tensors))
    return Evaluation(len(result.outputs), scores, comparisons)


def _real_values(samples: list[Sample], tensors: list[Tensor]) -> list[np.ndarray]:
    """Per output tensor: every sample's values, dequantized, shaped (N, ...)."""
    return [_dequantize(np.concatenate([sample[k] for sample in samples]), t) for k, t in enumerate(tensors)]


def _dequantize(q: np.ndarray, tensor: Tensor) -> np.ndarray:
    if tensor.quant is None or q.dtype.kind == "f":
        return q.astype(np.float64)
    return (q.astype(np.float64) - tensor.quant.zp) * tensor.quant.s


def _float_outputs(result: RunResult, int8_graph: Graph, data: str | Path | None) -> list[np.ndarray]:
    """The float model on the float samples: the file's own values when it holds floats, else the
    int8 samples dequantized (the same real values the target was given)."""
    from .quantize.litert import run_model as run_litert
    inputs = model_inputs(result.float_model)
    if len(inputs) != 1:
        raise MtkError(f"{result.float_model} has {len(inputs)} inputs; the float comparison takes models with one")
    x = None
    if data is not None:
        array, batch = sample_batches(data, inputs)[0]
        x = batch if np.issubdtype(array.dtype, np.floating) else None
    if x is None:
        tensor = int8_graph.tensors[int8_graph.inputs[0]]
        x = _dequantize(np.concatenate([sample[0] for sample in result.inputs]), tensor).astype(np.float32)
    return run_litert(result.float_model.read_bytes(), x)


def _is_softmax_output(graph: Graph, tensor: int) -> bool:
    return any(op.type == "SOFTMAX" and tensor in op.outputs for op in graph.ops)


def _agreement(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.mean(predicted_classes(a) == predicted_classes(b)))


def _figure(value: float) -> str:
    return "inf" if math.isinf(value) else f"{value:.4g}"


def format_evaluation(evaluation: Evaluation, verbose: bool = False) -> str:
    blocks = []
    if evaluation.accuracy:
        target, *references = evaluation.accuracy
        lines = [f"accuracy   top-1 {target.top1:.2%} on the target ({target.correct}/{target.samples})"
                 + "".join(f", {a.model} {a.top1:.2%}" for a in references)]
        classes = [c.label for c in target.per_class if c.samples]
        if verbose or len(classes) <= PER_CLASS_ROWS:
            rows = [[label, target.per_class[label].samples]
                    + [f"{a.per_class[label].accuracy:.1%}" for a in evaluation.accuracy] for label in classes]
            lines += ["", ui.table(["class", "samples"] + [a.model for a in evaluation.accuracy], rows)]
        else:
            lines.append(f"           {len(classes)} classes: -v prints the accuracy of each")
        blocks.append("\n".join(lines))
    if evaluation.comparisons:
        several = len({c.tensor for c in evaluation.comparisons}) > 1
        rows = [[c.outputs, c.reference] + ([c.tensor] if several else [])
                + ["-" if c.agreement is None else f"{c.agreement:.2%}", _figure(c.errors.rmse),
                   _figure(c.errors.mae), _figure(c.errors.l2_relative), f"{c.errors.cosine:.6f}",
                   _figure(c.errors.max_abs_error)]
                for c in evaluation.comparisons]
        headers = ["outputs", "against"] + (["tensor"] if several else []) + \
            ["top-1 agree", "RMSE", "MAE", "L2 rel", "cosine", "max abs err"]
        blocks.append(f"outputs as real values, {evaluation.samples} samples:\n" + ui.table(headers, rows))
    return "\n\n".join(blocks)
