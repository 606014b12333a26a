"""`mtk quantize`: float .tflite -> full-integer int8 with ai-edge-quantizer, global min/max calibration,
a check for ops left in float, and a float-vs-int8 report.

Its names are imported on first use (ai-edge-quantizer is slow to load): `mtk.quantize.methods` alone
stays light."""

from __future__ import annotations

import importlib
from typing import Any

_HOMES = {"Dataset": "dataset", "Normalization": "dataset", "load_dataset": "dataset",
          "default_output_path": "pipeline", "quantize_model": "pipeline",
          "LabelScores": "report", "OutputComparison": "report", "QuantizeReport": "report", "format_report": "report"}
__all__ = sorted(_HOMES)


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_HOMES[name]}"), name)
