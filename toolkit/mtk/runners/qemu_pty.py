"""QEMU serving a firmware to another program: the console UART on a pseudo-terminal, and the guest
paced to the board's clock in real time.

Pacing has two parts. `-icount shift=S,align=on,sleep=on` makes every instruction take 2^S ns of
virtual time and holds virtual time to the host's clock while the guest runs; S is the largest
shift at which the guest still runs at least as fast as the board (25 MHz: S=5, 31.25 M
instructions/s). Then a governor stops and continues the VM on its monitor so that it runs the
fraction clock × 2^S / 1 GHz of the time (25 MHz: 80 %): both virtual time and the clock `align`
compares it with stand still while the VM is stopped, so the guest makes on average exactly the
board's instructions per second of host time, within one governor period.

The firmware is built for S (mtk_board.h's SysTick ratio), so its counts, and its timestamps in
microseconds of the board's clock, are the same instruction counts as under mtk's unpaced runs.
"""

from __future__ import annotations

import math
import re
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from .. import interrupts
from ..boards import Board
from ..cycles.laps import LapClock, LapProxy
from ..cycles.model import CycleModel, CycleTrace
from ..errors import TargetError
from ..platforms.base import require_tool
from .qemu import die_with_parent, stop_process

PTY_LINE = re.compile(rb"char device redirected to (\S+)")
START_TIMEOUT_S = 10.0
GOVERNOR_PERIOD_S = 0.005   # how often the governor decides between running and stopped


def pacing_shift(clock_hz: int) -> int:
    """The -icount shift at which the guest runs no slower than a board clocked at `clock_hz`."""
    return max(0, math.floor(math.log2(1e9 / clock_hz) + 1e-9))


def run_fraction(clock_hz: int, shift: int) -> float:
    """The share of host time the VM must run at 2^shift ns an instruction to make `clock_hz`."""
    return clock_hz * 2**shift / 1e9


def paced_qemu_command(qemu: str, machine: str, elf: Path, shift: int, monitor: Path,
                       plugin: str | None = None) -> list[str]:
    """With a plugin (the cycle model) QEMU starts stopped (-S): the pty in front of QEMU's must see
    every byte, and continues it once open."""
    return [qemu, "-M", machine, "-kernel", str(elf), *(["-S"] if plugin else []),
            "-icount", f"shift={shift},align=on,sleep=on",
            "-serial", "pty", "-display", "none", "-monitor", f"unix:{monitor},server=on,wait=off",
            "-no-reboot", "-semihosting-config", "enable=on,target=native",
            *(["-plugin", plugin] if plugin else [])]


def monitor_command(monitor: socket.socket, command: str) -> None:
    """An HMP command on QEMU's (non-blocking) monitor socket; its echo and prompts read and dropped."""
    monitor.sendall(command.encode() + b"\n")
    try:
        while monitor.recv(4096):
            pass
    except BlockingIOError:
        pass


class Governor(threading.Thread):
    """Keeps the VM running `fraction` of the time: `cont` while its running time is behind
    fraction × elapsed, `stop` once ahead (HMP commands on QEMU's monitor socket)."""

    def __init__(self, monitor: socket.socket, fraction: float):
        super().__init__(daemon=True)
        self.monitor = monitor
        self.fraction = fraction
        self.done = threading.Event()

    def _send(self, command: str) -> None:
        monitor_command(self.monitor, command)

    def run(self) -> None:
        start = last = time.monotonic()
        running, ran = True, 0.0
        try:
            while not self.done.wait(GOVERNOR_PERIOD_S):
                now = time.monotonic()
                ran += (now - last) if running else 0.0
                last = now
                behind = ran < self.fraction * (now - start)
                if behind != running:
                    self._send("cont" if behind else "stop")
                    running = behind
        except OSError:
            pass   # QEMU has ended


class PacedQemu:
    """A running QEMU with the firmware's UART on a pty. Use as a context manager: leaving it stops QEMU.
    With a cycle model, `port` is a pty in front of QEMU's whose lap timestamps are estimated (cycles.laps)."""

    def __init__(self, board: Board, elf: Path, shift: int, cycles: CycleModel | None = None):
        if board.qemu is None:
            raise TargetError(f"{board.name} is not a QEMU board")
        qemu = require_tool("qemu-system-arm", "qemu-system-arm")
        interrupts.check()
        self._folder = tempfile.TemporaryDirectory(prefix="mtk-serve-")
        monitor_path = Path(self._folder.name) / "monitor"
        self._log = tempfile.TemporaryFile()
        self._governor: Governor | None = None
        self._proxy: LapProxy | None = None
        plugin = None if cycles is None else cycles.plugin_argument(
            Path(elf), Path(self._folder.name) / "table.txt", Path(self._folder.name) / "cycles.txt")
        self.process = subprocess.Popen(die_with_parent(paced_qemu_command(qemu, board.qemu.machine, Path(elf), shift,
                                                                           monitor_path, plugin)),
                                        stdin=subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT)
        try:
            self.port = self._wait_for_pty()
            monitor = None
            if cycles is not None:
                trace = CycleTrace(Path(self._folder.name) / "cycles.txt", cycles)
                self._proxy = LapProxy(self.port, LapClock(trace, board.clock_hz // 1_000_000))
                self.port = self._proxy.port
                monitor = self._connect(monitor_path)
                monitor_command(monitor, "cont")
            fraction = run_fraction(board.clock_hz, shift)
            if fraction < 1.0:
                self._governor = Governor(monitor or self._connect(monitor_path), fraction)
                self._governor.start()
            elif monitor is not None:
                monitor.close()
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

    def _connect(self, path: Path) -> socket.socket:
        monitor = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            try:
                monitor.connect(str(path))
                monitor.setblocking(False)
                return monitor
            except OSError:
                if time.monotonic() > deadline or self.process.poll() is not None:
                    raise TargetError(f"QEMU's monitor {path} did not open:\n{self.log()}") from None
                time.sleep(0.02)

    def wait(self) -> int:
        """Until QEMU ends; its exit status."""
        return self.process.wait()

    def close(self) -> None:
        if self._proxy is not None:
            self._proxy.close()
        if self._governor is not None:
            self._governor.done.set()
            self._governor.join()
            self._governor.monitor.close()
        stop_process(self.process)
        self._log.close()
        self._folder.cleanup()

    def __enter__(self) -> PacedQemu:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
