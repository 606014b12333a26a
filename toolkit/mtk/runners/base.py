"""The Runner interface: start a firmware ELF, talk to it through a Session, always clean up.

A runner declares what it can do as data (RunnerCaps, like west's): the run loop and the commands
read that, never the runner's class."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from ..boards import Unit
from ..cycles.model import CycleTrace
from ..transport.serial_link import BAUD_RATE, SerialLink


@dataclass(frozen=True)
class RunnerCaps:
    unit: Unit                     # what the firmware's timings count where this runner runs it
    exit_status: bool              # its session reports the firmware's exit status (Session.wait_exit)
    estimates_cycles: bool = False  # a cycle model runs beside the firmware: sessions carry its trace
    flashes: bool = False          # writes the firmware into a board's flash, where it stays
    selects_probe: bool = False    # picks one of several identical boards by its probe's serial number
    sets_baud: bool = False        # opens the console at the baud rate `start` is given
    paced: bool = False            # the board can also run paced to its clock in real time (mtk serve)


class Session(ABC):
    """A running firmware. Use as a context manager: leaving it stops the target."""

    link: SerialLink
    cycles: CycleTrace | None = None   # the cycle model's records (RunnerCaps.estimates_cycles)

    def wait_exit(self, timeout: float) -> int:
        """Wait for the firmware to end; return its exit status (only where RunnerCaps.exit_status)."""
        raise NotImplementedError(f"{type(self).__name__} reports no exit status")

    @abstractmethod
    def close(self) -> None:
        """Stop the target (if still running) and release the link."""

    def __enter__(self) -> Session:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


class Runner(ABC):
    caps: RunnerCaps

    @abstractmethod
    def start(self, elf: Path, baudrate: int = BAUD_RATE) -> Session:
        """Start `elf` on the target; return once its serial port is connected (at `baudrate` where
        RunnerCaps.sets_baud)."""

    def find_target(self) -> None:
        """Fail now if the target is missing, before a long build; a runner that starts its own has none to find."""
