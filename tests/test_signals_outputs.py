"""Processes and folders: SIGTERM/SIGHUP unwind like Ctrl-C (QEMU stopped, temporary
folders removed, exit 128+n), QEMU dies with mtk even on SIGKILL, an early Ctrl-C prints no traceback,
--force never deletes an input, and an output that cannot be written is refused before any work."""

from __future__ import annotations

import os
import select
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import mtk.cli
from mtk.cli import main

ROOT = Path(__file__).resolve().parents[1]
DIGITS_INT8 = ROOT / "models" / "digits_cnn_int8.tflite"


def mtk_process(*argv: str, tmpdir: Path) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "toolkit"), TMPDIR=str(tmpdir))
    return subprocess.Popen([sys.executable, "-m", "mtk.cli", *argv], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)


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


def stderr_until(proc: subprocess.Popen, text: str, seconds: float) -> str:
    """What the process wrote on stderr until `text` appeared (or it exited, or `seconds` passed)."""
    seen = ""
    deadline = time.monotonic() + seconds
    while text not in seen and proc.poll() is None and time.monotonic() < deadline:
        if select.select([proc.stderr], [], [], 0.1)[0]:
            seen += os.read(proc.stderr.fileno(), 4096).decode(errors="replace")
    return seen


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.slow
@pytest.mark.qemu
@pytest.mark.skipif(shutil.which("qemu-system-arm") is None, reason="needs qemu-system-arm")
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL])
def test_signal_while_qemu_runs_leaves_no_qemu_and_no_temporary_folder(signum, tmp_path):
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    samples = tmp_path / "many.npz"   # one answer of QEMU a sample: it runs for a while
    np.savez(samples, x=np.tile(np.load(ROOT / "models" / "digits_test.npz")["x"], (40, 1, 1, 1)))
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


@pytest.mark.slow
def test_sighup_during_compile_exits_129_and_leaves_no_partial_output(tmp_path):
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    proc = mtk_process("compile", str(DIGITS_INT8), "-o", str(tmp_path / "out"), tmpdir=tmpdir)
    seen = stderr_until(proc, "lowering", 300)   # mtk's handlers are in place once it prints a step
    proc.send_signal(signal.SIGHUP)
    _, rest = proc.communicate(timeout=120)
    err = seen + rest
    if proc.returncode == 0:
        pytest.skip("compile finished before the signal")
    assert proc.returncode == 129 and "Traceback" not in err and "SIGHUP" in err
    assert not (tmp_path / "out").exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".out")] == []


def test_ctrl_c_while_the_command_is_imported_is_one_line(monkeypatch, capsys):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt
    monkeypatch.setattr(mtk.cli, "build_parser", interrupted)
    assert main(["compile", "x.tflite", "-o", "out"]) == 130
    err = capsys.readouterr().err
    assert err.strip() == "mtk compile: interrupted"


def test_sigterm_handler_unwinds_and_is_restored(monkeypatch, capsys):
    def terminated(args):
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)
    before = signal.getsignal(signal.SIGTERM)
    monkeypatch.setattr("mtk.commands.boards.run", terminated)
    assert main(["boards"]) == 128 + signal.SIGTERM
    assert "mtk boards: SIGTERM" in capsys.readouterr().err
    assert signal.getsignal(signal.SIGTERM) == before


@pytest.mark.parametrize("where", ["model folder", "its parent"])
def test_force_refuses_a_folder_holding_an_input(where, tmp_path, capsys):
    models = tmp_path / "models"
    models.mkdir()
    model = models / "m.tflite"
    shutil.copy(DIGITS_INT8, model)
    (models / "notes.txt").write_text("keep me")
    out = models if where == "model folder" else tmp_path
    code = main(["compile", str(model), "-o", str(out), "--force"])
    err = capsys.readouterr().err
    assert code == 2 and "--force would delete" in err and "an input of this command" in err
    assert model.exists() and (models / "notes.txt").read_text() == "keep me"


def test_force_refuses_the_working_directory(tmp_path, capsys, monkeypatch):
    (tmp_path / "keep.txt").write_text("x")
    monkeypatch.chdir(tmp_path)
    code = main(["compile", str(DIGITS_INT8), "-o", ".", "--force"])
    assert code == 2 and "the working directory" in capsys.readouterr().err
    assert (tmp_path / "keep.txt").exists()


@pytest.mark.parametrize("command", [["compile", str(DIGITS_INT8)], ["quantize", str(ROOT / "models" / "digits_cnn_float.tflite"),
                                                                      "--calib", str(ROOT / "models" / "digits_calib.npz")]])
@pytest.mark.parametrize("output, message", [
    ("{file}/out", "is a file, not a folder"),
    ("/proc/mtk-out/x", "cannot write /proc/mtk-out/x: /proc is on the proc file system, which takes no new files"),
])
def test_unwritable_output_is_refused_before_any_work(command, output, message, tmp_path, capsys):
    (tmp_path / "a_file").write_text("")
    code = main([*command, "-o", output.format(file=tmp_path / "a_file")])
    err = capsys.readouterr().err
    assert code == 2 and message in err and "Traceback" not in err
    assert "reading" not in err and "quantizing" not in err   # refused before the first step
