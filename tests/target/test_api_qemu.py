"""The Python API in QEMU: the runnable example in models/ and the README's snippet, top to bottom."""

from __future__ import annotations

import subprocess
import sys

import pytest

from checkout import REPO, toolkit_env

EXAMPLE = REPO / "models" / "python_api_example.py"


@pytest.mark.qemu
def test_the_python_api_example_runs(tmp_path):
    result = subprocess.run([sys.executable, str(EXAMPLE), str(tmp_path / "digits")], capture_output=True, text=True,
                            env=toolkit_env(), timeout=900)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith(f"C library in {tmp_path / 'digits'}: arena ")
    assert "instructions per inference on mps2/an386" in lines[1]
    assert float(lines[2].split()[5]) > 0.95 and "(360 test digits)" in lines[2]
    assert "running on mps2/an386 ... done" in result.stderr   # progress through logging.basicConfig


@pytest.mark.qemu
def test_the_readmes_snippet_runs_top_to_bottom(tmp_path):
    """The Python API section's code block, as it is, from a checkout's root (models/ there)."""
    readme = (REPO / "README.md").read_text()
    section = readme[readme.index("## Python API"):]
    snippet = section[section.index("```python\n") + len("```python\n"):section.index("\n```\n")]
    (tmp_path / "models").symlink_to(EXAMPLE.parent)
    result = subprocess.run([sys.executable, "-c", snippet], capture_output=True, text=True, env=toolkit_env(),
                            timeout=900, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "digits_int8.tflite").is_file() and (tmp_path / "out" / "metadata.json").is_file()
    assert len(result.stdout.splitlines()) == 3 and "instructions" in result.stdout.splitlines()[2]
    steps = [line for line in result.stderr.splitlines() if line.startswith("INFO:mtk:") and " ... " in line]
    assert steps and all(line.endswith(")") or line.endswith("failed") for line in steps)   # each step once
