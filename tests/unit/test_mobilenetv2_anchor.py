"""bench/mobilenetv2_anchor.py without TensorFlow: one line and an exit code, no traceback (its figures need
TensorFlow in an interpreter of its own; the script is run by hand)."""

from __future__ import annotations

import subprocess
import sys

from checkout import REPO

SCRIPT = REPO / "bench" / "mobilenetv2_anchor.py"


def test_a_missing_tensorflow_interpreter_is_one_line_exit_2(tmp_path):
    run = subprocess.run([sys.executable, str(SCRIPT), "--tf-python", str(tmp_path / "none"), "--work",
                          str(tmp_path / "work")], capture_output=True, text=True)
    assert run.returncode == 2
    assert run.stderr.strip().splitlines() == [f"mobilenetv2_anchor.py: cannot run {tmp_path / 'none'}: "
                                               "No such file or directory"]
