"""QEMU serving a firmware to another program: the console UART on a pseudo-terminal, and the guest
paced to real time so that it runs no faster than the board it emulates.

Pacing is `-icount shift=S,align=on,sleep=on`: every instruction takes 2^S ns of virtual time and
QEMU holds virtual time to the host's clock. S is the smallest shift at which the guest runs no
faster than the board's clock (25 MHz: S=6, 15.6 M instructions/s). The firmware is built for S
(mtk_board.h's SysTick ratio), so its counts, and its timestamps in microseconds of the board's
clock, are the same instruction counts as under mtk's unpaced runs.
"""

from __future__ import annotations

import math
import re
import subprocess
import tempfile
import time
from pathlib import Path

from ..boards import Board
from ..errors import TargetError
from ..platforms.base import require_tool
from .qemu import stop_process

PTY_LINE = re.compile(rb"char device redirected to (\S+)")
START_TIMEOUT_S = 10.0


def pacing_shift(clock_hz: int) -> int:
    """The -icount shift at which one instruction takes at least a cycle of the board's clock."""
    return max(0, math.ceil(math.log2(1e9 / clock_hz) - 1e-9))


def paced_qemu_command(qemu: str, machine: str, elf: Path, shift: int) -> list[str]:
    return [qemu, "-M", machine, "-kernel", str(elf),
            "-icount", f"shift={shift},align=on,sleep=on",
            "-serial", "pty", "-display", "none", "-monitor", "none", "-no-reboot",
            "-semihosting-config", "enable=on,target=native"]


class PacedQemu:
    """A running QEMU with the firmware's UART on a pty. Use as a context manager: leaving it stops QEMU."""

    def __init__(self, board: Board, elf: Path, shift: int):
        if board.qemu is None:
            raise TargetError(f"{board.name} is not a QEMU board")
        qemu = require_tool("qemu-system-arm", "qemu-system-arm")
        self._log = tempfile.TemporaryFile()
        self.process = subprocess.Popen(paced_qemu_command(qemu, board.qemu.machine, Path(elf), shift),
                                        stdin=subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT)
        try:
            self.port = self._wait_for_pty()
        except BaseException:
            self.close()
            raise

    def log(self) -> str:
        self._log.seek(0)
        return self._log.read().decode(errors="replace").strip()[-2000:]

    def _wait_for_pty(self) -> str:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            self._log.seek(0)
            match = PTY_LINE.search(self._log.read())
            if match:
                return match.group(1).decode()
            if self.process.poll() is not None:
                raise TargetError(f"QEMU exited with status {self.process.returncode}:\n{self.log()}")
            time.sleep(0.02)
        raise TargetError(f"QEMU did not open its pty within {START_TIMEOUT_S:g} s:\n{self.log()}")

    def wait(self) -> int:
        """Until QEMU ends; its exit status."""
        return self.process.wait()

    def close(self) -> None:
        stop_process(self.process)
        self._log.close()

    def __enter__(self) -> PacedQemu:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
