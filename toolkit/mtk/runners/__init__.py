"""Runners start a built firmware on a target and hand back a serial link to it."""

from __future__ import annotations

from ..boards import Board
from ..errors import MtkError
from .base import Runner, Session
from .qemu import QemuRunner


def get_runner(board: Board) -> Runner:
    if board.qemu is None:
        raise MtkError(f"no runner for {board.name} yet: flashing physical boards comes with the Zephyr platform")
    return QemuRunner(board)


__all__ = ["Runner", "Session", "QemuRunner", "get_runner"]
