"""`mtk project`, `mtk build`, `mtk flash`, `mtk ports` through the CLI, without Zephyr or boards;
and, where a Zephyr workspace is found, a real build run in QEMU."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from mtk.boards import get_board
from mtk.cli import main
from mtk.errors import TargetError, ToolMissing
from mtk.platforms import get_platform
from mtk.runners import get_runner
from mtk.transport.protocol import FirmwareClient
from mtk.zephyr_env import find_zephyr

FAKE = Path(__file__).parent / "fixtures" / "fake_compiled"


@pytest.fixture
def app(tmp_path) -> Path:
    assert main(["project", str(FAKE), "--board", "qemu_cortex_m3", "-o", str(tmp_path / "app")]) == 0
    return tmp_path / "app"


def test_project_renders_and_renders_again_for_another_board(app):
    assert json.loads((app / "mtk-project.json").read_text())["board"] == "qemu_cortex_m3"
    assert main(["project", str(FAKE), "--board", "mps2_an386", "-o", str(app), "--profile"]) == 0
    assert "CONFIG_MTK_PROFILE=y" in (app / "prj.conf").read_text()   # not edited: refreshed
    assert json.loads((app / "mtk-project.json").read_text())["board"] == "mps2/an386"


def test_build_refuses_a_folder_mtk_did_not_render(tmp_path, capsys):
    assert main(["build", str(tmp_path)]) == 2
    assert "not a project rendered by `mtk project`" in capsys.readouterr().err


def test_build_without_zephyr_is_a_missing_tool(app, monkeypatch, capsys):
    monkeypatch.delenv("ZEPHYR_BASE", raising=False)
    assert main(["build", str(app)]) == 3
    assert "no Zephyr found" in capsys.readouterr().err


def test_flash_refuses_qemu_boards_and_unbuilt_apps(app, tmp_path, capsys, one_stlink):
    assert main(["flash", str(app)]) == 2
    assert "runs in QEMU: there is nothing to flash" in capsys.readouterr().err
    board_app = tmp_path / "board_app"
    assert main(["project", str(FAKE), "--board", "nucleo_f746zg", "-o", str(board_app)]) == 0
    assert main(["flash", str(board_app), "--board", "nucleo_l4r5zi"]) == 2
    assert "rendered for nucleo_f746zg, not nucleo_l4r5zi" in capsys.readouterr().err
    assert main(["flash", str(board_app)]) == 2
    assert "build it first: mtk build" in capsys.readouterr().err


def test_ports_lists_and_writes_a_hardware_map(tmp_path, capsys, one_stlink):
    assert main(["ports", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["boards"] == ["nucleo_f746zg", "nucleo_l4r5zi", "stm32f746g_disco",
                                                                 "nucleo_g0b1re"]
    lab = tmp_path / "lab.yaml"
    assert main(["ports", "--hardware-map", str(lab)]) == 0
    assert "066DFF49" in capsys.readouterr().out
    assert yaml.safe_load(lab.read_text())[0]["serial"] == "/dev/ttyACM0"
    assert main(["ports", "--hardware-map", str(lab)]) == 2
    assert main(["ports", "--hardware-map", str(lab), "--force"]) == 0


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
