"""The "rerun by hand" hint of a failed build is a command line a shell runs as it is: a build folder or argument
with spaces or shell characters comes out quoted."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

from mtk.errors import TargetError
from mtk.platforms.base import run_build


def test_a_failed_build_hint_quotes_folder_and_arguments(tmp_path: Path):
    folder = tmp_path / "my build; rm -rf ~"
    folder.mkdir()
    command = [sys.executable, "-c", "import sys; print('error: no'); sys.exit(1)", "$HOME 'x'"]
    with pytest.raises(TargetError, match="error: no") as err:
        run_build(command, folder)
    assert err.value.hint == f"rerun by hand: cd {shlex.quote(str(folder))} && {shlex.join(command)}"
    cd, _, rerun = err.value.hint.removeprefix("rerun by hand: ").partition(" && ")
    assert shlex.split(cd) == ["cd", str(folder)] and shlex.split(rerun) == command
