"""mtk ports: the serial ports of the machine and which boards they may be; a lab hardware map."""

from __future__ import annotations

import argparse
import json
import socket
import sys
from pathlib import Path

from .. import ui
from ..fsutil import check_output_file
from ..lab import hardware_map_entries, write_hardware_map
from ..labgrid_lab.exporter import exporter_config
from ..transport.ports import list_serial_ports

NAME = "ports"
HELP = "list serial ports and the boards they belong to; write a lab hardware map (Twister format)"
DESCRIPTION = """\
List the machine's serial ports with their USB ids, serial numbers and the registry boards
whose debug probe has those ids. --hardware-map writes the attached USB boards as a Zephyr
Twister hardware map (edit 'platform' where several boards share a probe), which
`mtk bench --lab map.yaml` and Twister both read. --labgrid-exporter prints a labgrid exporter
configuration for them instead (USB serial port and probe per board, matched by the probe's
serial number), with the labgrid-client commands that make each a place tagged with its board.

examples:
  mtk ports
  mtk ports --hardware-map lab.yaml
  mtk ports --labgrid-exporter > exporter.yaml && labgrid-exporter -c coordinator:20408 exporter.yaml
"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print the ports as JSON")
    p.add_argument("--hardware-map", type=Path, metavar="FILE", help="write the attached boards to FILE")
    p.add_argument("--force", action="store_true", help="overwrite an existing hardware map")
    p.add_argument("--labgrid-exporter", nargs="?", const=socket.gethostname(), metavar="NAME",
                   help="print a labgrid exporter YAML for the attached boards (NAME: the exporter's "
                        "name, default this host's name)")


def run(args: argparse.Namespace) -> int:
    ports = list_serial_ports()
    if args.labgrid_exporter is not None:
        print(exporter_config(ports, args.labgrid_exporter), end="")
        return 0
    if args.hardware_map is not None:
        check_output_file(args.hardware_map, args.force)
        entries = hardware_map_entries(ports)
        write_hardware_map(args.hardware_map, entries)
        ui.info(f"wrote {len(entries)} board(s) to {args.hardware_map}")
    if args.json:
        json.dump([p.to_json() for p in ports], sys.stdout, indent=1)
        print()
    elif not ports:
        print("no serial ports")
    else:
        rows = [[p.device, p.vid_pid or "-", p.serial_number or "-", p.product or "-", ", ".join(p.boards) or "-"]
                for p in ports]
        print(ui.table(["port", "USB id", "serial number", "product", "board"], rows))
    return 0
