"""`mtk quantize`: float .tflite -> full-integer int8 with ai-edge-quantizer, global min/max calibration,
a check for ops left in float, and a float-vs-int8 report."""

from .dataset import Dataset, Normalization, load_dataset
from .pipeline import default_output_path, quantize_model
from .report import LabelScores, OutputComparison, QuantizeReport, format_report

__all__ = ["Dataset", "LabelScores", "Normalization", "OutputComparison", "QuantizeReport", "default_output_path",
           "format_report", "load_dataset", "quantize_model"]
