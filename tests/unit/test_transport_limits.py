"""A misbehaving target: bytes sent before the port opened are kept, reads are
buffered, `mtk-exit` has one deadline however much the target keeps printing, and an output answer
of the wrong length is a TargetError, not a ValueError."""

from __future__ import annotations

import socket
import threading
import time

import pytest

from mtk.compiled import CompiledModel
from mtk.errors import TargetError
from mtk.pipeline import _unpack
from mtk.transport.protocol import FirmwareClient
from mtk.transport.serial_link import SerialLink

from checkout import FIXTURES


def connected_pair(first_words: bytes = b"") -> tuple[SerialLink, socket.socket, socket.socket]:
    """A link and the peer playing the target; the peer sends `first_words` as soon as it accepts."""
    listener = socket.create_server(("127.0.0.1", 0))
    accepted: list[socket.socket] = []

    def accept() -> None:
        peer = listener.accept()[0]
        peer.sendall(first_words)
        accepted.append(peer)
    thread = threading.Thread(target=accept)
    thread.start()
    time.sleep(0.05)
    link = SerialLink.open(f"socket://127.0.0.1:{listener.getsockname()[1]}")
    thread.join(5)
    return link, accepted[0], listener


def test_words_sent_while_the_port_opens_are_kept():
    banner = b"mtk firmware\r\nm-ready\r\n"
    for _ in range(20):
        link, peer, listener = connected_pair(banner)
        try:
            assert link.read_line(2) == "mtk firmware" and link.read_line(2) == "m-ready"
        finally:
            link.close(), peer.close(), listener.close()


def test_a_large_answer_is_read_in_chunks():
    link, peer, listener = connected_pair()
    try:
        payload = b"m-mtk-out-" + b"ab" * 500_000 + b"\r\n"
        threading.Thread(target=peer.sendall, args=(payload,)).start()
        reads = 0
        original = link._port.read

        def counted(n=1):
            nonlocal reads
            reads += 1
            return original(n)
        link._port.read = counted
        line = link.read_line(30)
        assert line is not None and len(line) == len(payload) - 2
        assert reads < 10_000   # one byte at a time would be a million reads
    finally:
        link.close(), peer.close(), listener.close()


def test_exit_has_one_deadline_while_the_target_keeps_printing():
    link, peer, listener = connected_pair()
    stop = threading.Event()

    def chatter() -> None:
        while not stop.is_set():
            try:
                peer.sendall(b"still here\r\n")
            except OSError:
                return
            time.sleep(0.05)
    threading.Thread(target=chatter, daemon=True).start()
    try:
        start = time.monotonic()
        with pytest.raises(TargetError, match="did not exit within 1 s"):
            FirmwareClient(link, timeout=1.0).exit(0)
        assert time.monotonic() - start < 10
    finally:
        stop.set()
        link.close(), peer.close(), listener.close()


def test_output_answer_of_the_wrong_length_is_a_target_error():
    compiled = CompiledModel.load(FIXTURES / "hostrun_sample")
    with pytest.raises(TargetError, match=f"sent 3 output bytes; .* take {compiled.output_bytes}"):
        _unpack(compiled, b"\x00\x01\x02")


@pytest.mark.parametrize("command", ["run", "validate", "bench"])
def test_timeout_option_reaches_the_run_options(command):
    from mtk.cli import build_parser
    from mtk.commands._target import run_options
    args = build_parser(only=command).parse_args([command, "m.tflite", "--timeout", "2.5"])
    assert run_options(args, "mps2/an386").timeout == 2.5
    with pytest.raises(SystemExit) as exit_:
        build_parser(only=command).parse_args([command, "m.tflite", "--timeout", "0"])
    assert exit_.value.code == 2
