"""A signal while QEMU runs (SIGTERM, SIGKILL): QEMU ends with mtk, no temporary folder is left."""

from __future__ import annotations

import shutil
import signal
import time
from pathlib import Path

import numpy as np
import pytest

from checkout import REPO
from test_signals_outputs import mtk_process

DIGITS_INT8 = REPO / "models" / "digits_cnn_int8.tflite"


def children_named(pid: int, name: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            stat = (entry / "stat").read_text()
        except (OSError, ValueError):
            continue
        comm = stat[stat.index("(") + 1: stat.rindex(")")]
        ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        if ppid == pid and comm.startswith(name[:15]):
            found.append(int(entry.name))
    return found


def wait_for(condition, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return False


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.qemu
@pytest.mark.skipif(shutil.which("qemu-system-arm") is None, reason="needs qemu-system-arm")
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL])
def test_signal_while_qemu_runs_leaves_no_qemu_and_no_temporary_folder(signum, tmp_path):
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    samples = tmp_path / "many.npz"   # one answer of QEMU a sample: it runs for a while
    np.savez(samples, x=np.tile(np.load(REPO / "models" / "digits_test.npz")["x"], (40, 1, 1, 1)))
    proc = mtk_process("run", str(DIGITS_INT8), "--input", str(samples), tmpdir=tmpdir)
    try:
        assert wait_for(lambda: children_named(proc.pid, "qemu-system-arm") or proc.poll() is not None, 600)
        qemu = children_named(proc.pid, "qemu-system-arm")
        assert qemu, proc.communicate()[1]
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=60)
        assert wait_for(lambda: not alive(qemu[0]), 10), "QEMU outlived mtk"
        if signum == signal.SIGKILL:
            return   # nothing in mtk runs after SIGKILL: only the kernel's PR_SET_PDEATHSIG stops QEMU
        assert proc.returncode == 128 + signum and "Traceback" not in err and "SIGTERM" in err
        assert list(tmpdir.iterdir()) == []
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
