"""Platforms render a firmware project for a compiled model and a board, and build it."""

from __future__ import annotations

from ..errors import MtkError
from .base import ProjectOptions, Platform
from .baremetal import BaremetalPlatform
from .zephyr import ZephyrPlatform

PLATFORMS: dict[str, type[Platform]] = {"baremetal": BaremetalPlatform, "zephyr": ZephyrPlatform}


def get_platform(name: str) -> Platform:
    if name not in PLATFORMS:
        raise MtkError(f"unknown platform '{name}'", hint=f"choose one of: {', '.join(PLATFORMS)}")
    return PLATFORMS[name]()


__all__ = ["ProjectOptions", "Platform", "PLATFORMS", "get_platform"]
