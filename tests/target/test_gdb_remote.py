"""Loading firmware through a GDB server: QEMU's (`-gdb`, CPU halted at start) is the probe, the
firmware a bare-metal silicon build (no semihosting: it ends a run by resetting, as on a board).
A second load goes onto the running target, as reflashing a board does."""

from __future__ import annotations

import subprocess

import pytest

from mtk.boards import get_board
from mtk.compiled import CompiledModel
from mtk.errors import TargetError
from mtk.platforms import ProjectOptions, get_platform
from mtk.runners.gdb_remote import GdbRemote, load_elf
from mtk.transport.protocol import FirmwareClient
from mtk.transport.serial_link import SerialLink

from tcp import free_port, wait_listening
from checkout import FAKE

pytestmark = pytest.mark.qemu



def test_load_reset_and_talk_twice(tmp_path):
    project = get_platform("baremetal").render(CompiledModel.load(FAKE), get_board("mps2/an385"),
                                               tmp_path / "fw", ProjectOptions(semihosting=False))
    elf = get_platform("baremetal").build(project)
    serial_port, gdb_port = free_port(), free_port()
    qemu = subprocess.Popen(["qemu-system-arm", "-M", "mps2-an385", "-display", "none", "-monitor", "none", "-S",
                             "-gdb", f"tcp:127.0.0.1:{gdb_port}",
                             "-serial", f"tcp:127.0.0.1:{serial_port},server=on,wait=off"],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_listening(gdb_port, "QEMU's GDB server")
        for _ in range(2):
            link = SerialLink.open(f"socket://127.0.0.1:{serial_port}")   # before loading: no banner lost
            load_elf("127.0.0.1", gdb_port, elf, "system_reset")
            client = FirmwareClient(link)
            client.wait_boot()
            client.load_input(bytes(range(64)))
            client.infer(1, 0)
            assert client.read_output() == bytes.fromhex("05093a6d")   # FNV-1a of the input
            link.close()
    finally:
        qemu.kill()
        qemu.wait()
    with pytest.raises(TargetError, match=f"cannot connect to the GDB server at 127.0.0.1:{gdb_port}"):
        load_elf("127.0.0.1", gdb_port, elf, "system_reset")


@pytest.mark.parametrize("icount", [True, False])
def test_the_gdb_server_tells_a_qemu_under_icount(icount):
    """A QEMU stand-in's counts are instructions only under -icount: its `info jit` says whether it is."""
    gdb_port = free_port()
    extra = ["-icount", "shift=0,align=off,sleep=off"] if icount else []
    qemu = subprocess.Popen(["qemu-system-arm", "-M", "mps2-an386", "-display", "none", "-monitor", "none", "-S",
                             *extra, "-gdb", f"tcp:127.0.0.1:{gdb_port}"],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_listening(gdb_port, "QEMU's GDB server")
        gdb = GdbRemote("127.0.0.1", gdb_port)
        gdb.request("?")
        assert gdb.qemu_counts_instructions() is icount
        gdb.close()
    finally:
        qemu.kill()
        qemu.wait()
