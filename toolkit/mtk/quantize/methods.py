"""The quantizer's choices, apart from the code that runs them: the command line lists them (and
refuses others) without loading ai-edge-quantizer."""

from __future__ import annotations

from typing import Literal

ACTIVATIONS: tuple[str, ...] = ("int8", "int16")   # int16: a 16x8 model (driver.RECIPES has one recipe each)
CalibrationMethod = Literal["minmax", "percentile"]
CALIBRATION_METHODS: tuple[str, ...] = ("minmax", "percentile")
DEFAULT_PERCENTILE = 99.99
