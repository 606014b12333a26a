"""`mtk boards`: list the boards mtk can build for and run on."""

from __future__ import annotations

import argparse
import json

from .. import ui
from ..boards import DEFAULT_BOARD, all_boards

NAME = "boards"
HELP = "list the supported boards"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print a JSON list instead of a table")


def run(args: argparse.Namespace) -> int:
    boards = all_boards()
    if args.json:
        print(json.dumps([b.to_json() for b in boards], indent=1))
        return 0
    rows = [[b.name + (" (default)" if b.name == DEFAULT_BOARD else ""), b.cpu.name, f"{b.clock_hz / 1e6:g} MHz",
             f"{b.flash_bytes // 1024} KB", f"{b.ram_bytes // 1024} KB",
             f"QEMU {b.qemu.machine}" if b.qemu else f"USB {b.usb_vid_pid}, flash: {', '.join(b.runners)}"]
            for b in boards]
    print(ui.table(["board", "cpu", "clock", "flash", "ram", "runs on"], rows))
    return 0
