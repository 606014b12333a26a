"""`mtk project`, `mtk build`, `mtk flash`, `mtk ports` through the CLI, without Zephyr or boards
(a real build run in QEMU: tests/target/test_zephyr_commands_qemu.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from mtk.cli import main

from checkout import FAKE



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
    capsys.readouterr()
    assert main(["ports", "--hardware-map", str(tmp_path), "--force"]) == 2   # a folder: not replaced
    assert "is a folder; give a file name" in capsys.readouterr().err


