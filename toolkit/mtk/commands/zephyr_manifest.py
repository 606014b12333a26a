"""mtk zephyr-manifest: a minimal west.yml for building mtk's Zephyr applications."""

from __future__ import annotations

import argparse

from ..boards import all_boards, get_board
from ..cliparser import board_name
from ..names import plain_word

NAME = "zephyr-manifest"
HELP = "print a minimal west.yml: Zephyr and only the modules mtk's boards need (not a full west update)"
DESCRIPTION = """\
Print a west manifest that imports from Zephyr's own west.yml only the modules the boards need:
cmsis_6 for every Cortex-M, plus e.g. hal_stm32 for the STM32 boards. `west update` then fetches
Zephyr and those modules, not the several GB of all of Zephyr's modules.

examples:
  mkdir -p ~/zephyrproject/manifest
  mtk zephyr-manifest > ~/zephyrproject/manifest/west.yml       # every board mtk knows
  mtk zephyr-manifest --board nucleo_f746zg > ~/zephyrproject/manifest/west.yml
  cd ~/zephyrproject && west init -l manifest && west update
  export ZEPHYR_BASE=~/zephyrproject/zephyr
"""
DEFAULT_REVISION = "v4.2.0"
MODULES = ("cmsis_6",)   # CMSIS 6 core headers: every Cortex-M board


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--board", action="append", dest="boards", metavar="BOARD", type=board_name,
                   help="only the modules this board needs, repeatable (default: every board mtk knows)")
    p.add_argument("--revision", default=DEFAULT_REVISION,
                   help=f"Zephyr revision: a tag, branch or commit (default: {DEFAULT_REVISION})")


def manifest(modules: list[str], revision: str) -> str:
    allowlist = "".join(f"          - {name}\n" for name in modules)
    return f"""\
# A minimal west workspace for mtk's Zephyr applications (`mtk zephyr-manifest`):
# Zephyr {revision} and, from its west.yml, only {", ".join(modules)}.
manifest:
  remotes:
    - name: zephyrproject-rtos
      url-base: https://github.com/zephyrproject-rtos
  projects:
    - name: zephyr
      remote: zephyrproject-rtos
      revision: {revision}
      import:
        name-allowlist:
{allowlist}"""


def run(args: argparse.Namespace) -> int:
    boards = [get_board(name) for name in args.boards] if args.boards else all_boards()
    modules = list(dict.fromkeys([*MODULES, *(m for b in boards for m in b.zephyr_modules)]))
    print(manifest(modules, plain_word(args.revision, "--revision")), end="")
    return 0
