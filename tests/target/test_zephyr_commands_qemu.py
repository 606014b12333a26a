"""Where a Zephyr workspace is found: a real Zephyr build run in QEMU."""

from __future__ import annotations

import pytest

from mtk.boards import get_board
from mtk.errors import TargetError, ToolMissing
from mtk.platforms import get_platform
from mtk.runners import get_runner
from mtk.transport.protocol import FirmwareClient
from mtk.zephyr_env import find_zephyr

from test_zephyr_commands import app  # noqa: F401 (a fixture)


@pytest.mark.zephyr
def test_a_real_zephyr_build_runs_in_qemu(app):
    try:
        find_zephyr(app)
    except ToolMissing as err:
        pytest.skip(f"no Zephyr workspace: {err.message}")
    elf = get_platform("zephyr").build(app)
    with get_runner(get_board("qemu_cortex_m3")).start(elf) as session:
        client = FirmwareClient(session.link)
        client.wait_boot()
        assert client.info().unit == "instructions"
        client.load_input(bytes(range(64)))
        client.infer(1, 0)
        assert client.read_output() == bytes.fromhex("05093a6d")   # FNV-1a of the input
        assert client.stats(3).min > 0
        client.exit(5)
        assert session.wait_exit(10) == 5
    with get_runner(get_board("qemu_cortex_m3")).start(elf) as session:   # a fault ends the run, status 3
        client = FirmwareClient(session.link)
        client.wait_boot()
        client.load_input(b"\xee\xee" + bytes(62))
        with pytest.raises(TargetError):
            client.infer(1, 0)
        assert "e-[Fault]" in session.link.last_lines
        assert session.wait_exit(10) == 3
