"""SerialLink over a real loopback TCP socket through pyserial's socket:// handler."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pytest

from mtk.errors import TargetError
from mtk.transport.protocol import FirmwareClient
from mtk.transport.serial_link import SerialLink


@pytest.fixture
def server() -> Iterator[tuple[SerialLink, socket.socket]]:
    """A connected (link, peer socket) pair: the peer plays the target."""
    listener = socket.create_server(("127.0.0.1", 0))
    accepted: list[socket.socket] = []
    thread = threading.Thread(target=lambda: accepted.append(listener.accept()[0]))
    thread.start()
    link = SerialLink.open(f"socket://127.0.0.1:{listener.getsockname()[1]}")
    thread.join(5)
    yield link, accepted[0]
    link.close()
    accepted[0].close()
    listener.close()


def test_nagle_is_off(server):
    link, _ = server
    assert link._port._socket.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)


def test_lines_split_across_packets(server):
    link, peer = server
    peer.sendall(b"m-na")
    assert link.read_line(0.1) is None
    peer.sendall(b"me-dut-[mtk]\r\nm-ready\r\nm-par")
    assert link.read_line(1) == "m-name-dut-[mtk]"
    assert link.read_line(1) == "m-ready"
    assert link.read_line(0.2) is None
    assert link.last_lines == ["m-name-dut-[mtk]", "m-ready", "m-par"]
    assert "  | m-par" in link.describe_last_lines()


def test_write_reaches_the_target(server):
    link, peer = server
    link.write(b"name%")
    peer.settimeout(2)
    assert peer.recv(16) == b"name%"


def test_read_timeout_is_bounded(server):
    link, _ = server
    start = time.monotonic()
    assert link.read_line(0.2) is None
    assert time.monotonic() - start < 1


def test_closed_connection_is_a_target_error(server):
    link, peer = server
    peer.sendall(b"m-init-done\r\n")
    peer.close()
    assert link.read_line(1) == "m-init-done"
    with pytest.raises(TargetError, match=r"(?s)closed the serial connection.*\| m-init-done"):
        link.read_line(1)


def _answer_then_ready(peer: socket.socket, answer: bytes) -> None:
    peer.settimeout(5)
    peer.recv(64)
    peer.sendall(answer + b"m-ready\r\n")


@pytest.mark.parametrize("answer", [b"m-mtk-info-[zzz]\r\n", b"m-mtk-info-[model:x,arena:lots]\r\n", b"\xff\xfe\r\n"])
def test_garbage_answer_is_a_target_error(server, answer):
    link, peer = server
    threading.Thread(target=_answer_then_ready, args=(peer, answer)).start()
    with pytest.raises(TargetError, match="'mtk-info'"):
        FirmwareClient(link, timeout=2).info()


def test_endless_garbage_does_not_keep_the_host_waiting(server):
    link, peer = server
    stop = threading.Event()

    def chatter() -> None:
        while not stop.is_set():
            peer.sendall(b"noise\r\n")
            time.sleep(0.01)

    thread = threading.Thread(target=chatter)
    thread.start()
    start = time.monotonic()
    try:
        with pytest.raises(TargetError, match=r"(?s)did not answer 'name' within 0.5 s.*\| noise"):
            FirmwareClient(link, timeout=0.5).name()
    finally:
        stop.set()
        thread.join()
    assert time.monotonic() - start < 2
