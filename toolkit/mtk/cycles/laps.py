"""MLPerf Tiny timestamps in estimated cycles under QEMU (`mtk serve`).

The firmware's `m-lap-us-N` lines count instructions (one a cycle of the QEMU board's clock). Between
two of them, the inferences the cycle model measured are put at their estimated cycles instead of
their instructions, the rest (the harness's own code, waiting for the host) left at one instruction a
cycle; the sum becomes microseconds at the estimated board's clock. A pty stands between QEMU's
pty and the runner and rewrites those lines on the way, every other byte unchanged.
"""

from __future__ import annotations

import os
import re
import threading
import tty

from .model import CycleTrace

LAP = re.compile(rb"^m-lap-us-(\d+)\r?$")


class LapClock:
    """Rewrites the firmware's lap timestamps into estimated microseconds."""

    def __init__(self, trace: CycleTrace, firmware_units_per_us: int):
        self.trace = trace
        self.units_per_us = firmware_units_per_us   # the firmware's instructions per microsecond (its MTK_CLOCK_HZ)
        self._firmware_us: int | None = None
        self._estimated_cycles = 0

    def estimated_us(self, firmware_us: int, offset: int) -> int:
        """The estimated timestamp of a lap the firmware stamped `firmware_us`, printed from the console's
        `offset`-th byte on (the inferences that ended before it are the lap's)."""
        inferences = self.trace.take_inferences(until_uart=offset)
        if self._firmware_us is not None:
            instructions = (firmware_us - self._firmware_us) * self.units_per_us
            self._estimated_cycles += max(0, instructions - sum(m.insns for m in inferences)) + \
                sum(m.cycles for m in inferences)
        else:
            self._estimated_cycles = firmware_us * self.units_per_us
        self._firmware_us = firmware_us
        return round(self._estimated_cycles * 1e6 / self.trace.model.clock_hz)

    def rewrite(self, line: bytes, offset: int) -> bytes:
        """`line` (without its \\n, from the console's `offset`-th byte), its timestamp estimated if it is a lap."""
        match = LAP.match(line)
        if match is None:
            return line
        return b"m-lap-us-%d" % self.estimated_us(int(match.group(1)), offset) + (b"\r" if line.endswith(b"\r") else b"")


class LapProxy:
    """A pty for the runner in front of QEMU's: bytes pass both ways, lap lines rewritten by `clock`."""

    def __init__(self, qemu_pty: str, clock: LapClock):
        self.clock = clock
        self._qemu = os.open(qemu_pty, os.O_RDWR | os.O_NOCTTY)
        tty.setraw(self._qemu)
        self._master, slave = os.openpty()
        tty.setraw(slave)
        self.port = os.ttyname(slave)
        self._slave = slave   # kept open: the runner may open and close the port as it likes
        self._done = threading.Event()
        self._threads = [threading.Thread(target=self._to_runner, daemon=True),
                         threading.Thread(target=self._copy, args=(self._master, self._qemu), daemon=True)]
        for thread in self._threads:
            thread.start()

    def _copy(self, source: int, sink: int) -> None:
        try:
            while not self._done.is_set():
                data = os.read(source, 4096)
                if not data:
                    return
                os.write(sink, data)
        except OSError:
            return

    def _to_runner(self) -> None:
        pending, offset = b"", 0   # offset: the console bytes before `pending`
        try:
            while not self._done.is_set():
                data = os.read(self._qemu, 4096)
                if not data:
                    return
                pending += data
                *lines, pending = pending.split(b"\n")
                out = []
                for line in lines:
                    out.append(self.clock.rewrite(line, offset) + b"\n")
                    offset += len(line) + 1
                if pending and not b"m-lap-us-".startswith(pending[:9]):   # not a lap being written: pass it on
                    out.append(pending)
                    offset, pending = offset + len(pending), b""
                os.write(self._master, b"".join(out))
        except OSError:
            return

    def close(self) -> None:
        self._done.set()
        for fd in (self._qemu, self._master, self._slave):
            try:
                os.close(fd)
            except OSError:
                pass
