"""Where the project's data folders (templates, firmware core, board data) live."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BOARD_TEMPLATES = ROOT / "board_templates"
ZEPHYR_APP = ROOT / "zephyr_app"
BAREMETAL_APP = ROOT / "baremetal_app"
FIRMWARE = ROOT / "firmware"
MODELS = ROOT / "models"
