"""mtk flash: write a built application to its board (west flash, or pyOCD)."""

from __future__ import annotations

import argparse
from pathlib import Path

from .. import ui
from ..boards import get_board
from ..cliparser import board_name
from ..errors import MtkError
from ._target import add_runner_arguments

NAME = "flash"
HELP = "flash a built application to its board, found over USB"
DESCRIPTION = """\
Flash the application `mtk project` rendered and `mtk build` (or `west build`) built: from the
build folder given with --build-dir (west build's -d), else the application's build/, else
./build when `west build` ran in the current folder (then the application may be left out:
it is the one ./build was configured for). The board is found by its
debug probe's USB ids; with several identical boards, --serial-number picks one (`mtk ports`
lists them). The flash tool is the build's default Zephyr runner (runners.yaml, from the board's
board.cmake), a Zephyr runner given with --runner (west flash -r), or --runner pyocd (pyOCD's
Python API, no west). A probe serial number reaches the runner as west's --dev-id where the
runner takes it (`west flash -H`), else as the runner's own option (openocd: adapter serial,
stm32cubeprogrammer: sn=). Any board of your Zephyr workspace flashes the same way: without
--serial-number, west flashes the one probe attached.

examples:
  mtk flash app/
  west build -b nucleo_f746zg app/ && mtk flash            # ./build, as west build left it
  mtk flash app/ --runner openocd --serial-number 066DFF495177514867213407
  mtk flash app/ --runner pyocd
  mtk flash nrf_app/ --serial-number 1050012345              # nrf5340dk/nrf5340/cpuapp: nrfutil --dev-id

exit status: 0 flashed, 2 bad usage, 3 flash tool missing, 4 no board, several boards, flash failure
"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("project", type=Path, nargs="?",
                   help="application folder (default: the one ./build was built from, else .)")
    p.add_argument("-d", "--build-dir", type=Path, metavar="DIR",
                   help="the build folder (west build's -d; default: the application's build/, or ./build)")
    p.add_argument("--board", type=board_name, help="check that the application was rendered for this board")
    add_runner_arguments(p)


def run(args: argparse.Namespace) -> int:
    from ..platforms.zephyr import ELF_IN_BUILD, find_build, read_project
    from ..runners import get_runner

    project, build_dir = find_build(args.project, args.build_dir)
    board = get_board(read_project(project)["board"])
    if args.board is not None and get_board(args.board) != board:
        raise MtkError(f"{project} was rendered for {board.name}, not {args.board}")
    runner = get_runner(board, args.runner, args.serial_number, args.port)
    if not runner.caps.flashes:
        raise MtkError(f"{board.name} runs in QEMU: there is nothing to flash", hint="use `mtk run --platform zephyr`")
    elf = build_dir / ELF_IN_BUILD
    if not elf.is_file():
        raise MtkError(f"{elf} does not exist", hint=f"build it first: mtk build {project}")
    if board.usb_vid_pid is not None:   # else west flashes the one probe attached, or the one --serial-number names
        runner.select_board()
    probe = runner.serial_number or (runner.port and f"on {runner.port}") or "the one attached"
    with ui.step(f"flashing {board.name} (probe {probe}) with {runner.name}"):
        runner.flash(elf)
    return 0
