"""A signal whose KeyboardInterrupt something swallowed on its way up (a library's catch-all) still
ends the command: before a firmware build, before QEMU starts, and when the command returns."""

from __future__ import annotations

import os
import signal
import time

import pytest

from mtk import interrupts
from mtk.boards import get_board
from mtk.cli import main
from mtk.platforms.base import run_build
from mtk.runners.qemu import QemuRunner


def swallowed(signum: int = signal.SIGINT) -> None:
    try:
        os.kill(os.getpid(), signum)
        time.sleep(5)
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
