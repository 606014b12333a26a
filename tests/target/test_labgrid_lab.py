"""`mtk bench --lab labgrid` on a real labgrid: a labgrid-coordinator and two labgrid-exporters
on 127.0.0.1, places created and tagged with labgrid-client. What stands in: each board is a
QEMU machine whose UART is served on a TCP port (the place's NetworkSerialPort, raw) and whose
probe is QEMU's GDB server (the place's GDBServer): flashing loads the ELF through it and resets.
"""

from __future__ import annotations

import json
import re
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from checkout import REPO

pytest.importorskip("labgrid")
if not (shutil.which("ser2net") or Path("/usr/sbin/ser2net").exists()):
    pytest.skip("ser2net is not installed (install.sh installs it): labgrid's exporter serves a tty with it",
                allow_module_level=True)

from mtk.cli import main  # noqa: E402
from mtk.commands.validate import compare  # noqa: E402
from mtk.labgrid_lab import bench as labgrid_bench  # noqa: E402
from mtk.labgrid_lab.coordinator import Coordinator  # noqa: E402
from mtk.labgrid_lab.place import PlaceRunner  # noqa: E402

from modelgen import example_models  # noqa: E402
from tcp import free_port, wait_listening  # noqa: E402

pytestmark = pytest.mark.qemu

DIGITS = REPO / "models" / "digits_cnn_int8.tflite"
START_TIMEOUT_S = 30.0


def labgrid_tool(name: str) -> list[str]:
    """labgrid-coordinator/-exporter/-client of this Python (a venv's bin/ need not be on PATH)."""
    return [sys.executable, "-m", f"labgrid.remote.{name}"]


def wait_until(condition, what: str, timeout: float = START_TIMEOUT_S, poll: float = 0.1) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} within {timeout:g} s")
        time.sleep(poll)


def stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@dataclass
class StandIn:
    """A QEMU machine waiting to be flashed: CPU halted, GDB server on a TCP port; its UART either
    on a TCP port (exported as a raw NetworkSerialPort) or on a pseudo-terminal that the exporter
    serves itself through ser2net, RFC 2217 (exported as a RawSerialPort, as a USB board's port is)."""

    place: str
    exporter: str
    machine: str
    board_tag: str
    uart_on_tty: bool = False
    serial_port: int = 0
    gdb_port: int = 0
    tty: str = ""
    process: subprocess.Popen | None = None

    def start(self, folder: Path) -> None:
        self.serial_port = self.serial_port or free_port()
        self.gdb_port = self.gdb_port or free_port()
        uart = "pty" if self.uart_on_tty else f"tcp:127.0.0.1:{self.serial_port},server=on,wait=off"
        log = folder / f"{self.place}.log"
        with open(log, "wb") as output:
            self.process = subprocess.Popen(
                ["qemu-system-arm", "-M", self.machine, "-display", "none", "-monitor", "none", "-S",
                 "-icount", "shift=0,align=off,sleep=off", "-gdb", f"tcp:127.0.0.1:{self.gdb_port}",
                 "-serial", uart], stdin=subprocess.DEVNULL, stdout=output, stderr=subprocess.STDOUT)
        wait_listening(self.gdb_port, f"QEMU's GDB server for {self.place}")
        if self.uart_on_tty:
            self.tty = re.search(r"redirected to (/dev/pts/\d+)", log.read_text()).group(1)

    def exporter_yaml(self) -> str:
        uart = (f"RawSerialPort: {{port: {self.tty}, speed: 115200}}" if self.uart_on_tty else
                f"NetworkSerialPort: {{host: 127.0.0.1, port: {self.serial_port}, protocol: raw}}")
        return f"{self.place}:\n  {uart}\n  GDBServer: {{host: 127.0.0.1, port: {self.gdb_port}}}\n"


@dataclass
class Lab:
    address: str
    standins: list[StandIn]

    @property
    def url(self) -> str:
        return f"labgrid://{self.address}"

    def reservations(self) -> str:
        """What `labgrid-client reservations` lists (nothing when every client cleaned up)."""
        return subprocess.run([*labgrid_tool("client"), "-x", self.address, "reservations"], check=True,
                              capture_output=True, text=True, timeout=60).stdout.strip()

    def acquired(self) -> dict[str, str | None]:
        """The stand-ins' places and who holds them."""
        with Coordinator(self.address) as coordinator:
            return {p.name: p.acquired_by for p in coordinator.places() if p.name.startswith("standin-")}


def labgrid_client(address: str, *args: str) -> None:
    subprocess.run([*labgrid_tool("client"), "-x", address, *args], check=True, capture_output=True, timeout=60)


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    folder = tmp_path_factory.mktemp("lab")
    address = f"127.0.0.1:{free_port()}"
    processes: list[subprocess.Popen] = []
    standins = [StandIn("standin-an385", "host1", "mps2-an385", "mps2_an385"),
                StandIn("standin-an386", "host2", "mps2-an386", "mps2_an386", uart_on_tty=True)]
    log = open(folder / "labgrid.log", "wb")
    try:
        processes.append(subprocess.Popen([*labgrid_tool("coordinator"), "-l", address], cwd=folder,
                                          stdout=log, stderr=subprocess.STDOUT))
        wait_listening(int(address.split(":")[1]), "the coordinator")
        for standin in standins:
            standin.start(folder)
            config = folder / f"{standin.exporter}.yaml"
            config.write_text(standin.exporter_yaml())
            processes.append(subprocess.Popen([*labgrid_tool("exporter"), "-c", address, "-n", standin.exporter,
                                               "--hostname", "127.0.0.1", str(config)], cwd=folder, stdout=log, stderr=subprocess.STDOUT))
        labgrid_client(address, "-p", "not-a-board", "create")   # a place mtk has no board for: skipped
        labgrid_client(address, "-p", "not-a-board", "set-tags", "board=no_such_board")
        for standin in standins:
            labgrid_client(address, "-p", standin.place, "create")
            labgrid_client(address, "-p", standin.place, "add-match", f"{standin.exporter}/{standin.place}/*")
            labgrid_client(address, "-p", standin.place, "set-tags", f"board={standin.board_tag}")
        yield Lab(address, standins)
    finally:
        for process in [*processes[::-1], *(s.process for s in standins if s.process)]:
            stop(process)
        log.close()


@pytest.fixture(scope="module")
def fc_model(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("models") / "fc_int8.tflite"
    path.write_bytes(example_models(0)["FULLY_CONNECTED"])
    return path


def test_two_boards_on_two_exporters_one_report_bit_exact(lab, fc_model, tmp_path, capsys, monkeypatch):
    seen = []
    run_lab = labgrid_bench.bench_on_labgrid

    def keep_results(*args, **kwargs):
        results, failures = run_lab(*args, **kwargs)
        seen.extend(results)
        return results, failures

    monkeypatch.setattr(labgrid_bench, "bench_on_labgrid", keep_results)
    png = tmp_path / "bench.png"
    code = main(["bench", str(DIGITS), str(fc_model), "--lab", lab.url, "-n", "2", "--json", "--plot", str(png)])
    captured = capsys.readouterr()
    rows = json.loads(captured.out)
    assert code == 0, rows
    assert "skipping place not-a-board: mtk knows no board 'no_such_board'" in captured.err
    assert "place standin-an385 is a QEMU stand-in its exporter started: its figures are instructions, without " \
           "estimated cycles" in captured.err
    assert all(r["estimated_cycles"] is None for r in rows)
    assert [(r["place"], r["host"], r["board"], r["model"]) for r in rows] == [
        ("standin-an385", "host1", "mps2/an385", "digits_cnn_int8.tflite"),
        ("standin-an385", "host1", "mps2/an385", "fc_int8.tflite"),
        ("standin-an386", "host2", "mps2/an386", "digits_cnn_int8.tflite"),
        ("standin-an386", "host2", "mps2/an386", "fc_int8.tflite")]
    assert all(r["unit"] == "instructions" and r["per_inference"]["min"] == r["per_inference"]["max"] > 0
               for r in rows)
    assert [sum(s["mismatches"] for s in compare(result)) for result in seen] == [0, 0, 0, 0]
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert lab.acquired() == {"standin-an385": None, "standin-an386": None} and lab.reservations() == ""


def test_emulate_estimates_the_lab_s_boards_in_local_qemu(lab, capsys):
    """`--lab labgrid --emulate`: each kind of board of the places once, in QEMU that mtk starts with the cycle
    model (a QEMU board as itself); no place is reserved or acquired."""
    code = main(["bench", str(DIGITS), "--lab", lab.url, "--emulate", "-n", "1", "--json"])
    rows = json.loads(capsys.readouterr().out)
    assert code == 0, rows
    assert [(r["board"], r.get("place"), r["estimated_cycles"]["board"]) for r in rows] == [
        ("mps2/an385", None, "mps2/an385"), ("mps2/an386", None, "mps2/an386")]
    assert all(r["estimated_cycles"]["median"] > r["per_inference"]["median"] for r in rows)
    assert lab.acquired() == {"standin-an385": None, "standin-an386": None} and lab.reservations() == ""


def test_a_stand_in_killed_mid_run_fails_alone(lab, fc_model, tmp_path, capsys, monkeypatch):
    an385 = lab.standins[0]
    start = PlaceRunner.start

    def start_then_kill_an385(runner, elf, baudrate):
        session = start(runner, elf, baudrate)
        if runner.target.name == an385.place:
            an385.process.kill()
            an385.process.wait()
        return session

    monkeypatch.setattr(PlaceRunner, "start", start_then_kill_an385)
    try:
        code = main(["bench", str(fc_model), "--lab", lab.url, "-n", "1"])
    finally:
        an385.start(tmp_path)   # the same ports again: the exporter's resources stay valid
    report = capsys.readouterr().out.splitlines()
    assert code == 4
    assert report[0].split()[:4] == ["place", "host", "model", "board"]
    assert [line.split()[:4] for line in report[2:3]] == [["standin-an386", "host2", "fc_int8.tflite", "mps2/an386"]]
    assert report[3].startswith("FAILED fc_int8.tflite on mps2/an385 at place standin-an385 (host1): ")
    assert lab.acquired() == {"standin-an385": None, "standin-an386": None} and lab.reservations() == ""


def test_a_second_client_skips_or_waits_and_sigterm_releases(lab, fc_model, capsys):
    env = {**os.environ, "PYTHONPATH": str(REPO / "toolkit")}
    first = subprocess.Popen([sys.executable, "-m", "mtk", "bench", *[str(DIGITS)] * 40, "--lab", lab.url,   # each place
                              "-n", "32", "--json"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # held ~30 s
    try:
        wait_until(lambda: any(lab.acquired().values()), "the first client acquired no place", timeout=300,
                   poll=0.2)
        first.send_signal(signal.SIGSTOP)   # it holds its place(s) for as long as this test wants
        held = {name for name, holder in lab.acquired().items() if holder}

        code = main(["bench", str(fc_model), "--lab", lab.url, "-n", "1", "--json", "--lab-timeout", "0"])
        rows = json.loads(capsys.readouterr().out)
        assert code == 4
        busy = [r for r in rows if "busy" in r.get("error", "")]
        assert {r["place"] for r in busy} == held and all(
            r["host"] == {"standin-an385": "host1", "standin-an386": "host2"}[r["place"]] for r in busy)

        def terminate_first() -> None:
            first.send_signal(signal.SIGTERM)
            first.send_signal(signal.SIGCONT)

        threading.Timer(2.0, terminate_first).start()
        code = main(["bench", str(fc_model), "--lab", lab.url, "-n", "1", "--json", "--lab-timeout", "120"])
        rows = json.loads(capsys.readouterr().out)
        assert code == 0 and {r["place"] for r in rows} == {"standin-an385", "standin-an386"}
        _, err = first.communicate(timeout=60)
        assert first.returncode == 128 + signal.SIGTERM   # 143, as every command on SIGTERM
        assert all(f"released place {name}" in err.decode() for name in held)
    finally:
        first.send_signal(signal.SIGCONT)
        stop(first)
    assert lab.acquired() == {"standin-an385": None, "standin-an386": None} and lab.reservations() == ""
