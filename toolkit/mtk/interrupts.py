"""Signals that end a command (Ctrl-C, SIGTERM, SIGHUP): each unwinds as a KeyboardInterrupt (QEMU
stopped, temporary folders removed) and is also recorded as it arrives, so that one swallowed on its
way up by code mtk does not control (a library's catch-all around a call that was interrupted), or
turned into another error (TVM's FFI raises a KeyboardInterrupt from a Python function it called as
a RuntimeError), still ends the command at the next point that checks: before a firmware build,
before QEMU starts, and when the command returns or fails. A tool mtk runs (a compiler, a build) runs in a process group of its own
that is stopped when the command ends on a signal (`child_group`)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import threading
from contextlib import contextmanager
from typing import Any, Iterator

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
    when mtk starts stays ignored: SIGHUP under nohup, SIGINT in a shell's background job. A
    KeyboardInterrupt that Python cannot raise (its handler ran in a __del__ or a weakref callback)
    is not printed as "Exception ignored": its signal is recorded and ends the command."""
    _received.clear()
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {s: signal.signal(s, handler) for s in SIGNALS if signal.getsignal(s) != signal.SIG_IGN}
    unraisable_hook = sys.unraisablehook
    sys.unraisablehook = lambda unraisable: None if isinstance(unraisable.exc_value, KeyboardInterrupt) \
        else unraisable_hook(unraisable)
    try:
        yield
    finally:
        sys.unraisablehook = unraisable_hook
        for s, h in previous.items():
            signal.signal(s, h)


def stop_group(process: subprocess.Popen, grace_s: float = 5.0) -> None:
    """SIGTERM to the process group `process` leads, SIGKILL if it is still there after `grace_s`."""
    for signum in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, signum)
            process.wait(grace_s)
            return
        except ProcessLookupError:
            return
        except subprocess.TimeoutExpired:
            continue


@contextmanager
def child_group(command: list[str], **popen: Any) -> Iterator[subprocess.Popen]:
    """`command` started (unless a signal came already) in a process group of its own, with a temporary
    folder of its own as TMPDIR. When the block ends on an exception (a signal's KeyboardInterrupt),
    the whole group gets SIGTERM (compilers remove their temporary files; cc1 and ld, not only the
    gcc driver), then SIGKILL; the folder goes once the group has ended."""
    check()
    env = popen.pop("env", os.environ)
    with tempfile.TemporaryDirectory(prefix="mtk-tool-") as tmp, \
            subprocess.Popen(command, env={**env, "TMPDIR": tmp}, start_new_session=True, **popen) as process:
        try:
            yield process
        except BaseException:
            stop_group(process)
            raise
