"""The command line itself: a closed pipe, mistyped commands and options, old option spellings."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from checkout import toolkit_env
from mtk.cli import build_parser, main


def mtk_into_closed_pipe(*argv: str) -> subprocess.CompletedProcess:
    """`mtk ARGV | head -0`: stdout is a pipe whose reader has already gone."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run([sys.executable, "-m", "mtk", *argv], stdout=write_end, stderr=subprocess.PIPE,
                              text=True, env=toolkit_env(), timeout=120)
    finally:
        os.close(write_end)


@pytest.mark.parametrize("argv", [["boards"], ["completion", "bash"], ["--help"], ["run", "--help"]])
def test_a_closed_pipe_ends_mtk_quietly_as_git(argv):
    result = mtk_into_closed_pipe(*argv)
    assert result.stderr == ""
    assert result.returncode == 128 + 13   # SIGPIPE, as a shell reports git's `git log | head -1`


def parse_error(argv: list[str], capsys) -> str:
    """What mtk printed on stderr when it refused `argv` (exit 2, before any work)."""
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    return capsys.readouterr().err


@pytest.mark.parametrize("argv, message", [
    (["rnu", "m.tflite"], "mtk: error: unknown command 'rnu'; did you mean run?"),
    (["frobnicate"], "mtk: error: unknown command 'frobnicate' (choose from bench, boards, "),
    (["boards", "--jsn"], "mtk boards: error: unrecognized arguments: --jsn; did you mean --json?"),
    (["run", "m.tflite", "--bord", "x"], "mtk run: error: unrecognized arguments: --bord x; did you mean --board"),
    (["compile", "m.tflite", "-o", "out", "--max-rma=1K"], "did you mean --max-ram or "),
    (["run", "m.tflite", "--platform", "zephr"], "mtk run: error: argument --platform: invalid choice: 'zephr'; "
                                                  "did you mean zephyr?"),
])
def test_mistakes_get_a_suggestion(argv, message, capsys):
    assert message in parse_error(argv, capsys)


def test_an_error_shows_the_usage_of_the_command_that_failed(capsys):
    err = parse_error(["validate", "m.tflite", "--bogus"], capsys)
    assert err.startswith("usage: mtk validate ") and "--input FILE" in err


@pytest.mark.parametrize("command, old, new, value", [
    ("validate", "--data", "input", "x.npy"),
    ("run", "--data", "input", "x.npy"),
    ("tune", "--cache", "tuning", Path("t.json")),
    ("quantize", "--calibration", "calib_method", "percentile"),
])
def test_old_spellings_are_accepted_but_not_shown(command, old, new, value, capsys):
    extra = ["--calib", "c.npy"] if command == "quantize" else []
    args = build_parser(only=command).parse_args([command, "m.tflite", *extra, old, str(value)])
    assert getattr(args, new) == value
    with pytest.raises(SystemExit):
        main([command, "--help"])
    usage = capsys.readouterr().out
    assert f"--{new.replace('_', '-')}" in usage and old not in usage
