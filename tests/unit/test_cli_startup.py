"""mtk parses its arguments before it loads a heavy library (TVM, the TFLite interpreters, the quantizer,
matplotlib, numpy): `--help` and argument errors of every command, `--version`, `boards` and `ports` load
none of them, only the module of the command being run. A benchmark, not a stopwatch: what is imported is
exact whatever the machine's load; the time it took is printed (pytest -s) for the record."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from checkout import toolkit_env

HEAVY = ("tvm", "tvm_ffi", "tflite", "tflite_micro", "ai_edge_quantizer", "ai_edge_litert", "matplotlib", "numpy",
         "jinja2")
PROBE = """
import json, sys, time
start = time.perf_counter()
from mtk.cli import main
try:
    code = main(sys.argv[1:])
except SystemExit as exit:
    code = exit.code
seconds = time.perf_counter() - start
heavy = sorted({name.partition(".")[0] for name in sys.modules} & set(HEAVY))
sys.stderr.write("\\nPROBE " + json.dumps({"code": code, "heavy": heavy, "seconds": seconds}) + "\\n")
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


def command_names() -> list[str]:
    from mtk.cli import all_commands

    return [c.name for c in all_commands()]


@pytest.mark.parametrize("command", command_names())
@pytest.mark.parametrize("mistake", [["--help"], ["--no-such-option"], ["--board", "no-such-board"]])
def test_help_and_argument_errors_of_every_command_import_no_heavy_library(command, mistake):
    probe = run_probe(command, *mistake)
    print(f"mtk {command} {' '.join(mistake)}: exit {probe['code']} in {probe['seconds']:.3f} s")
    assert probe["code"] == (0 if mistake == ["--help"] else 2)
    assert probe["heavy"] == []


def test_the_probe_sees_what_a_commands_work_loads(tmp_path):
    probe = run_probe("compile", str(tmp_path / "missing.tflite"), "-o", str(tmp_path / "out"))
    assert probe["code"] == 2 and "tvm" in probe["heavy"]
