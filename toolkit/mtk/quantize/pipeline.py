"""quantize_model: float .tflite + calibration data -> int8 (or 16x8) .tflite and a float-vs-quantized report."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .. import ui
from ..errors import ModelError, MtkError
from ..fsutil import atomic_output_file, check_not_folder, check_not_input
from ..graph import Graph, Tensor
from ..reader import read_model
from .methods import ACTIVATIONS, CALIBRATION_METHODS, DEFAULT_PERCENTILE, CalibrationMethod
from .dataset import Normalization, load_dataset
from .driver import quantize_full_integer
from .float_ops import float_compute_ops, leftover_float_ops
from .litert import run_model, signature_of
from .report import KINDS, QuantizeReport, compare_outputs, score_labels

DataSource = str | Path | np.ndarray




def default_output_path(float_path: str | Path, activations: str = "int8") -> Path:
    """model_float.tflite -> model_int8.tflite (16x8: model_16x8.tflite), other.tflite -> other_int8.tflite,
    beside the input."""
    path = Path(float_path)
    stem = path.stem.removesuffix("_float")
    return path.with_name(f"{stem}_{KINDS[activations]}.tflite")


def _float_input(graph: Graph) -> Tensor:
    model_input = graph.tensors[graph.inputs[0]]
    if model_input.dtype != "float32":
        computing_in_float = float_compute_ops(graph)
        if not computing_in_float:
            raise ModelError(f"{graph.source} takes {model_input.dtype} input: it is already quantized",
                             hint="mtk quantize needs the float model")
        first = computing_in_float[0]
        raise ModelError(f"{graph.source} takes {model_input.dtype} input: mtk quantize calibrates float inputs "
                         f"only ({len(computing_in_float)} ops compute in float, the first #{first.index} {first.type})",
                         hint="mtk compile and mtk run take the model as it is, its float ops in float")
    if not model_input.shape or model_input.shape[0] != 1:
        raise ModelError(f"{graph.source} input shape {list(model_input.shape)} has no batch dimension of 1")
    return model_input


def quantize_model(float_path: str | Path, calib: DataSource, out_path: str | Path | None = None, *,
                   eval_data: DataSource | None = None, activations: str = "int8", float_io: bool = False,
                   allow_float: bool = False,
                   calibration: CalibrationMethod = "minmax", percentile: float = DEFAULT_PERCENTILE,
                   mean: float = 0.0, scale: float = 1.0, threads: int = 1, force: bool = False) -> QuantizeReport:
    """Quantize `float_path` to full-integer int8 (`activations` "int16": 16x8, int16 activations and
    int8 weights) at `out_path` (default: default_output_path, which is never replaced unless `force`:
    it may be a model of the user's own).

    Data sources: an .npy/.npz path, a folder of .npy files or images, or an array shaped (N, ...).
    The evaluation set (`eval_data`, else the calibration set) compares float and int8 outputs.
    Raises MtkError for bad data, ModelError for a model it cannot quantize or, unless
    `allow_float`, one with ops left in float. On any error `out_path` is left untouched.
    """
    float_path = Path(float_path)
    if activations not in ACTIVATIONS:
        raise MtkError(f"unknown activations {activations!r}; choose one of {', '.join(ACTIVATIONS)}")
    if out_path is None:
        out_path = default_output_path(float_path, activations)
        if out_path.exists() and not force:
            raise MtkError(f"{out_path} exists", hint="name the output with -o PATH, or pass --force to replace it")
    out_path = Path(out_path)
    check_not_input(out_path, also=[p for p in (float_path, calib, eval_data) if isinstance(p, (str, Path))])
    check_not_folder(out_path)
    if calibration not in CALIBRATION_METHODS:
        raise MtkError(f"unknown calibration {calibration!r}; choose one of {', '.join(CALIBRATION_METHODS)}")
    if not 50 < percentile <= 100:
        raise MtkError(f"percentile {percentile} is outside (50, 100]")

    graph = read_model(float_path)
    model_input = _float_input(graph)
    model = float_path.read_bytes()
    signature = signature_of(model, str(float_path))

    normalization = Normalization(mean, scale)
    calib_set = load_dataset(calib, model_input.shape, normalization)
    eval_set = calib_set if eval_data is None else load_dataset(eval_data, model_input.shape, normalization)

    kind = KINDS[activations]
    with ui.step(f"quantizing {float_path.name} to {kind} with {len(calib_set)} calibration samples"):
        quantized = quantize_full_integer(model, str(float_path), signature, calib_set.x, activations=activations,
                                           float_io=float_io, calibration=calibration, percentile=percentile,
                                           threads=threads)

    out_path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_output_file(out_path) as temp_name:
        temp_name.write_bytes(quantized)
        float_ops = leftover_float_ops(graph, read_model(temp_name))
        if float_ops and not allow_float:
            raise ModelError(f"ai-edge-quantizer left {len(float_ops)} op(s) of {float_path.name} in float: "
                             f"{', '.join(float_ops)}",
                             hint="replace them with ops it quantizes, or pass --allow-float to keep them in float")
        with ui.step(f"comparing float and {kind} on {len(eval_set)} samples"):
            float_outputs = run_model(model, eval_set.x)
            int8_outputs = run_model(quantized, eval_set.x, "the quantized model")
        labels = None if eval_set.y is None else score_labels(eval_set.y, float_outputs[0], int8_outputs[0])
    return QuantizeReport(
        float_model=float_path, int8_model=out_path, float_bytes=len(model), int8_bytes=len(quantized),
        calibration=calibration if calibration == "minmax" else f"percentile {percentile:g}",
        calibration_samples=len(calib_set), activations=activations, float_io=float_io, eval_source=eval_set.source, eval_samples=len(eval_set),
        outputs=compare_outputs([graph.tensors[i].name for i in graph.outputs], float_outputs, int8_outputs),
        labels=labels, float_ops=float_ops)
