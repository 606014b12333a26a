"""Signals that end a command (Ctrl-C, SIGTERM, SIGHUP): each unwinds as a KeyboardInterrupt (QEMU
stopped, temporary folders removed) and is also recorded as it arrives, so that one swallowed on its
way up by code mtk does not control (a library's catch-all around a call that was interrupted) still
ends the command at the next point that checks: before a firmware build, before QEMU starts, and
when the command returns."""

from __future__ import annotations

import signal
import threading
from contextlib import contextmanager
from typing import Iterator

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
_received: list[int] = []


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP: unwinds like Ctrl-C."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def _interrupt_for(signum: int) -> KeyboardInterrupt:
    return KeyboardInterrupt() if signum == signal.SIGINT else Terminated(signum)


def handler(signum: int, frame: object) -> None:
    _received.append(signum)
    raise _interrupt_for(signum)


def check() -> None:
    """Raise again the last signal that arrived, if one did: it ends the command even if something
    swallowed its KeyboardInterrupt."""
    if _received:
        raise _interrupt_for(_received[-1])


def handled_by_command() -> None:
    """The command ended on the signal as it means to (serve stops on Ctrl-C): not raised again."""
    _received.clear()


@contextmanager
def handled() -> Iterator[None]:
    """The signals above handled by `handler` for the block (in the main thread, where Python runs
    handlers; elsewhere nothing changes), the previous handlers restored after it. A signal ignored
    when mtk starts stays ignored: SIGHUP under nohup, SIGINT in a shell's background job."""
    _received.clear()
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {s: signal.signal(s, handler) for s in SIGNALS if signal.getsignal(s) != signal.SIG_IGN}
    try:
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, h)
