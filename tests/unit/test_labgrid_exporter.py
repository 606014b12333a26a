"""`mtk ports --labgrid-exporter`: the exporter YAML for the attached boards, read back by labgrid's
own exporter configuration reader (USB ports are faked: no hardware here)."""

from __future__ import annotations

import pytest
import serial.tools.list_ports
from serial.tools.list_ports_common import ListPortInfo

from mtk.cli import main

labgrid_config = pytest.importorskip("labgrid.remote.config")


def stlink(device: str, serial_number: str) -> ListPortInfo:
    info = ListPortInfo(device, skip_link_detection=True)
    info.vid, info.pid, info.serial_number, info.product = 0x0483, 0x374B, serial_number, "STM32 STLink"
    return info


def test_exporter_yaml_has_serial_port_and_probe_per_board(tmp_path, capsys, monkeypatch):
    plain = ListPortInfo("/dev/ttyS0", skip_link_detection=True)
    monkeypatch.setattr(serial.tools.list_ports, "comports",
                        lambda: [stlink("/dev/ttyACM0", "066DFF49"), plain, stlink("/dev/ttyACM1", "0672FF48")])
    assert main(["ports", "--labgrid-exporter", "rack1"]) == 0
    text = capsys.readouterr().out
    (tmp_path / "exporter.yaml").write_text(text)
    config = labgrid_config.ResourceConfig(str(tmp_path / "exporter.yaml")).data
    assert config == {
        f"board-{sn}": {"USBSerialPort": {"match": {"ID_SERIAL_SHORT": sn}, "speed": 115200},
                        "USBDebugger": {"match": {"ID_SERIAL_SHORT": sn}}}
        for sn in ("066DFF49", "0672FF48")}
    assert "## labgrid-client -p board-066DFF49 add-match 'rack1/board-066DFF49/*'" in text
    assert "set-tags board=<one of: nucleo_f746zg, nucleo_l4r5zi, stm32f746g_disco, nucleo_g0b1re>" in text
