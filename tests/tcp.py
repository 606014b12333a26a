"""Loopback TCP helpers for tests that start servers (QEMU's serial and GDB ports, labgrid daemons)."""

from __future__ import annotations

import socket
import time


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
        return True
    except OSError:
        return False


def wait_listening(port: int, what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not listening(port):
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not listen on port {port} within {timeout:g} s")
        time.sleep(0.05)
