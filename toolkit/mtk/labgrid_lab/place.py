"""A runner for an acquired labgrid place: the serial port its exporter publishes
(NetworkSerialPort, opened by labgrid's SerialDriver: rfc2217:// or socket://) carries mtk's
protocol, the place's probe resource flashes the firmware (probes.py)."""

from __future__ import annotations

from pathlib import Path

from labgrid.driver import SerialDriver
from labgrid.exceptions import NoSupplierFoundError
from labgrid.target import Target

from ..boards import Board
from ..errors import TargetError
from ..runners.base import Runner, RunnerCaps
from ..runners.flash import BoardSession
from ..transport.serial_link import BAUD_RATE, SerialLink
from .probes import probe_driver


class PlaceSession(BoardSession):
    def __init__(self, link: SerialLink, target: Target, console: SerialDriver):
        super().__init__(link)
        self._target, self._console = target, console

    def close(self) -> None:
        self._target.deactivate(self._console)


class PlaceRunner(Runner):
    """The place's exporter sets its serial port's baud rate; a board (or a QEMU stand-in reset over GDB)
    reports no exit status."""

    def __init__(self, target: Target, board: Board):
        self.target, self.board = target, board
        self.caps = RunnerCaps(unit=board.caps.unit, exit_status=False)
        try:
            self.console = SerialDriver(target, name=None)
        except NoSupplierFoundError:
            raise TargetError(f"place {target.name} has no serial port",
                              hint="export the board's USBSerialPort or a NetworkSerialPort in its group") from None
        self.loader = probe_driver(target, board)

    def start(self, elf: Path, baudrate: int = BAUD_RATE) -> PlaceSession:
        if not Path(elf).is_file():
            raise TargetError(f"firmware {elf} does not exist")
        try:
            self.target.activate(self.console)   # opened before flashing: the boot banner is not lost
        except Exception as err:   # pyserial's or labgrid's: the port is not there
            raise TargetError(f"place {self.target.name}: {err}") from None
        link = SerialLink.over(self.console.serial)
        try:
            self.target.activate(self.loader)
            self.loader.load(str(elf))
        except Exception as err:
            self.target.deactivate(self.console)
            if isinstance(err, TargetError):
                raise
            raise TargetError(f"flashing place {self.target.name} failed: {err}") from None
        finally:
            self.target.deactivate(self.loader)
        return PlaceSession(link, self.target, self.console)
