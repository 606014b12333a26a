"""Where things are in this checkout, for the tests of every folder (unit, compile, target) and their helpers."""

from __future__ import annotations

import os
from pathlib import Path

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
TOOLKIT = REPO / "toolkit"
FIXTURES = TESTS / "fixtures"
# a compiled model's folder as `mtk compile` leaves it, around a stand-in model
FAKE = FIXTURES / "fake_compiled"
SHARED_MODELS = REPO.parent / "shared" / "models"
# tflite-micro's own models (micro_speech's audio front end): a checkout or a bare git mirror of it, if any
TFLITE_MICRO = Path(os.environ.get("MTK_TFLITE_MICRO", "/work/.mirror/tensorflow+tflite-micro/repo"))


def toolkit_env() -> dict[str, str]:
    """The environment for a Python subprocess that imports this checkout's mtk."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(TOOLKIT), os.environ.get("PYTHONPATH")]))}


def shared_models() -> list[Path]:
    return sorted(SHARED_MODELS.glob("*.tflite"))
