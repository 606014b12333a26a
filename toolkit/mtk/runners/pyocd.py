"""Flashing through pyOCD's Python API: no Zephyr or west needed, for boards pyOCD supports."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..boards import Board
from ..errors import MtkError, TargetError, ToolMissing
from .flash import FlashRunner

PYOCD_INSTALL = "pip install pyocd"


def session_options(board: Board, serial_number: str | None) -> dict[str, Any]:
    """What ConnectHelper.session_with_chosen_probe gets: the probe, the target, no prompts."""
    if board.pyocd_target is None:
        raise MtkError(f"the board registry names no pyOCD target for {board.name}",
                       hint=f"flash it with west instead (runners: {', '.join(board.runners) or 'none'})")
    return {"unique_id": serial_number, "target_override": board.pyocd_target, "blocking": False,
            "return_first": False, "connect_mode": "under-reset"}


class PyOcdRunner(FlashRunner):
    name = "pyocd"

    def flash(self, elf: Path) -> None:
        try:
            from pyocd.core.exceptions import Error as PyOcdError
            from pyocd.core.helpers import ConnectHelper
            from pyocd.flash.file_programmer import FileProgrammer
        except ImportError:
            raise ToolMissing("pyOCD is not installed: the pyocd runner uses its Python API",
                              hint=PYOCD_INSTALL) from None
        options = session_options(self.board, self.serial_number)
        try:
            session = ConnectHelper.session_with_chosen_probe(**options)
            if session is None:
                raise TargetError(f"pyOCD found no debug probe for {self.board.name}"
                                  + (f" with serial number {self.serial_number}" if self.serial_number else ""),
                                  hint="`pyocd list` shows the probes pyOCD sees")
            with session:
                FileProgrammer(session).program(str(elf), file_format="elf")
                session.target.reset()
        except PyOcdError as err:
            raise TargetError(f"pyOCD could not flash {self.board.name}: {err}",
                              hint=f"the target '{self.board.pyocd_target}' may need its pack: "
                                   f"pyocd pack install {self.board.pyocd_target}") from None
