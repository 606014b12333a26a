from __future__ import annotations

from pathlib import Path

import pytest

SHARED_MODELS = Path(__file__).resolve().parents[2] / "shared" / "models"


def shared_models() -> list[Path]:
    return sorted(SHARED_MODELS.glob("*.tflite"))


@pytest.fixture(scope="session")
def shared_model_paths() -> list[Path]:
    models = shared_models()
    if not models:
        pytest.skip(f"no models in {SHARED_MODELS}")
    return models
