"""Activation ranges from calibration data.

ai-edge-quantizer's own calibration keeps an exponential moving average of per-sample min/max, so
the last ~20 samples decide every range. mtk uses the global min/max over all samples (what
TensorFlow's converter does) and optionally clips each range to a percentile of its values.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from ai_edge_quantizer import calibrator
from ai_edge_quantizer.utils import qsv_utils, tfl_interpreter_utils

from .litert import Signature, quiet_native_output
from .methods import CalibrationMethod

HISTOGRAM_BINS = 4096

# {tensor name: {"min": array, "max": array}}, ai-edge-quantizer's "QSV" calibration result.
Ranges = dict[str, dict[str, Any]]


def _feeds(signature: Signature, samples: np.ndarray) -> dict[str, list[dict[str, np.ndarray]]]:
    return {signature.key: [{signature.input_name: sample[None]} for sample in samples]}


def global_min_max(model: bytes, signature: Signature, samples: np.ndarray, recipe_manager: Any,
                   threads: int) -> Ranges:
    """Every activation tensor's min and max over all samples."""
    with quiet_native_output():
        calib = calibrator.Calibrator(model, num_threads=threads, qsv_update_func=qsv_utils.min_max_update)
        calib.calibrate(_feeds(signature, samples), recipe_manager)
    return calib.get_model_qsvs()


def clip_to_percentile(model: bytes, signature: Signature, samples: np.ndarray, ranges: Ranges,
                       percentile: float, threads: int) -> Ranges:
    """Narrow each range to the [100 - p, p] percentiles of its tensor's values over all samples.

    The values are counted in a histogram over the global min/max range, so memory stays bounded.
    """
    histograms = {name: np.zeros(HISTOGRAM_BINS, np.int64) for name in ranges}
    with quiet_native_output():
        interpreter = tfl_interpreter_utils.create_tfl_interpreter(model, num_threads=threads)
        for sample in samples:
            tfl_interpreter_utils.invoke_interpreter_signature(
                interpreter, {signature.input_name: sample[None]}, signature.key)
            contents = tfl_interpreter_utils.get_tensor_name_to_content_map(interpreter)
            for name, histogram in histograms.items():
                low, high = _bounds(ranges[name])
                histogram += np.histogram(contents[name], HISTOGRAM_BINS, (low, high))[0]
    clipped: Ranges = {}
    for name, histogram in histograms.items():
        low, high = _bounds(ranges[name])
        edges = np.linspace(low, high, HISTOGRAM_BINS + 1)
        cumulative = np.cumsum(histogram) / max(int(histogram.sum()), 1)
        lower = edges[np.searchsorted(cumulative, 1 - percentile / 100, side="right")]
        upper = edges[min(np.searchsorted(cumulative, percentile / 100) + 1, HISTOGRAM_BINS)]
        clipped[name] = {**ranges[name], "min": np.full_like(ranges[name]["min"], lower),
                         "max": np.full_like(ranges[name]["max"], upper)}
    return clipped


def _bounds(qsv: dict[str, Any]) -> tuple[float, float]:
    low, high = float(np.min(qsv["min"])), float(np.max(qsv["max"]))
    return (low, high) if high > low else (low, low + 1e-6)
