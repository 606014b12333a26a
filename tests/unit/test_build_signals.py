"""A signal while a compiler runs leaves none of its files behind: gcc measuring code size runs with
TMPDIR in mtk's own temporary folder, and a firmware build runs in a process group of its own that
gets SIGTERM when mtk is interrupted or terminated (the stand-in compiler here leaves a cc*.s in
$TMPDIR and sleeps, as cc1 does mid-build)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from checkout import toolkit_env

SLOW_COMPILER = f"""#!{sys.executable}
import os, sys, time
open(os.path.join(os.environ.get("TMPDIR", "/tmp"), "cc%d.s" % os.getpid()), "w").write("partial")
open(os.environ["COMPILER_STARTED"], "w").write(str(os.getpid()))
time.sleep(60)
"""

MEASURE = """
import signal, sys
from mtk.interrupts import handler
from mtk.codegen.code_size import measure_code_bytes
from mtk.target import get_cpu
signal.signal(signal.SIGTERM, handler)
try:
    measure_code_bytes({"src/a.c": "int a;\\n"}, get_cpu("cortex-m4"))
except KeyboardInterrupt:
    sys.exit(143)
"""

BUILD = """
import signal, sys
from pathlib import Path
from mtk.interrupts import handler
from mtk.platforms.base import run_build
signal.signal(signal.SIGTERM, handler)
try:
    run_build([sys.argv[1]], cwd=Path("."))
except KeyboardInterrupt:
    sys.exit(143)
"""


@pytest.fixture
def slow_compiler(tmp_path) -> dict[str, str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("arm-none-eabi-gcc", "arm-none-eabi-size"):
        (bin_dir / name).write_text(SLOW_COMPILER)
        (bin_dir / name).chmod(0o755)
    (tmp_path / "tmpdir").mkdir()
    return {**toolkit_env(), "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "TMPDIR": str(tmp_path / "tmpdir"),
            "COMPILER_STARTED": str(tmp_path / "started")}


def terminate_when_the_compiler_runs(argv: list[str], env: dict[str, str], started: Path) -> int:
    process = subprocess.Popen(argv, env=env, cwd=started.parent, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 30
    while not started.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert started.exists(), process.stderr.read() if process.poll() is not None else "the compiler never started"
    process.send_signal(signal.SIGTERM)
    try:
        return process.wait(20)
    finally:
        process.kill()
        compiler = int(started.read_text() or 0)
        if compiler:
            try:
                os.kill(compiler, signal.SIGKILL)
            except ProcessLookupError:
                pass


def test_sigterm_while_gcc_measures_code_size_leaves_no_cc_files(slow_compiler, tmp_path):
    code = terminate_when_the_compiler_runs([sys.executable, "-c", MEASURE], slow_compiler, tmp_path / "started")
    assert code == 143
    assert list((tmp_path / "tmpdir").rglob("*")) == []


def test_sigterm_during_a_build_stops_the_build_and_its_files(slow_compiler, tmp_path):
    compiler = str(tmp_path / "bin" / "arm-none-eabi-gcc")
    start = time.monotonic()
    code = terminate_when_the_compiler_runs([sys.executable, "-c", BUILD, compiler], slow_compiler, tmp_path / "started")
    assert code == 143 and time.monotonic() - start < 20   # not after the build's 60 s
    assert list((tmp_path / "tmpdir").rglob("*")) == []
    pid = int((tmp_path / "started").read_text())
    time.sleep(0.2)
    assert not Path(f"/proc/{pid}").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text()
