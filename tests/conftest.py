from __future__ import annotations

import os
from pathlib import Path

import pytest

SHARED_MODELS = Path(__file__).resolve().parents[2] / "shared" / "models"
TOOLKIT = Path(__file__).resolve().parents[1] / "toolkit"


def toolkit_env() -> dict[str, str]:
    """The environment for a Python subprocess that imports this checkout's mtk."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(TOOLKIT), os.environ.get("PYTHONPATH")]))}


def shared_models() -> list[Path]:
    return sorted(SHARED_MODELS.glob("*.tflite"))


@pytest.fixture(scope="session")
def shared_model_paths() -> list[Path]:
    models = shared_models()
    if not models:
        pytest.skip(f"no models in {SHARED_MODELS}")
    return models


@pytest.fixture
def board_tty():
    """A real serial device standing in for a board's port: a pseudo-terminal's slave end.
    Yields (its path, the master fd: what is written there, the port reads)."""
    master, slave = os.openpty()
    yield os.ttyname(slave), master
    os.close(master)
    os.close(slave)


def pytest_collection_modifyitems(items) -> None:
    """Every test that runs QEMU is slow too: `pytest -m "not slow"` is the fast inner loop."""
    for item in items:
        if item.get_closest_marker("qemu") is not None:
            item.add_marker(pytest.mark.slow)
