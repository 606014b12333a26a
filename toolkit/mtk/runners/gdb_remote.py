"""Loading a firmware through a GDB server (QEMU's `-gdb`, OpenOCD's or pyOCD's): the part of
the GDB remote serial protocol a `load` needs, memory writes of the ELF's loadable segments,
then a monitor command that resets the target, then detach so that it runs.

Memory is written with `M` packets, so the code must sit in memory the server writes like RAM:
QEMU's MPS2 boards (their "flash" is RAM). Flash on silicon goes through a flash tool instead.
"""

from __future__ import annotations

import re
import socket
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from elftools.common.exceptions import ELFError
from elftools.elf.elffile import ELFFile

from ..errors import TargetError

CONNECT_TIMEOUT_S = 5.0
REPLY_TIMEOUT_S = 10.0
DEFAULT_PACKET_BYTES = 4096
STOP_REPLY = re.compile(r"[ST][0-9a-fA-F]{2}")


@dataclass(frozen=True)
class Segment:
    address: int   # the load address (LMA): initialised data is loaded where the startup copies it from
    data: bytes


def loadable_segments(elf: Path) -> list[Segment]:
    try:
        with open(elf, "rb") as f:
            segments = [Segment(s["p_paddr"], s.data()) for s in ELFFile(f).iter_segments()
                        if s["p_type"] == "PT_LOAD" and s["p_filesz"] > 0]
    except (OSError, ELFError) as err:
        raise TargetError(f"cannot read the firmware {elf}: {err}") from None
    if not segments:
        raise TargetError(f"{elf} has nothing to load")
    return segments


def _checksum(payload: bytes) -> bytes:
    return b"%02x" % (sum(payload) & 0xFF)


class GdbRemote:
    """A connection to a GDB server. Each request waits for its reply (`$...#cs`, acknowledged)."""

    def __init__(self, host: str, port: int):
        self.where = f"the GDB server at {host}:{port}"
        try:
            self._socket = socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_S)
        except OSError as err:
            raise TargetError(f"cannot connect to {self.where}: {err}") from None
        self._socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._socket.settimeout(REPLY_TIMEOUT_S)
        self._pending = b""
        try:
            features = self.request("qSupported:swbreak+")
        except TargetError:
            self.close()
            raise
        sizes = [f.split("=", 1)[1] for f in features.split(";") if f.startswith("PacketSize=")]
        self.packet_bytes = int(sizes[0], 16) if sizes else DEFAULT_PACKET_BYTES

    def _receive(self) -> bytes:
        try:
            chunk = self._socket.recv(65536)
        except OSError as err:
            raise TargetError(f"{self.where} did not answer: {err}") from None
        if not chunk:
            raise TargetError(f"{self.where} closed the connection")
        return chunk

    def _read_packet(self) -> str:
        while True:
            start = self._pending.find(b"$")
            end = self._pending.find(b"#", start)
            if start >= 0 and end >= 0 and len(self._pending) >= end + 3:
                payload, self._pending = self._pending[start + 1:end], self._pending[end + 3:]
                self._socket.sendall(b"+")
                return payload.decode("latin-1")
            self._pending += self._receive()

    def request(self, payload: str, console: list[str] | None = None) -> str:
        """Send one packet; its reply. Console output (`O...`) is skipped (appended, decoded, to
        `console` if given), and so are stop replies to anything but `?`: a server that halts the
        target when GDB connects may report that stop late (QEMU does)."""
        data = payload.encode("latin-1")
        self._socket.sendall(b"$" + data + b"#" + _checksum(data))
        while True:
            reply = self._read_packet()
            if reply.startswith("O") and reply != "OK":
                if console is not None:
                    console.append(bytes.fromhex(reply[1:]).decode(errors="replace"))
            elif payload == "?" or not STOP_REPLY.match(reply):
                return reply

    def _expect_ok(self, payload: str, what: str, console: list[str] | None = None) -> None:
        reply = self.request(payload, console)
        if reply != "OK":
            raise TargetError(f"{self.where} refused {what}: {reply or 'not supported'}")

    def write_memory(self, address: int, data: bytes) -> None:
        chunk = max(16, (self.packet_bytes - 32) // 2)
        for offset in range(0, len(data), chunk):
            part = data[offset:offset + chunk]
            self._expect_ok(f"M{address + offset:x},{len(part):x}:{part.hex()}",
                            f"a write of {len(part)} bytes at 0x{address + offset:08x}")

    def monitor(self, command: str) -> str:
        """`monitor <command>`; what the server printed for it."""
        printed: list[str] = []
        self._expect_ok("qRcmd," + command.encode().hex(), f"'monitor {command}'", printed)
        return "".join(printed)

    def qemu_counts_instructions(self) -> bool:
        """Whether the QEMU behind this server runs under -icount, its virtual clock counting executed
        instructions: QEMU's `info jit` reports the host-guest clock drift only then."""
        return "Host - Guest clock" in self.monitor("info jit")

    def detach(self) -> None:
        """Let the target run and close the connection."""
        try:
            self.request("D")
        finally:
            self.close()

    def close(self) -> None:
        self._socket.close()


def load_elf(host: str, port: int, elf: Path, reset_command: str,
             check: Callable[[GdbRemote], None] | None = None) -> None:
    """Write `elf` through the GDB server at host:port, reset the target with `monitor
    <reset_command>` (it starts from the new vector table) and let it run. `check`: called on the
    connection first, while the target is halted (e.g. that a QEMU stand-in counts instructions)."""
    segments = loadable_segments(elf)
    gdb = GdbRemote(host, port)
    try:
        gdb.request("?")   # servers halt the target when GDB connects; this is its stop reason
        if check is not None:
            check(gdb)
        for segment in segments:
            gdb.write_memory(segment.address, segment.data)
        gdb.monitor(reset_command)
    except BaseException:
        gdb.close()
        raise
    gdb.detach()
