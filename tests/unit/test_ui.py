"""Terminal output: steps and messages through the `mtk` logger, drawn by the CLI's handler (plain
lines off a terminal, rich progress and colours on one), tables that fit the terminal."""

from __future__ import annotations

import io
import logging
import re

import pytest

from mtk import ui
from mtk.platforms.base import run_build

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def work_with_steps() -> None:
    with ui.step("compiling"):
        pass
    with ui.step("building"):
        ui.info("a message inside a step")
        ui.progress(1, 2)
    with pytest.raises(RuntimeError), ui.step("running"):
        raise RuntimeError


def test_plain_lines_off_a_terminal():
    stream = io.StringIO()
    with ui.terminal_output(stream=stream):
        work_with_steps()
    lines = stream.getvalue().splitlines()
    assert re.fullmatch(r"compiling \.\.\. done \(\d+\.\d s\)", lines[0])
    assert lines[1:3] == ["building ...", "a message inside a step"]
    assert re.fullmatch(r"building \.\.\. done \(\d+\.\d s\)", lines[3])
    assert lines[4:] == ["running ... failed"]
    assert not ANSI.search(stream.getvalue())


def test_colours_and_progress_only_on_a_terminal(monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    stream = Terminal()
    with ui.terminal_output(stream=stream):
        work_with_steps()
    text = stream.getvalue()
    assert ANSI.search(text)
    plain = ANSI.sub("", text)
    assert "a message inside a step" in plain and "running ... failed" in plain and "building ... done (" in plain


def test_quiet_shows_nothing_and_the_library_alone_is_silent(capsys):
    with ui.terminal_output(quiet=True):
        work_with_steps()
    work_with_steps()
    assert capsys.readouterr().err == ""


class Collected(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def test_a_programs_info_handler_shows_each_step_once(monkeypatch, caplog):
    """The Python API under `logging.basicConfig(level=logging.INFO)`: one line a step, when it ends."""
    root = Collected()
    monkeypatch.setattr(logging.getLogger(), "handlers", [root])
    with caplog.at_level(logging.INFO):   # the root logger's level, set (and put back) as basicConfig sets it
        work_with_steps()
    steps = [m for m in root.messages if " ... " in m]
    assert [m.split(" ... ")[0] for m in steps] == ["compiling", "building", "running"]
    assert steps[-1] == "running ... failed" and "a message inside a step" in root.messages
    assert [type(h) for h in ui.log.handlers] == [logging.NullHandler]   # the library adds no handler of its own


def test_the_clis_lines_do_not_reach_the_programs_handler_too(monkeypatch):
    """`mtk.cli.main()` called from a program that configured logging: each line once, on the CLI's stream."""
    root = Collected()
    monkeypatch.setattr(logging.getLogger(), "handlers", [root])
    stream = io.StringIO()
    with ui.terminal_output(stream=stream):
        work_with_steps()
    assert root.messages == [] and "building ... done (" in stream.getvalue()
    assert ui.log.propagate and ui.log.handlers == [h for h in ui.log.handlers if isinstance(h, logging.NullHandler)]


def test_ninja_counts_are_progress(tmp_path, caplog):
    script = "echo '[1/3] Building C object a.obj'; echo '[2/3] Building C object b.obj'; echo '[3/3] Linking'"
    with caplog.at_level(logging.DEBUG, logger="mtk"), ui.step("building"):
        run_build(["sh", "-c", script], cwd=tmp_path)
    assert [r.mtk_progress for r in caplog.records if hasattr(r, "mtk_progress")] == [(1, 3), (2, 3), (3, 3)]


ROWS = [["mps3/corstone300/an547", "cortex-m55", f"{n:,}", "a long description of where the board runs " * 2]
        for n in (1, 22_000, 333_000_000)]


def test_tables_are_whole_lines_off_a_terminal(monkeypatch):
    monkeypatch.setattr("sys.stdout", io.StringIO())
    lines = ui.table(["board", "cpu", "count", "runs on"], ROWS).splitlines()
    assert lines[0].split() == ["board", "cpu", "count", "runs", "on"] and len(lines) == 5
    assert all(line.endswith("runs") for line in lines[2:])


def test_tables_fit_the_terminal(monkeypatch):
    monkeypatch.setattr("sys.stdout", Terminal())
    monkeypatch.setenv("COLUMNS", "60")
    text = ANSI.sub("", ui.table(["board", "cpu", "count", "runs on"], ROWS))
    assert max(len(line) for line in text.splitlines()) <= 60
    assert "333,000,000" in text


def test_long_names_are_shortened_in_the_middle_to_fit(monkeypatch):
    """compile -v's buffer table: TFLite tensor names of ~240 characters keep their start and end."""
    name = "model/conv2d_3/Conv2D;model/batch_normalization_3/FusedBatchNormV3;" * 4 + "model/activation_3/Relu"
    monkeypatch.setenv("COLUMNS", "100")
    for stdout in (io.StringIO(), Terminal()):
        monkeypatch.setattr("sys.stdout", stdout)
        text = ANSI.sub("", ui.table(["buffer", "offset", "bytes"], [[name, 0, 16_000], ["short", 16_000, 64]],
                                     shorten=0))
        lines = text.splitlines()
        assert max(len(line) for line in lines) <= 100
        row = next(line for line in lines if "…" in line)
        assert row.startswith("model/conv2d_3/Conv2D;") and "activation_3/Relu" in row and "16,000" not in row[:40]
        assert any(line.startswith("short") for line in lines)
    assert ui.shorten_middle("abcdefghij", 5) == "ab…ij" and ui.shorten_middle("abc", 5) == "abc"
