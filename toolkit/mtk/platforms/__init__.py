"""Platforms render a firmware project for a compiled model and a board, and build it."""

from __future__ import annotations

import importlib

from ..errors import MtkError
from .base import ProjectOptions, Platform

# name -> its class, in the module of the same name (imported on first use: Jinja, the firmware sources)
PLATFORMS: dict[str, str] = {"baremetal": "BaremetalPlatform", "zephyr": "ZephyrPlatform"}


def get_platform(name: str) -> Platform:
    if name not in PLATFORMS:
        raise MtkError(f"unknown platform '{name}'", hint=f"choose one of: {', '.join(PLATFORMS)}")
    return getattr(importlib.import_module(f"{__name__}.{name}"), PLATFORMS[name])()


__all__ = ["ProjectOptions", "Platform", "PLATFORMS", "get_platform"]
