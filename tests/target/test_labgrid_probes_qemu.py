"""A QEMU stand-in of the labgrid lab started without -icount is warned about."""

from __future__ import annotations

import pytest

from checkout import FAKE

pytest.importorskip("labgrid")
from labgrid.target import Target  # noqa: E402
from mtk.boards import get_board  # noqa: E402
from mtk.labgrid_lab.probes import GDBServer, probe_driver  # noqa: E402


@pytest.mark.qemu
def test_a_qemu_stand_in_without_icount_is_warned_about(tmp_path, caplog):
    """Its counts would follow the host's clock and still be called instructions: the load says so."""
    import logging
    import subprocess

    from mtk.compiled import CompiledModel
    from mtk.platforms import ProjectOptions, get_platform
    from tcp import free_port, wait_listening

    board = get_board("mps2/an386")
    fake = CompiledModel.load(FAKE)
    elf = get_platform("baremetal").build(get_platform("baremetal").render(fake, board, tmp_path / "fw",
                                                                           ProjectOptions(semihosting=False)))
    for icount in (["-icount", "shift=0,align=off,sleep=off"], []):
        gdb_port = free_port()
        qemu = subprocess.Popen(["qemu-system-arm", "-M", "mps2-an386", "-display", "none", "-monitor", "none", "-S",
                                 *icount, "-gdb", f"tcp:127.0.0.1:{gdb_port}"], stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_listening(gdb_port, "QEMU's GDB server")
            target = Target(f"standin{len(icount)}")
            GDBServer(target, name=None, host="127.0.0.1", port=gdb_port)
            driver = probe_driver(target, board)
            target.activate(driver)
            caplog.clear()
            with caplog.at_level(logging.INFO, logger="mtk"):
                driver.load(str(elf))
        finally:
            qemu.kill()
            qemu.wait()
        warned = "is a QEMU stand-in without -icount" in caplog.text
        assert warned == (not icount), caplog.text
    assert "place standin0 is a QEMU stand-in without -icount" in caplog.text
    assert "start its QEMU with -icount shift=0,align=off,sleep=off" in caplog.text
