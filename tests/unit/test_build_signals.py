"""A signal while a compiler runs leaves none of its files behind: gcc measuring code size, the host
build of a compiled model and a firmware build each run in a process group of their own with TMPDIR
in mtk's own temporary folder; the group gets SIGTERM when mtk is interrupted or terminated. The
stand-in compiler here is a driver that writes part of its output and waits for its cc1, which
leaves a cc*.s in $TMPDIR and sleeps, as gcc does mid-build."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator

import pytest

from checkout import FIXTURES, toolkit_env

CC1 = """
import os, time
open(os.path.join(os.environ.get("TMPDIR", "/tmp"), "cc%d.s" % os.getpid()), "w").write("partial")
open(os.environ["COMPILER_STARTED"], "w").write(str(os.getpid()))
time.sleep(60)
"""

SLOW_COMPILER = f"""#!{sys.executable}
import subprocess, sys
if "-o" in sys.argv:
    open(sys.argv[sys.argv.index("-o") + 1], "w").write("partial")
subprocess.run([sys.executable, "-c", {CC1!r}])
"""

MEASURE = """
import signal, sys
from mtk.interrupts import handler
from mtk.codegen.code_size import measure_code
from mtk.target import get_cpu
signal.signal(signal.SIGTERM, handler)
try:
    measure_code({"src/a.c": "int a;\\n"}, get_cpu("cortex-m4"), "a")
except KeyboardInterrupt:
    sys.exit(143)
"""

HOST_BUILD = """
import sys
from mtk import interrupts
from mtk.hostrun import build_library
with interrupts.handled():
    try:
        build_library(sys.argv[1], sys.argv[2])
    except KeyboardInterrupt as err:
        sys.exit(128 + getattr(err, "signum", 2))
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
def slow_compiler(tmp_path) -> Iterator[dict[str, str]]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("arm-none-eabi-gcc", "arm-none-eabi-size", "gcc"):
        (bin_dir / name).write_text(SLOW_COMPILER)
        (bin_dir / name).chmod(0o755)
    (tmp_path / "tmpdir").mkdir()
    started = tmp_path / "started"
    yield {**toolkit_env(), "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "TMPDIR": str(tmp_path / "tmpdir"),
           "COMPILER_STARTED": str(started)}
    if started.exists() and started.read_text():   # a cc1 that outlived the test
        try:
            os.kill(int(started.read_text()), signal.SIGKILL)
        except ProcessLookupError:
            pass


def terminate_when_the_compiler_runs(argv: list[str], env: dict[str, str], started: Path,
                                     signum: int = signal.SIGTERM) -> int:
    process = subprocess.Popen(argv, env=env, cwd=started.parent, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 30
        while not (started.exists() and started.read_text()) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert started.exists(), process.stderr.read() if process.poll() is not None else "the compiler never started"
        process.send_signal(signum)
        return process.wait(20)
    finally:
        process.kill()


def compiler_is_gone(started: Path) -> bool:
    pid = int(started.read_text())
    time.sleep(0.2)
    return not Path(f"/proc/{pid}").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text()


def test_sigterm_while_gcc_measures_code_size_leaves_no_cc_files(slow_compiler, tmp_path):
    code = terminate_when_the_compiler_runs([sys.executable, "-c", MEASURE], slow_compiler, tmp_path / "started")
    assert code == 143
    assert list((tmp_path / "tmpdir").rglob("*")) == []
    assert compiler_is_gone(tmp_path / "started")


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_during_the_host_build_leaves_no_library_folder_and_no_cc_files(slow_compiler, tmp_path, signum):
    """The library cache holds whole libraries only: not the half-written one of an interrupted build."""
    cache = tmp_path / "cache"
    sample = FIXTURES / "hostrun_sample"
    code = terminate_when_the_compiler_runs([sys.executable, "-c", HOST_BUILD, str(sample), str(cache)],
                                            slow_compiler, tmp_path / "started", signum)
    assert code == 128 + signum
    assert list(cache.iterdir()) == []
    assert list((tmp_path / "tmpdir").rglob("*")) == []
    assert compiler_is_gone(tmp_path / "started")


def test_sigterm_during_a_build_stops_the_build_and_its_files(slow_compiler, tmp_path):
    compiler = str(tmp_path / "bin" / "arm-none-eabi-gcc")
    start = time.monotonic()
    code = terminate_when_the_compiler_runs([sys.executable, "-c", BUILD, compiler], slow_compiler, tmp_path / "started")
    assert code == 143 and time.monotonic() - start < 20   # not after the build's 60 s
    assert list((tmp_path / "tmpdir").rglob("*")) == []
    assert compiler_is_gone(tmp_path / "started")
