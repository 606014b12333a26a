"""`mtk --help`, `--version`, `boards` and `ports` start without the heavy libraries (TVM, the TFLite
interpreters, the quantizer, matplotlib, numpy): only the module of the command being run is imported."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import toolkit_env

HEAVY = ("tvm", "tvm_ffi", "tflite", "tflite_micro", "ai_edge_quantizer", "ai_edge_litert", "matplotlib", "numpy",
         "jinja2")
PROBE = """
import json, sys
from mtk.cli import main
try:
    code = main(sys.argv[1:])
except SystemExit as exit:
    code = exit.code
heavy = sorted({name.partition(".")[0] for name in sys.modules} & set(HEAVY))
sys.stderr.write("\\nPROBE " + json.dumps({"code": code, "heavy": heavy}) + "\\n")
"""


def run_probe(*argv: str) -> dict:
    result = subprocess.run([sys.executable, "-c", f"HEAVY = {HEAVY!r}\n{PROBE}", *argv], capture_output=True,
                            text=True, env=toolkit_env(), timeout=120)
    line = next(line for line in result.stderr.splitlines() if line.startswith("PROBE "))
    return json.loads(line[len("PROBE "):])


@pytest.mark.parametrize("argv", [["--help"], ["--version"], ["boards"], ["boards", "--json"], ["ports"]])
def test_light_commands_import_no_heavy_library(argv):
    probe = run_probe(*argv)
    assert probe["code"] in (0, None)
    assert probe["heavy"] == []


def test_a_commands_help_imports_only_that_command():
    assert run_probe("boards", "--help")["heavy"] == []
    assert "tvm" in run_probe("compile", "--help")["heavy"]
