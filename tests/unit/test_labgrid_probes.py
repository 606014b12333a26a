"""The labgrid lab's pieces that need no lab: which labgrid driver flashes a place, from its probe
resource and its board (the drivers are made, not run; tests/target/test_labgrid_lab.py runs the GDB
server one on QEMU stand-ins), the coordinator's address, `--lab labgrid` usage errors."""

from __future__ import annotations

import pytest

from checkout import REPO

pytest.importorskip("labgrid")

from labgrid.driver.openocddriver import OpenOCDDriver  # noqa: E402
from labgrid.resource.remote import NetworkUSBDebugger  # noqa: E402
from labgrid.resource.serialport import NetworkSerialPort  # noqa: E402
from labgrid.target import Target  # noqa: E402

from mtk.boards import get_board  # noqa: E402
from mtk.cli import main  # noqa: E402
from mtk.errors import MtkError, TargetError  # noqa: E402
from mtk.labgrid_lab import coordinator_address  # noqa: E402
from mtk.labgrid_lab.place import PlaceRunner  # noqa: E402
from mtk.labgrid_lab.probes import GDBServer, GdbServerDriver, probe_driver  # noqa: E402


def place(name: str, *probes: str) -> Target:
    target = Target(name)
    NetworkSerialPort(target, name=None, host="rack1", port=4000, protocol="rfc2217")
    for probe in probes:
        if probe == "USBDebugger":
            NetworkUSBDebugger(target, name=None, host="rack1", busnum=1, devnum=4, path="1-1.2",
                               vendor_id=0x0483, model_id=0x374B)
        else:
            GDBServer(target, name=None, host="rack1", port=3333)
    return target


def test_an_st_link_place_is_flashed_by_openocd_with_the_board_s_file():
    driver = probe_driver(place("f746", "USBDebugger"), get_board("nucleo_f746zg"))
    assert isinstance(driver, OpenOCDDriver) and driver.board_config == "st_nucleo_f7.cfg"
    assert "program {filename} verify" in driver.load_commands


def test_a_gdb_server_place_is_loaded_over_the_gdb_remote_protocol():
    driver = probe_driver(place("standin", "GDBServer"), get_board("mps2/an386"))
    assert isinstance(driver, GdbServerDriver) and driver.server.reset == "system_reset"


@pytest.mark.parametrize("probes, board, message", [
    ((), "nucleo_f746zg", r"place p has no probe resource"),
    (("USBDebugger", "GDBServer"), "nucleo_f746zg", r"several probe resource\(s\) \(GDBServer, NetworkUSBDebugger\)"),
    (("USBDebugger",), "mps2/an386", r"no OpenOCD board file for mps2/an386"),
])
def test_places_mtk_cannot_flash_say_why(probes, board, message):
    with pytest.raises(MtkError, match=message):
        probe_driver(place("p", *probes), get_board(board))


def test_a_place_without_a_serial_port_is_refused():
    target = Target("no-uart")
    GDBServer(target, name=None, host="rack1", port=3333)
    with pytest.raises(TargetError, match="place no-uart has no serial port"):
        PlaceRunner(target, get_board("mps2/an386"))


@pytest.mark.parametrize("lab, env, address", [
    ("labgrid://lab.example:20500", None, "lab.example:20500"),
    ("labgrid", "10.0.0.2:20408", "10.0.0.2:20408"),
    ("labgrid", None, "127.0.0.1:20408"),
])
def test_the_coordinator_address_comes_from_the_url_or_lg_coordinator(lab, env, address, monkeypatch):
    monkeypatch.delenv("LG_COORDINATOR", raising=False)
    if env:
        monkeypatch.setenv("LG_COORDINATOR", env)
    assert coordinator_address(lab) == address


@pytest.mark.parametrize("options, message", [
    (["--board", "mps2/an386"], "either --board or --lab"),
    (["--serial-number", "066D"], "--serial-number is for a board on this host"),
])
def test_bad_lab_usage_is_refused_in_one_line(options, message, capsys):
    model = REPO / "models" / "digits_cnn_int8.tflite"   # readable: the usage is wrong
    assert main(["bench", str(model), "--lab", "labgrid://127.0.0.1:1", *options]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


