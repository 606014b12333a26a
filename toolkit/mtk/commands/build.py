"""mtk build: build an application `mtk project` rendered, with west."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .. import ui
from ..elfsize import elf_sizes
from ..platforms import get_platform

NAME = "build"
HELP = "build a Zephyr application rendered by `mtk project` (west build for its board)"
DESCRIPTION = """\
Run `west build -b <board>` on an application `mtk project` rendered, with the Zephyr tree
found from ZEPHYR_BASE or the west workspace around the application, and the toolchain from
ZEPHYR_TOOLCHAIN_VARIANT, the Zephyr SDK, or GNU Arm on PATH (Debian's gcc-arm-none-eabi).

examples:
  mtk build app/
  ZEPHYR_BASE=~/zephyrproject/zephyr mtk build app/ --json

exit status: 0 built, 2 not an mtk application, 3 Zephyr/west/toolchain missing, 4 build failure
"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("project", type=Path, nargs="?", default=Path("."), help="application folder (default: .)")
    p.add_argument("--json", action="store_true", help="print the ELF and its sizes as JSON")


def run(args: argparse.Namespace) -> int:
    from ..platforms.zephyr import read_project

    board = read_project(args.project)["board"]
    with ui.step(f"building {args.project} for {board}"):
        elf = get_platform("zephyr").build(args.project)
    sizes = elf_sizes(elf)
    if args.json:
        json.dump({"board": board, "elf": str(elf), "flash_bytes": sizes.flash_bytes,
                   "ram_bytes": sizes.ram_bytes}, sys.stdout)
        print()
    else:
        print(f"{elf}\nflash {sizes.flash_bytes:,} B, RAM {sizes.ram_bytes:,} B")
    return 0
