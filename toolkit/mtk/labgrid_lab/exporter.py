"""`mtk ports --labgrid-exporter`: a labgrid exporter configuration for the boards on this host,
one resource group per board: its USB serial port and its probe, both matched by the probe's USB
serial number (what udev calls ID_SERIAL_SHORT), so they stay right whichever USB port is used."""

from __future__ import annotations

import re

import yaml

from ..names import c_comment, plain_word
from ..transport.ports import SerialPort
from ..transport.serial_link import BAUD_RATE

PLAIN_SERIAL = re.compile(r"[A-Za-z0-9_.-]{1,64}")
COMMENT = "##"   # the exporter renders its YAML with Jinja, where a line starting with one '#' is a statement


def group_name(port: SerialPort) -> str:
    board = port.boards[0].replace("/", "_") if len(port.boards) == 1 else "board"
    return f"{board}-{port.serial_number}"


def place_commands(port: SerialPort, exporter: str) -> list[str]:
    """The labgrid-client commands that make a place of the group, as YAML comments."""
    place = group_name(port)
    tag = port.boards[0].replace("/", "_") if len(port.boards) == 1 else f"<one of: {', '.join(port.boards)}>"
    return [f"labgrid-client -p {place} create",
            f"labgrid-client -p {place} add-match '{exporter}/{place}/*'",
            f"labgrid-client -p {place} set-tags board={tag}"]


def exporter_config(ports: list[SerialPort], exporter: str) -> str:
    """The exporter YAML for the USB boards among `ports`, each group preceded by its place's commands.
    The exporter reads it through Jinja: a serial number that is not a plain word (udev's ID_SERIAL_SHORT
    never is one then) leaves its board out, and every other outside string is in a comment."""
    parts = [f"{COMMENT} labgrid-exporter -c COORDINATOR:20408 -n {plain_word(exporter, 'exporter name')} exporter.yaml\n"]
    for port in ports:
        if port.vid_pid is None or not port.serial_number or not port.boards:
            continue
        if not PLAIN_SERIAL.fullmatch(port.serial_number):
            parts.append(f"{COMMENT} {c_comment(port.device)}: left out, its serial number is not a plain word\n")
            continue
        match = {"ID_SERIAL_SHORT": port.serial_number}
        group = {group_name(port): {"USBSerialPort": {"match": match, "speed": BAUD_RATE},
                                    "USBDebugger": {"match": dict(match)}}}
        comments = "".join(f"{COMMENT} {line}\n" for line in
                           [f"{c_comment(port.device)}: {c_comment(port.product or 'USB serial')} ({port.vid_pid})",
                            *place_commands(port, exporter)])
        parts.append(comments + yaml.safe_dump(group, sort_keys=False, default_flow_style=False))
    return "\n".join(parts)
