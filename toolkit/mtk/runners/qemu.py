"""Run firmware in qemu-system-arm: deterministic instruction counts (-icount shift=0), the
console UART on a loopback TCP socket, exit status through semihosting."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import IO

import serial

from .. import interrupts
from ..boards import Board, Unit
from ..cycles.model import CycleModel, CycleTrace
from ..errors import TargetError
from ..platforms.base import require_tool
from ..transport.serial_link import BAUD_RATE, SerialLink
from .base import Runner, RunnerCaps, Session

CONNECT_TIMEOUT_S = 10.0
STOP_TIMEOUT_S = 2.0
PORT_ATTEMPTS = 3
NO_CYCLES_ENV = "MTK_NO_CYCLE_MODEL"   # set: QEMU runs without the cycle model (instruction counts only)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def die_with_parent(command: list[str]) -> list[str]:
    """`command` run so that the kernel kills it when mtk dies, even by SIGKILL (PR_SET_PDEATHSIG
    through util-linux's setpriv, which then execs it). Not a preexec_fn: Python code between fork
    and exec can deadlock or trip gRPC's fork handlers once labgrid's threads run in mtk."""
    setpriv = shutil.which("setpriv")
    return [setpriv, "--pdeathsig", "KILL", "--", *command] if setpriv else command


def qemu_command(qemu: str, machine: str, elf: Path, port: int, plugin: str | None = None) -> list[str]:
    return [qemu, "-M", machine, "-kernel", str(elf),
            "-icount", "shift=0,align=off,sleep=off",
            "-serial", f"tcp:127.0.0.1:{port},server=on,wait=on,nodelay=on",
            "-display", "none", "-monitor", "none", "-no-reboot",
            "-semihosting-config", "enable=on,target=native",
            *(["-plugin", plugin] if plugin else [])]


def stop_process(process: subprocess.Popen) -> None:
    """End `process` if it still runs: terminate it, kill it if it lingers, reap it."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


class QemuSession(Session):
    def __init__(self, process: subprocess.Popen, log: IO[bytes], link: SerialLink,
                 cycles: CycleTrace | None = None, scratch: tempfile.TemporaryDirectory | None = None):
        self.process = process
        self.link = link
        self.cycles = cycles      # the cycle model's records, when it runs
        self._log = log
        self._scratch = scratch

    def log_tail(self) -> str:
        """QEMU's own stdout and stderr (errors, semihosting output)."""
        self._log.seek(0)
        return self._log.read().decode(errors="replace").strip()[-2000:]

    def wait_exit(self, timeout: float) -> int:
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            raise TargetError(f"QEMU did not exit within {timeout:g} s\n{self.link.describe_last_lines()}") from None

    def close(self) -> None:
        self.link.close()
        stop_process(self.process)
        self._log.close()
        if self._scratch is not None:
            self._scratch.cleanup()


class QemuRunner(Runner):
    """`cycles`: the cycle model to run with (default: the board's own; None: none, QEMU alone).
    The console is a TCP socket: no baud rate."""

    caps = RunnerCaps(unit=Unit.INSTRUCTIONS, exit_status=True, paced=True)

    def __init__(self, board: Board, cycles: CycleModel | None | bool = True):
        if board.qemu is None:
            raise TargetError(f"{board.name} is not a QEMU board")
        self.board = board
        if cycles is True:
            cycles = None if os.environ.get(NO_CYCLES_ENV) else CycleModel.for_board(board)
        self.cycles = cycles or None
        self.caps = replace(QemuRunner.caps, estimates_cycles=self.cycles is not None)

    def start(self, elf: Path, baudrate: int = BAUD_RATE) -> QemuSession:
        qemu = require_tool("qemu-system-arm", "qemu-system-arm")
        if not Path(elf).is_file():
            raise TargetError(f"firmware {elf} does not exist")
        interrupts.check()   # a Ctrl-C swallowed on its way up ends the command here, not after the run
        for _ in range(PORT_ATTEMPTS):
            session = self._launch(qemu, Path(elf))
            if session is not None:
                return session
        raise TargetError(f"QEMU could not listen on a free TCP port in {PORT_ATTEMPTS} attempts")

    def _launch(self, qemu: str, elf: Path) -> QemuSession | None:
        """Start QEMU on a free port; None if another process took the port meanwhile."""
        port = _free_port()
        log = tempfile.TemporaryFile()
        scratch, trace, plugin = None, None, None
        if self.cycles is not None:
            scratch = tempfile.TemporaryDirectory(prefix="mtk-cycles-")
            out = Path(scratch.name) / "cycles.txt"
            plugin = self.cycles.plugin_argument(elf, Path(scratch.name) / "table.txt", out)
            trace = CycleTrace(out, self.cycles)
        process = subprocess.Popen(die_with_parent(qemu_command(qemu, self.board.qemu.machine, elf, port, plugin)),
                                   stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
        try:
            return QemuSession(process, log, self._connect(process, port), trace, scratch)
        except TargetError:
            process.kill()
            process.wait()
            if scratch is not None:
                scratch.cleanup()
            log.seek(0)
            output = log.read().decode(errors="replace").strip()
            log.close()
            if "Address already in use" in output:
                return None
            raise TargetError(f"QEMU ({self.board.qemu.machine}) did not start:\n{output[-2000:]}") from None

    @staticmethod
    def _connect(process: subprocess.Popen, port: int) -> SerialLink:
        deadline = time.monotonic() + CONNECT_TIMEOUT_S
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise TargetError(f"QEMU exited with status {process.returncode}")
            try:
                return SerialLink.open(f"socket://127.0.0.1:{port}")
            except serial.SerialException:
                time.sleep(0.02)
        raise TargetError(f"QEMU's serial port 127.0.0.1:{port} did not open within {CONNECT_TIMEOUT_S:g} s")
