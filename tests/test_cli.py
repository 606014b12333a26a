"""The command line itself: a closed pipe, mistyped commands and options, old option spellings."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from conftest import toolkit_env


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
