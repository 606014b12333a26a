"""`mtk boards`: list the boards mtk can build for and run on."""

from __future__ import annotations

import argparse
import json

from .. import ui
from ..boards import DEFAULT_BOARD, Board, all_boards
from ..errors import MtkError
from ..target import CPUS

NAME = "boards"
HELP = "list the supported boards"
DESCRIPTION = """\
List mtk's own boards (QEMU machines and the boards it has measured), or with --zephyr the
Cortex-M boards of your Zephyr workspace (ZEPHYR_BASE, or the west workspace around the current
folder): every one of them is a --board of `mtk project`, `build`, `flash`, `run` and `bench`,
its core, clock, memory and flash runners read from Zephyr's own board files. Reading a board
takes about a second (its devicetree): give a FILTER to list some.

examples:
  mtk boards
  mtk boards --zephyr nucleo_u5
  mtk boards --zephyr nrf5340 --json

exit status: 0 listed, 2 a board not readable or not a Cortex-M, 3 no Zephyr workspace
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--zephyr", nargs="?", const="", metavar="FILTER",
                        help="list the Cortex-M boards of the Zephyr workspace whose name holds FILTER")
    parser.add_argument("--json", action="store_true", help="print a JSON list instead of a table")


def _clock(board: Board) -> str:
    return f"{board.clock_hz / 1e6:g} MHz" if board.clock_hz else "?"


def zephyr_rows(pattern: str) -> list[Board]:
    """The workspace's Cortex-M boards matching `pattern`; a board named in full that is not one is an error."""
    from ..zephyr_boards import zephyr_board, zephyr_boards   # reads the user's Zephyr tree
    if "/" in pattern:
        return [zephyr_board(pattern)]
    boards, unreadable = [], []
    with ui.step(f"reading the devicetrees of the Zephyr boards matching '{pattern}'"):
        for index, found in enumerate(zephyr_boards(pattern)):
            ui.progress(index + 1)
            (boards if isinstance(found, Board) else unreadable).append(found)
    if unreadable:
        ui.info(f"{len(unreadable)} board{'s' * (len(unreadable) > 1)} left out, unreadable: {unreadable[0].message}"
                + (" (and more)" if len(unreadable) > 1 else ""))
    if not boards and unreadable:
        raise unreadable[0]
    return boards


def run(args: argparse.Namespace) -> int:
    boards = all_boards() if args.zephyr is None else zephyr_rows(args.zephyr)
    if args.json:
        print(json.dumps([b.to_json() for b in boards], indent=1))
        return 0
    if args.zephyr is not None and not boards:
        raise MtkError(f"no Cortex-M board of the Zephyr workspace has '{args.zephyr}' in its name")
    rows = [[b.name + (" (default)" if b.name == DEFAULT_BOARD else ""), b.cpu.name + _extensions(b), _clock(b),
             f"{b.flash_bytes // 1024} KB", f"{b.ram_bytes // 1024} KB",
             f"QEMU {b.qemu.machine}" if b.qemu else
             ", ".join(filter(None, [b.usb_vid_pid and f"USB {b.usb_vid_pid}", f"flash: {', '.join(b.runners) or '?'}"]))]
            for b in boards]
    print(ui.table(["board", "cpu", "clock", "flash", "ram", "runs on"], rows))
    return 0


def _extensions(board: Board) -> str:
    """What the core lacks of its kind's extensions (a Zephyr SoC's choice), as gcc spells it: "+nodsp"."""
    cpu, kind = board.cpu, CPUS[board.cpu.name]
    lacks = [("+nodsp", kind.dsp and not cpu.dsp), ("+nofp", kind.fpu and not cpu.fpu), ("+nomve", kind.mve and not cpu.mve)]
    return "".join(mark for mark, lacking in lacks if lacking)
