"""Lab hardware maps in Zephyr Twister's format: reading, writing, the boards `mtk bench --lab` runs."""

from __future__ import annotations

import logging

import pytest
import yaml

from mtk.boards import get_board
from mtk.errors import MtkError
from mtk.lab import LabBoard, hardware_map_entries, lab_targets, read_hardware_map, write_hardware_map
from mtk.transport.ports import SerialPort

TWISTER_MAP = """\
- connected: true
  id: 066DFF495177514867213407
  platform: nucleo_f746zg
  product: STM32 STLink
  runner: stm32cubeprogrammer
  serial: /dev/ttyACM0
- connected: false
  id: 0672FF485550755187121723
  platform: nucleo_l4r5zi
  product: STM32 STLink
  runner: openocd
  serial: /dev/ttyACM1
- connected: true
  id: 000683000001
  platform: [frdm_k64f]
  product: J-Link
  runner: jlink
  serial: /dev/ttyACM2
- connected: true
  id: 0669FF3833
  platform: stm32f746g_disco/stm32f746xx
  product: STM32 STLink
  runner: pyocd
  fixtures: [gpio_loopback]
  flash_timeout: 120
"""


def test_connected_known_boards_come_with_their_runner_options(tmp_path, caplog):
    path = tmp_path / "map.yaml"
    path.write_text(TWISTER_MAP)
    with caplog.at_level(logging.INFO, logger="mtk"):
        targets = list(lab_targets(path))
    assert [(board.name, options) for board, options in targets] == [
        ("nucleo_f746zg", {"runner": "stm32cubeprogrammer", "serial_number": "066DFF495177514867213407",
                           "port": "/dev/ttyACM0"}),
        ("stm32f746g_disco", {"runner": "pyocd", "serial_number": "0669FF3833", "port": None}),
    ]
    assert "skipping probe 000683000001: mtk knows no board 'frdm_k64f'" in caplog.text


def test_a_map_reads_back_as_written(tmp_path):
    boards = [LabBoard(("nucleo_f746zg",), "066D", "openocd", "STM32 STLink", True, "/dev/ttyACM0"),
              LabBoard(("mps2/an386", "mps2/an385"), "1", "jlink", "J-Link", False, None, "bench 2")]
    write_hardware_map(tmp_path / "map.yaml", boards)
    assert read_hardware_map(tmp_path / "map.yaml") == boards
    assert yaml.safe_load((tmp_path / "map.yaml").read_text())[0] == {
        "connected": True, "id": "066D", "platform": "nucleo_f746zg", "product": "STM32 STLink",
        "runner": "openocd", "serial": "/dev/ttyACM0"}


@pytest.mark.parametrize("text, message", [
    ("platform: x", "a hardware map is a list"),
    ("- connected: true\n  id: 1\n  platform: a\n  product: p\n", "board 1: missing runner"),
    ("- [1, 2]", "board 1: expected a mapping"),
    ("- {connected: yes please, id: 1, platform: a, product: p, runner: r}", "'connected' true or false"),
    ("- {", "cannot read the hardware map"),
])
def test_malformed_maps_are_refused_with_the_entry(tmp_path, text, message):
    (tmp_path / "map.yaml").write_text(text)
    with pytest.raises(MtkError, match=message):
        read_hardware_map(tmp_path / "map.yaml")


def test_generated_entries_name_a_board_only_when_the_usb_ids_say_which():
    stlink = SerialPort("/dev/ttyACM0", "0483:374b", "066D", "STM32 STLink",
                        ("nucleo_f746zg", "nucleo_l4r5zi", "stm32f746g_disco"))
    jlink = SerialPort("/dev/ttyACM1", "1366:1015", "000683", "J-Link", ())
    single = SerialPort("/dev/ttyACM2", "0483:374b", "0670", "STM32 STLink", ("nucleo_f746zg",))
    plain = SerialPort("/dev/ttyS0", None, None, "ttyS0", ())
    entries = hardware_map_entries([stlink, jlink, single, plain])
    assert [(e.platforms, e.id, e.runner, e.serial, e.notes) for e in entries] == [
        (("unknown",), "066D", "openocd", "/dev/ttyACM0", "one of: nucleo_f746zg, nucleo_l4r5zi, stm32f746g_disco"),
        (("unknown",), "000683", "jlink", "/dev/ttyACM1", None),
        (("nucleo_f746zg",), "0670", get_board("nucleo_f746zg").runners[0], "/dev/ttyACM2", None),
    ]
