"""The Python API (`mtk.compile`, `mtk.run`, `mtk.quantize`): typed results, progress through the
`mtk` logger only, and the runnable example in models/."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conftest import toolkit_env

EXAMPLE = Path(__file__).resolve().parents[1] / "models" / "python_api_example.py"


def python(code: str, *argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, env=toolkit_env(),
                          timeout=600)


def test_import_mtk_is_light_and_names_the_api():
    result = python("import sys, mtk; print(sorted(mtk.__all__)); print('tvm' in sys.modules, 'numpy' in sys.modules)")
    assert result.stdout.splitlines() == [str(sorted(["compile", "run", "quantize", "MtkError", "ModelError",
                                                      "ToolMissing", "TargetError", "MismatchError", "__version__"])),
                                          "False False"]


def test_errors_are_mtk_errors_with_the_clis_message(tmp_path):
    import mtk

    with pytest.raises(mtk.MtkError, match="did you mean mps2/an386"):
        mtk.run(tmp_path / "model.tflite", board="mps2/an368")


@pytest.mark.slow
def test_compile_returns_the_typed_result_and_prints_nothing(tmp_path):
    model = Path(__file__).resolve().parents[1] / "models" / "digits_cnn_int8.tflite"
    result = python("import sys, mtk\nlib = mtk.compile(sys.argv[1], sys.argv[2], board='mps2/an386')\n"
                    "print(type(lib).__name__, lib.path, lib.macs)", str(model), str(tmp_path / "lib"))
    assert result.returncode == 0 and result.stderr == ""   # no handler installed: the library is silent
    assert result.stdout.split() == ["CompiledModel", str(tmp_path / "lib"), "31552"]


@pytest.mark.slow
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


@pytest.mark.slow
@pytest.mark.qemu
def test_the_readmes_snippet_runs_top_to_bottom(tmp_path):
    """The Python API section's code block, as it is, from a checkout's root (models/ there)."""
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
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
