"""Drive ai-edge-quantizer: full-integer int8 (per-channel int8 weights, int32 bias, int8 activations) or
16x8 (per-channel int8 weights, int64 bias, symmetric int16 activations)."""

from __future__ import annotations

import numpy as np
from ai_edge_quantizer import qtyping, quantizer, recipe

from ..errors import ModelError
from .calibration import clip_to_percentile, global_min_max
from .litert import Signature, quiet_native_output
from .methods import ACTIVATIONS, CalibrationMethod

# --activations: ai-edge-quantizer's recipe for each of ACTIVATIONS, in its order
RECIPES = dict(zip(ACTIVATIONS, (recipe.static_wi8_ai8, recipe.static_wi8_ai16), strict=True))


def quantize_full_integer(model: bytes, name: str, signature: Signature, samples: np.ndarray, *, activations: str,
                          float_io: bool, calibration: CalibrationMethod, percentile: float, threads: int) -> bytes:
    """The integer flatbuffer for float `model` with `activations` (a RECIPES key); `float_io` keeps float
    model I/O (QUANTIZE/DEQUANTIZE at the edges)."""
    try:
        aeq = quantizer.Quantizer(model)
        aeq.load_quantization_recipe(RECIPES[activations]())
        if float_io:
            for edge in (qtyping.TFLOperationName.INPUT, qtyping.TFLOperationName.OUTPUT):
                aeq.update_quantization_recipe(
                    regex=".*", operation_name=edge, algorithm_key="no_quantize",
                    op_config=qtyping.OpQuantizationConfig(compute_precision=qtyping.ComputePrecision.FLOAT))
        recipe_manager = aeq._recipe_manager  # noqa: SLF001 - Calibrator needs it; Quantizer.calibrate hides the update function
        ranges = global_min_max(model, signature, samples, recipe_manager, threads)
        if calibration == "percentile":
            ranges = clip_to_percentile(model, signature, samples, ranges, percentile, threads)
        with quiet_native_output():
            return bytes(aeq.quantize(ranges, enable_progress_report=False).quantized_model)
    except Exception as err:  # ai-edge-quantizer raises anything (ValueError, RuntimeError, KeyError) on models it cannot handle
        raise ModelError(f"ai-edge-quantizer failed on {name}: {type(err).__name__}: {err}") from None
