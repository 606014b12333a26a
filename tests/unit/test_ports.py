"""Finding and opening boards' serial ports: fake list_ports entries, real pseudo-terminals."""

from __future__ import annotations

import errno
import os

import pytest
import serial
import serial.tools.list_ports
from serial.tools.list_ports_common import ListPortInfo

from mtk.boards import get_board
from mtk.errors import TargetError
from mtk.transport.ports import find_board_port, find_usb_port, list_serial_ports, open_board_port

STLINK = (0x0483, 0x374B)


def usb_port(device: str, vid_pid: tuple[int, int] | None, serial_number: str | None = None,
             product: str = "STM32 STLink") -> ListPortInfo:
    info = ListPortInfo(device, skip_link_detection=True)
    if vid_pid:
        info.vid, info.pid = vid_pid
        info.serial_number, info.product = serial_number, product
    return info


@pytest.fixture
def attached(monkeypatch):
    """Set the ports pyserial lists (the only fake: no USB hardware here)."""
    def attach(*ports: ListPortInfo) -> None:
        monkeypatch.setattr(serial.tools.list_ports, "comports", lambda: list(ports))
    return attach


def test_ports_are_listed_with_the_boards_their_usb_ids_belong_to(attached):
    attached(usb_port("/dev/ttyACM0", STLINK, "066DFF4951775177"), usb_port("/dev/ttyS0", None),
             usb_port("/dev/ttyUSB0", (0x1A86, 0x7523), "x"))
    ports = {p.device: p for p in list_serial_ports()}
    assert ports["/dev/ttyACM0"].vid_pid == "0483:374b"
    assert ports["/dev/ttyACM0"].boards == ("nucleo_f746zg", "nucleo_l4r5zi", "stm32f746g_disco",
                                                "nucleo_g0b1re")
    assert ports["/dev/ttyACM0"].to_json()["serial_number"] == "066DFF4951775177"
    assert ports["/dev/ttyS0"].vid_pid is None and ports["/dev/ttyS0"].boards == ()
    assert ports["/dev/ttyUSB0"].boards == ()


def test_the_one_board_is_found(attached):
    attached(usb_port("/dev/ttyS0", None), usb_port("/dev/ttyACM3", STLINK, "ABC"))
    assert find_board_port(get_board("nucleo_f746zg")).device == "/dev/ttyACM3"


def test_no_board_is_a_clear_error(attached):
    attached(usb_port("/dev/ttyS0", None))
    with pytest.raises(TargetError, match=r"no serial port for nucleo_f746zg \(USB 0483:374b\): is the board connected"):
        find_board_port(get_board("nucleo_f746zg"))


def test_several_boards_ask_for_a_serial_number(attached):
    attached(usb_port("/dev/ttyACM0", STLINK, "AAA1"), usb_port("/dev/ttyACM1", STLINK, "BBB2"))
    with pytest.raises(TargetError, match=r"(?s)several serial ports.*/dev/ttyACM0 \(serial number AAA1\), "
                                          r"/dev/ttyACM1 \(serial number BBB2\).*--serial-number"):
        find_board_port(get_board("nucleo_f746zg"))
    assert find_board_port(get_board("nucleo_f746zg"), "bbb2").device == "/dev/ttyACM1"


def test_an_unknown_serial_number_lists_the_ones_seen(attached):
    attached(usb_port("/dev/ttyACM0", STLINK, "AAA1"))
    with pytest.raises(TargetError, match=r"with serial number ZZZ; there are: /dev/ttyACM0 \(serial number AAA1\)"):
        find_usb_port("0483:374b", "ZZZ")


def test_a_board_without_usb_ids_needs_a_port_or_a_serial_number(attached):
    with pytest.raises(TargetError, match="does not know the USB ids of mps2/an386's probe") as err:
        find_board_port(get_board("mps2/an386"))
    assert "--serial-number" in err.value.hint and "--port" in err.value.hint
    attached(usb_port("/dev/ttyACM0", STLINK, "AAA1"), usb_port("/dev/ttyACM1", STLINK, "BBB2"))
    assert find_board_port(get_board("mps2/an386"), "bbb2").device == "/dev/ttyACM1"


def test_a_port_is_opened_for_one_process_only(board_tty):
    device, master = board_tty
    link = open_board_port(device)
    try:
        os.write(master, b"m-ready\r\n")
        assert link.read_line(2) == "m-ready"
        with pytest.raises(TargetError, match=f"{device} is in use by another program"):
            open_board_port(device)
    finally:
        link.close()
    open_board_port(device).close()


def test_permission_denied_points_at_the_dialout_group(monkeypatch):
    def denied(url, **kwargs):
        raise serial.SerialException(errno.EACCES, f"could not open port {url}: [Errno 13] Permission denied")
    monkeypatch.setattr(serial, "serial_for_url", denied)
    with pytest.raises(TargetError, match="permission denied opening /dev/ttyACM0") as err:
        open_board_port("/dev/ttyACM0")
    assert "dialout" in str(err.value)


def test_a_vanished_port_is_a_clear_error(tmp_path):
    with pytest.raises(TargetError, match="does not exist"):
        open_board_port(str(tmp_path / "ttyACM9"))
