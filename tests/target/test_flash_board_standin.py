"""A physical board's whole flash-and-talk path with QEMU standing in for the board.

What is real: the runner's port selection, the serial port (a pseudo-terminal, opened by
pyserial like /dev/ttyACM0), the firmware (bare metal, built for silicon: no semihosting, exit
by reset) and the protocol. What stands in: list_ports (one ST-LINK whose port is the pty),
`west` (a script that "flashes" by starting QEMU on the ELF), and the probe's USB-serial bridge
(a thread relaying between the pty and QEMU's serial socket).
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import socket
import stat
import sys
import threading
import time

import pytest
import serial.tools.list_ports
from serial.tools.list_ports_common import ListPortInfo

from mtk.compiled import CompiledModel
from mtk.boards import get_board
from mtk.platforms import ProjectOptions, get_platform
from mtk.runners import get_runner
from mtk.transport.protocol import FirmwareClient

from checkout import FAKE

pytestmark = pytest.mark.qemu

FLASHING_WEST = f"""#!{sys.executable}
import os, subprocess
elf = os.path.join(os.environ["STANDIN_BUILD"], "zephyr", "zephyr.elf")
qemu = subprocess.Popen(["qemu-system-arm", "-M", "mps2-an386", "-kernel", elf,
                         "-icount", "shift=0,align=off,sleep=off", "-display", "none", "-monitor", "none",
                         "-serial", "tcp:127.0.0.1:" + os.environ["STANDIN_PORT"] + ",server=on,wait=on"],
                        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
open(os.environ["STANDIN_PID"], "a").write(str(qemu.pid) + "\\n")   # every flash starts one: each is stopped
"""


def free_tcp_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def relay(master: int, port: int, stop: threading.Event) -> None:
    """The probe's USB-serial bridge: pty master <-> QEMU's serial socket."""
    deadline = time.monotonic() + 10
    while not stop.is_set():
        try:
            sock = socket.create_connection(("127.0.0.1", port), timeout=0.2)
            break
        except OSError:
            if time.monotonic() > deadline:
                return
            time.sleep(0.05)
    else:
        return
    with sock:
        while not stop.is_set():
            ready, _, _ = select.select([master, sock], [], [], 0.1)
            if master in ready:
                sock.sendall(os.read(master, 4096))
            if sock in ready:
                data = sock.recv(4096)
                if not data:
                    return
                os.write(master, data)


@pytest.fixture
def standin_board(tmp_path, monkeypatch, board_tty):
    """A 'Zephyr build' for nucleo_f746zg whose flashing starts QEMU behind the board's pty port."""
    project = get_platform("baremetal").render(CompiledModel.load(FAKE), get_board("mps2/an386"), tmp_path / "fw",
                                               ProjectOptions(semihosting=False))
    elf = get_platform("baremetal").build(project)
    build = tmp_path / "build"
    (build / "zephyr").mkdir(parents=True)
    (build / "CMakeCache.txt").write_text("")
    (build / "zephyr" / "runners.yaml").write_text("runners: [openocd]\nflash-runner: openocd\n")
    (build / "zephyr" / "zephyr.elf").write_bytes(elf.read_bytes())

    west = tmp_path / "bin" / "west"
    west.parent.mkdir()
    west.write_text(FLASHING_WEST)
    west.chmod(west.stat().st_mode | stat.S_IEXEC)
    port, pid_file = free_tcp_port(), tmp_path / "qemu.pid"
    monkeypatch.setenv("PATH", f"{west.parent}{os.pathsep}{os.environ['PATH']}")
    for name, value in (("STANDIN_BUILD", build), ("STANDIN_PORT", port), ("STANDIN_PID", pid_file)):
        monkeypatch.setenv(name, str(value))

    device, master = board_tty
    info = ListPortInfo(device, skip_link_detection=True)
    info.vid, info.pid, info.serial_number = 0x0483, 0x374B, "STANDIN01"
    monkeypatch.setattr(serial.tools.list_ports, "comports", lambda: [info])

    stop = threading.Event()
    bridge = threading.Thread(target=relay, args=(master, port, stop), daemon=True)
    bridge.start()
    yield build / "zephyr" / "zephyr.elf"
    stop.set()
    bridge.join(2)
    for pid in pid_file.read_text().split() if pid_file.exists() else []:
        with contextlib.suppress(ProcessLookupError):
            os.kill(int(pid), signal.SIGTERM)


def test_flash_then_talk_over_the_board_s_port(standin_board):
    with get_runner(get_board("nucleo_f746zg")).start(standin_board) as session:
        client = FirmwareClient(session.link)
        client.wait_boot()                    # the banner printed right after "flashing" is not lost
        client.load_input(bytes(range(64)))
        client.infer(1, 0)
        assert client.read_output() == bytes.fromhex("05093a6d")   # FNV-1a of the input
        client.exit(0)                        # silicon builds reset: the board boots again
        client.wait_boot()
