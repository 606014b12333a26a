"""A signal whose KeyboardInterrupt something swallowed on its way up (a library's catch-all) still
ends the command: before a firmware build, before QEMU starts, and when the command returns."""

from __future__ import annotations

import ast
import os
import signal
import subprocess
import sys
import time

import pytest

from checkout import TOOLKIT, toolkit_env
from mtk import fsutil, interrupts
from mtk.boards import get_board
from mtk.cli import main
from mtk.platforms.base import run_build
from mtk.runners.qemu import QemuRunner


def signal_here(signum: int = signal.SIGINT) -> None:
    """The signal, and time for its handler to run here."""
    os.kill(os.getpid(), signum)
    time.sleep(5)


def swallowed(signum: int = signal.SIGINT) -> None:
    try:
        signal_here(signum)
    except KeyboardInterrupt:
        pass   # what a catch-all does


def test_a_swallowed_ctrl_c_ends_the_command_when_it_returns(monkeypatch, capsys):
    def boards(args):
        swallowed()
        print("all boards")
        return 0
    monkeypatch.setattr("mtk.commands.boards.run", boards)
    assert main(["boards"]) == 130
    assert "mtk boards: interrupted" in capsys.readouterr().err


def test_a_swallowed_sigterm_too(monkeypatch, capsys):
    monkeypatch.setattr("mtk.commands.boards.run", lambda args: swallowed(signal.SIGTERM) or 0)
    assert main(["boards"]) == 128 + signal.SIGTERM


def test_a_ctrl_c_that_a_library_turned_into_another_error_ends_the_command_as_interrupted(monkeypatch, capsys):
    """TVM's FFI turns a KeyboardInterrupt raised in a Python function it calls (a pass, a callback) into
    a RuntimeError: the command still ends interrupted (130), not with an internal error (70)."""
    import tvm_ffi
    tvm_ffi.register_global_func("mtk.test.interrupted_callback", signal_here, override=True)

    def compile_with_a_callback(args):
        tvm_ffi.get_global_func("mtk.test.interrupted_callback")()
        return 0
    monkeypatch.setattr("mtk.commands.boards.run", compile_with_a_callback)
    assert main(["boards"]) == 130
    assert "mtk boards: interrupted" in capsys.readouterr().err


def test_no_qemu_and_no_build_start_after_a_swallowed_ctrl_c(tmp_path):
    elf = tmp_path / "firmware.elf"
    elf.write_bytes(b"\x7fELF")
    marker = tmp_path / "built"
    with interrupts.handled():
        swallowed()
        with pytest.raises(KeyboardInterrupt):
            QemuRunner(get_board("mps2/an386")).start(elf)
        with pytest.raises(KeyboardInterrupt):
            run_build(["touch", str(marker)], cwd=tmp_path)
    assert not marker.exists()


LOST_IN_A_WEAKREF_CALLBACK = """
import os, signal, sys, time, weakref
import mtk.commands.boards
from mtk.cli import main

class Held:
    pass

def signal_here(ref):
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(5)

def boards(args):
    held = Held()
    reference = weakref.ref(held, signal_here)
    del held
    print("all boards")
    return 0

mtk.commands.boards.run = boards
sys.exit(main(["boards"]))
"""


def test_a_ctrl_c_lost_in_a_weakref_callback_ends_the_command_without_a_traceback():
    """Python drops an exception raised in a weakref callback or __del__, printing "Exception ignored" and
    a traceback: a Ctrl-C whose handler runs there (importlib's module locks use one) ends the command
    all the same, in one line."""
    done = subprocess.run([sys.executable, "-c", LOST_IN_A_WEAKREF_CALLBACK], capture_output=True, text=True,
                          env=toolkit_env(), timeout=60)
    assert (done.returncode, done.stderr) == (130, "mtk boards: interrupted\n")


@pytest.mark.parametrize("atomic_output", ["file", "folder"])
def test_no_output_is_committed_after_a_swallowed_ctrl_c(atomic_output, tmp_path):
    out = tmp_path / "out"
    with interrupts.handled(), pytest.raises(KeyboardInterrupt):
        if atomic_output == "file":
            with fsutil.atomic_output_file(out) as tmp:
                swallowed()
                tmp.write_text("whole, but written after Ctrl-C")
        else:
            with fsutil.atomic_output_dir(out) as tmp:
                swallowed()
                (tmp / "a").write_text("whole, but written after Ctrl-C")
    assert list(tmp_path.iterdir()) == []


def test_nothing_is_raised_without_a_signal(tmp_path):
    with interrupts.handled():
        interrupts.check()
        assert run_build(["true"], cwd=tmp_path) == []
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_signal_ignored_at_start_stays_ignored():
    """nohup mtk ...: a hangup must not end it; a shell's background job ignores Ctrl-C."""
    previous = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        with interrupts.handled():
            assert signal.getsignal(signal.SIGHUP) == signal.SIG_IGN
            assert signal.getsignal(signal.SIGTERM) == interrupts.handler
            os.kill(os.getpid(), signal.SIGHUP)
            interrupts.check()
    finally:
        signal.signal(signal.SIGHUP, previous)


def test_a_command_that_ends_on_ctrl_c_as_it_means_to_exits_0(monkeypatch):
    """mtk serve stops on Ctrl-C: that is its normal end."""
    def serve(args):
        try:
            swallowed()
            raise KeyboardInterrupt
        except KeyboardInterrupt:
            interrupts.handled_by_command()
            return 0
    monkeypatch.setattr("mtk.commands.boards.run", serve)
    assert main(["boards"]) == 0


def test_only_interrupts_installs_signal_handlers():
    """One mechanism: a command's own handler would not record its signal (serve and the labgrid bench
    stop on the CLI's; serve ends 0, every other command 128 + the signal)."""
    installers = []
    for path in sorted((TOOLKIT / "mtk").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "signal" \
                    and isinstance(node.func.value, ast.Name) and node.func.value.id == "signal":
                installers.append(path.name)
    assert set(installers) == {"interrupts.py"}
