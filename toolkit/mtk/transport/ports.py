"""Serial ports of attached boards: pyserial's list_ports matched against the board registry's
USB ids (the debug probe's virtual COM port) and serial numbers, and opening one of them."""

from __future__ import annotations

import errno
from dataclasses import dataclass

import serial
import serial.tools.list_ports

from ..boards import Board, all_boards
from ..errors import TargetError
from .serial_link import BAUD_RATE, SerialLink

DIALOUT_HINT = "add yourself to the group owning the port (Debian: sudo usermod -aG dialout $USER), then log in again"
BUSY_ERRNOS = (errno.EBUSY, errno.EAGAIN, errno.EWOULDBLOCK)


@dataclass(frozen=True)
class SerialPort:
    device: str                 # /dev/ttyACM0, COM3
    vid_pid: str | None         # "0483:374b" for USB ports
    serial_number: str | None   # the USB serial number (the probe's id, which flash tools select by)
    product: str | None
    boards: tuple[str, ...]     # registry boards whose probe has these USB ids

    def to_json(self) -> dict:
        return {"device": self.device, "vid_pid": self.vid_pid, "serial_number": self.serial_number,
                "product": self.product, "boards": list(self.boards)}


def list_serial_ports() -> list[SerialPort]:
    """Every serial port of the machine, USB ones with the boards they may belong to."""
    ports = []
    for info in sorted(serial.tools.list_ports.comports(), key=lambda p: p.device):
        vid_pid = f"{info.vid:04x}:{info.pid:04x}" if info.vid is not None and info.pid is not None else None
        boards = tuple(b.name for b in all_boards() if vid_pid and b.usb_vid_pid and b.usb_vid_pid.lower() == vid_pid)
        ports.append(SerialPort(info.device, vid_pid, info.serial_number, info.product or info.description, boards))
    return ports


def find_usb_port(vid_pid: str, serial_number: str | None = None, what: str | None = None) -> SerialPort:
    """The one serial port with USB ids `vid_pid` (and `serial_number` if given)."""
    what = what or f"USB id {vid_pid}"
    usb = [p for p in list_serial_ports() if p.vid_pid == vid_pid.lower()]
    matches = [p for p in usb if serial_number is None or (p.serial_number or "").lower() == serial_number.lower()]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        seen = ", ".join(f"{p.device} (serial number {p.serial_number})" for p in usb)
        if serial_number is not None:
            raise TargetError(f"no serial port for {what} with serial number {serial_number}"
                              + (f"; there are: {seen}" if seen else ""),
                              hint="`mtk ports` lists the attached boards and their serial numbers")
        raise TargetError(f"no serial port for {what}: is the board connected?",
                          hint="`mtk ports` lists the serial ports; check the USB cable (it must carry data)")
    listing = ", ".join(f"{p.device} (serial number {p.serial_number})" for p in matches)
    raise TargetError(f"several serial ports for {what}: {listing}",
                      hint="pick one with --serial-number")


def find_board_port(board: Board, serial_number: str | None = None) -> SerialPort:
    """The board's serial port: by its probe's USB ids (and serial number); for a board whose USB ids
    mtk does not know (one of a Zephyr workspace), by the serial number alone."""
    if board.usb_vid_pid is not None:
        return find_usb_port(board.usb_vid_pid, serial_number, what=f"{board.name} (USB {board.usb_vid_pid})")
    if serial_number is None:
        raise TargetError(f"mtk does not know the USB ids of {board.name}'s probe, so it cannot find its serial port",
                          hint="give its probe's serial number with --serial-number (`mtk ports` lists them) "
                               "or its port with --port")
    matches = [p for p in list_serial_ports() if (p.serial_number or "").lower() == serial_number.lower()]
    if len(matches) != 1:
        found = f"{len(matches)} serial ports ({', '.join(p.device for p in matches)})" if matches else "no serial port"
        raise TargetError(f"{found} with serial number {serial_number}",
                          hint="`mtk ports` lists the serial ports and their serial numbers; or give --port")
    return matches[0]


def open_board_port(device: str, baudrate: int = BAUD_RATE) -> SerialLink:
    """Open a board's serial port for this process alone; clear errors for access and busy ports."""
    try:
        port = serial.serial_for_url(device, baudrate=baudrate, timeout=0.5, exclusive=True)
    except serial.SerialException as err:
        code = err.errno if isinstance(err.errno, int) else None
        if code in (errno.EACCES, errno.EPERM):
            raise TargetError(f"permission denied opening {device}", hint=DIALOUT_HINT) from None
        if code in BUSY_ERRNOS:
            raise TargetError(f"{device} is in use by another program (a serial monitor, another mtk run?)",
                              hint="close it, or wait for it to finish") from None
        if code == errno.ENOENT:
            raise TargetError(f"{device} does not exist (board unplugged?)") from None
        raise TargetError(f"cannot open {device}: {err}") from None
    port.reset_input_buffer()
    return SerialLink(port)
