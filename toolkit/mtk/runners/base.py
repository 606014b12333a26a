"""The Runner interface: start a firmware ELF, talk to it through a Session, always clean up."""

from __future__ import annotations

from abc import ABC, abstractmethod
from pathlib import Path
from types import TracebackType

from ..transport.serial_link import SerialLink


class Session(ABC):
    """A running firmware. Use as a context manager: leaving it stops the target."""

    link: SerialLink

    @abstractmethod
    def wait_exit(self, timeout: float) -> int:
        """Wait for the firmware to end; return its exit status."""

    @abstractmethod
    def close(self) -> None:
        """Stop the target (if still running) and release the link."""

    def __enter__(self) -> Session:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


class Runner(ABC):
    @abstractmethod
    def start(self, elf: Path) -> Session:
        """Start `elf` on the target; return once its serial port is connected."""
