"""A line-oriented serial connection to a target, through pyserial.

The same class talks to QEMU's serial port on a loopback TCP socket ("socket://127.0.0.1:PORT")
and to a board's USB serial port ("/dev/ttyACM0"). It remembers the last lines received so
that errors can show what the target said last.
"""

from __future__ import annotations

import socket
import time
from collections import deque

import serial
from serial.urlhandler.protocol_socket import Serial as SocketSerial

from ..errors import TargetError

BAUD_RATE = 115200
HISTORY_LINES = 12
READ_CHUNK_BYTES = 65536


class SerialLink:
    def __init__(self, port: serial.SerialBase):
        self._port = port
        self._pending = b""
        self._history: deque[str] = deque(maxlen=HISTORY_LINES)

    @classmethod
    def open(cls, url: str, baudrate: int = BAUD_RATE) -> SerialLink:
        """Open `url` (a pyserial URL or device path); raises serial.SerialException if it cannot.
        What the target sends while the port opens is kept: pyserial's open() would drop it."""
        port = serial.serial_for_url(url, baudrate=baudrate, timeout=0.5, do_not_open=True)
        port.reset_input_buffer = lambda: None   # open() calls it; a target that speaks first loses nothing
        port.open()
        return cls.over(port)

    @classmethod
    def over(cls, port: serial.SerialBase) -> SerialLink:
        """A link over a port opened elsewhere (labgrid's SerialDriver opens a place's port)."""
        sock = _raw_socket(port)
        if sock is not None:  # pyserial's socket:// leaves Nagle on: ~40 ms per round trip
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return cls(port)

    @property
    def last_lines(self) -> list[str]:
        """The last lines received, and a trailing partial line if any."""
        partial = self._pending.decode("ascii", errors="replace").strip()
        return list(self._history) + ([partial] if partial else [])

    def describe_last_lines(self) -> str:
        lines = self.last_lines
        if not lines:
            return "the target printed nothing"
        return "the target's last output:\n" + "\n".join(f"  | {line}" for line in lines)

    def write(self, data: bytes) -> None:
        try:
            self._port.write(data)
            self._port.flush()
        except (serial.SerialException, OSError) as err:
            raise TargetError(f"cannot write to the target ({err})\n{self.describe_last_lines()}") from err

    def read_line(self, timeout: float) -> str | None:
        """The next line without its line end, or None if none completes within `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self._pending:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            self._port.timeout = min(remaining, 0.5)
            try:
                chunk = self._port.read(1)
                chunk += self._available() if chunk else b""
            except (serial.SerialException, OSError) as err:
                raise TargetError(f"the target closed the serial connection ({err})\n"
                                  f"{self.describe_last_lines()}") from err
            self._pending += chunk
        raw, _, self._pending = self._pending.partition(b"\n")
        line = raw.rstrip(b"\r").decode("ascii", errors="replace")
        self._history.append(line)
        return line

    def _available(self) -> bytes:
        """Whatever has arrived, without waiting: a socket's in_waiting says only 0 or 1."""
        sock = _raw_socket(self._port)
        if sock is None:
            return self._port.read(self._port.in_waiting) if self._port.in_waiting else b""
        try:
            data = sock.recv(READ_CHUNK_BYTES, socket.MSG_DONTWAIT)
        except BlockingIOError:
            return b""
        # b"": closed after what read(1) got. Those bytes still count (the last may end the
        # target's last line, e.g. m-mtk-exit-0); the next read(1) reports the closed connection.
        return data

    def close(self) -> None:
        self._port.close()


def _raw_socket(port: serial.SerialBase) -> socket.socket | None:
    """The TCP socket of a plain socket:// port. An rfc2217:// port has one too, but its reader
    thread owns it (telnet framing): reading it here would steal and garble the target's bytes."""
    return port._socket if isinstance(port, SocketSerial) else None
