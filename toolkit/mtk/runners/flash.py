"""Physical boards: a flash tool writes the firmware, the board's own serial port carries the link.

A FlashRunner subclass declares what its tool can do and builds its command in one place;
`start` picks the board (its serial port and probe serial number, the same board for both),
opens the port before flashing so that the boot banner is not lost, then flashes.
"""

from __future__ import annotations

import re
from abc import abstractmethod
from pathlib import Path

from ..boards import Board
from ..errors import MtkError, TargetError
from ..transport.ports import find_board_port, open_board_port
from ..transport.serial_link import BAUD_RATE, SerialLink
from .base import Runner, Session

SERIAL_NUMBER = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]*")   # goes into tool command lines


def check_serial_number(serial_number: str | None) -> str | None:
    if serial_number is not None and not SERIAL_NUMBER.fullmatch(serial_number):
        raise MtkError(f"--serial-number {serial_number!r}: a probe serial number is letters, digits and '_.:-'")
    return serial_number


class BoardSession(Session):
    """Firmware running on a board, reached through its serial port."""

    def __init__(self, link: SerialLink):
        self.link = link

    def wait_exit(self, timeout: float) -> int:
        """A board cannot report an exit status: the firmware acknowledged `mtk-exit` and reboots."""
        return 0

    def close(self) -> None:
        self.link.close()


class FlashRunner(Runner):
    name: str
    selects_probe: bool = True   # can flash one of several identical boards, by serial number
    baudrate: int = BAUD_RATE    # the firmware's console (an MLPerf Tiny build: its benchmark's)

    def __init__(self, board: Board, serial_number: str | None = None, port: str | None = None):
        if board.is_qemu:
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

    @abstractmethod
    def flash(self, elf: Path) -> None:
        """Write `elf` to the board and reset it."""

    def start(self, elf: Path) -> BoardSession:
        if not Path(elf).is_file():
            raise TargetError(f"firmware {elf} does not exist")
        link = open_board_port(self.select_board(), self.baudrate)
        try:
            self.flash(Path(elf))
        except BaseException:
            link.close()
            raise
        return BoardSession(link)
