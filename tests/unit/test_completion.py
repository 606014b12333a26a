"""`mtk completion bash` (shtab): bash completes mtk's commands, options and board names with it."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from mtk.cli import main

COMPLETE = """
source "$1"; shift
COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 )); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
_shtab_mtk mtk "${COMP_WORDS[-1]}" "${COMP_WORDS[-2]}"
echo "${COMPREPLY[*]}"
"""


@pytest.fixture
def bash_script(tmp_path, capsys):
    assert main(["completion", "bash"]) == 0
    script = tmp_path / "mtk.bash"
    script.write_text(capsys.readouterr().out)
    return script


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash")
@pytest.mark.parametrize("words, expected", [
    (["mtk", "ru"], "run"),
    (["mtk", "run", "m.tflite", "--board", "mps2/an38"], "mps2/an385 mps2/an386"),
    (["mtk", "compile", "--tun"], "--tuning"),
    (["mtk", "validate", "m.tflite", "--inp"], "--input"),
    (["mtk", "validate", "m.tflite", "--dat"], ""),   # its old spelling: accepted, not offered
    (["mtk", "completion", "z"], "zsh"),
])
def test_bash_completes_commands_options_and_boards(bash_script, words, expected):
    result = subprocess.run(["bash", "-c", COMPLETE, "complete", str(bash_script), *words], capture_output=True,
                            text=True, timeout=60)
    assert result.stdout.strip() == expected, result.stderr
