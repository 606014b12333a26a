"""The Python API (`mtk.compile`, `mtk.run`, `mtk.quantize`): typed results, progress through the
`mtk` logger only, and the runnable example in models/."""

from __future__ import annotations

import subprocess
import sys

import pytest

from checkout import REPO, toolkit_env


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
    model = REPO / "models" / "digits_cnn_int8.tflite"
    result = python("import sys, mtk\nlib = mtk.compile(sys.argv[1], sys.argv[2], board='mps2/an386')\n"
                    "print(type(lib).__name__, lib.path, lib.macs)", str(model), str(tmp_path / "lib"))
    assert result.returncode == 0 and result.stderr == ""   # no handler installed: the library is silent
    assert result.stdout.split() == ["CompiledModel", str(tmp_path / "lib"), "31552"]


