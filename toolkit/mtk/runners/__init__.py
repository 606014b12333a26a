"""Runners start a built firmware on a target and hand back a serial link to it."""

from __future__ import annotations

import difflib

from ..boards import Board, did_you_mean
from ..cycles.model import CycleModel
from ..errors import MtkError
from .base import Runner, RunnerCaps, Session
from .pyocd import PyOcdRunner
from .qemu import QemuRunner
from .flash import BoardSession, FlashRunner
from .west import WestRunner

QEMU = "qemu"


def runner_names(board: Board) -> list[str]:
    """What --runner accepts for `board`: qemu, or west (the build's runner), a Zephyr runner, pyocd."""
    if board.qemu is not None:
        return [QEMU]
    return [WestRunner.name, *(r for r in board.runners if r != PyOcdRunner.name), PyOcdRunner.name]


def runner_class(board: Board, runner: str | None = None) -> type[Runner]:
    """The class of the runner get_runner makes: its capabilities before it is made."""
    if board.qemu is not None:
        return QemuRunner
    return PyOcdRunner if runner == PyOcdRunner.name else WestRunner


def get_runner(board: Board, runner: str | None = None, serial_number: str | None = None,
               port: str | None = None, cycles: CycleModel | None | bool = True) -> Runner:
    """The runner for `board`. QEMU boards run in QEMU (bare-metal or Zephyr ELF alike). Physical
    boards are flashed with `west flash` (the build's default runner, or `runner` if it names a
    Zephyr runner) or with pyOCD's Python API (`runner="pyocd"`); `serial_number` picks one of
    several identical boards (passed to the flash tool and used to find the serial port), `port`
    overrides the serial port found from the board's USB ids. `cycles`: QEMU's cycle model (default: the
    board's; a model of another board for --emulate; None: none)."""
    if runner is not None and runner not in runner_names(board):
        names = runner_names(board)
        raise MtkError(f"runner '{runner}' cannot run {board.name}" + did_you_mean(difflib.get_close_matches(runner, names)),
                       hint=f"choose one of: {', '.join(names)}")
    chosen = runner_class(board, runner)
    if (serial_number is not None or port is not None) and not chosen.caps.selects_probe:
        raise MtkError(f"{board.name} runs in {board.caps.where}: --serial-number and --port are for physical boards")
    if chosen is QemuRunner:
        return QemuRunner(board, cycles)
    if chosen is PyOcdRunner:
        return PyOcdRunner(board, serial_number, port)
    return WestRunner(board, None if runner == WestRunner.name else runner, serial_number, port)


__all__ = ["Runner", "RunnerCaps", "Session", "BoardSession", "FlashRunner", "QemuRunner", "WestRunner", "PyOcdRunner",
           "get_runner", "runner_class", "runner_names"]
