"""Physical boards: a flash tool writes the firmware, the board's own serial port carries the link.

A FlashRunner subclass declares what its tool can do and builds its command in one place;
`start` picks the board (its serial port and probe serial number, the same board for both),
opens the port before flashing so that the boot banner is not lost, then flashes.
"""

from __future__ import annotations

import re
from abc import abstractmethod
from pathlib import Path

from ..boards import Board, Unit
from ..errors import MtkError, TargetError
from ..transport.ports import find_board_port, open_board_port
from ..transport.serial_link import BAUD_RATE, SerialLink
from .base import Runner, RunnerCaps, Session

SERIAL_NUMBER = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]*")   # goes into tool command lines


def check_serial_number(serial_number: str | None) -> str | None:
    if serial_number is not None and not SERIAL_NUMBER.fullmatch(serial_number):
        raise MtkError(f"--serial-number {serial_number!r}: a probe serial number is letters, digits and '_.:-'")
    return serial_number


class BoardSession(Session):
    """Firmware running on a board, reached through its serial port."""

    def __init__(self, link: SerialLink):
        self.link = link

    def close(self) -> None:
        self.link.close()


class FlashRunner(Runner):
    """The firmware cannot report an exit status on a board: it acknowledges `mtk-exit` and reboots."""

    name: str
    caps = RunnerCaps(unit=Unit.CYCLES, exit_status=False, flashes=True, selects_probe=True, sets_baud=True)

    def __init__(self, board: Board, serial_number: str | None = None, port: str | None = None):
        if not board.caps.flashable:
            raise MtkError(f"{board.name} is emulated: it runs in QEMU, there is nothing to flash")
        self.board = board
        self.serial_number = check_serial_number(serial_number)
        self.port = port

    def select_board(self) -> str:
        """The serial port of the board to use; fixes `serial_number` to that board's probe."""
        if self.port is not None:
            return self.port
        found = find_board_port(self.board, self.serial_number)
        self.serial_number = self.serial_number or check_serial_number(found.serial_number)
        return found.device

    def find_target(self) -> None:
        self.select_board()

    @abstractmethod
    def flash(self, elf: Path) -> None:
        """Write `elf` to the board and reset it."""

    def start(self, elf: Path, baudrate: int = BAUD_RATE) -> BoardSession:
        if not Path(elf).is_file():
            raise TargetError(f"firmware {elf} does not exist")
        link = open_board_port(self.select_board(), baudrate)
        try:
            self.flash(Path(elf))
        except BaseException:
            link.close()
            raise
        return BoardSession(link)
