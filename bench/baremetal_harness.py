"""A benchmark harness built on mtk's bare-metal startup and port (bench/cmsis_nn_layer.c): its board
files, and its run in QEMU under the cycle model."""

from __future__ import annotations

from pathlib import Path

from dataclasses import replace

import jinja2

from mtk.boards import Board
from mtk.cycles.model import CycleModel, Measured
from mtk.paths import BAREMETAL_APP
from mtk.platforms.baremetal import icount_tick
from mtk.platforms.base import ProjectOptions
from mtk.runners.qemu import QemuRunner


def render_board_files(board: Board, out: Path, stack_bytes: int) -> None:
    """mtk_board.h and linker.ld of the bare-metal firmware for `board` in `out` (no model: none of its code in a code
    RAM)."""
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(BAREMETAL_APP), undefined=jinja2.StrictUndefined)
    context = {"board": board, "qemu": board.qemu, "options": ProjectOptions(stack_bytes=stack_bytes),
               "stack_bytes": stack_bytes, "code_ram": None, "tick": icount_tick(board.qemu.timer_hz)}
    for name in ("mtk_board.h", "linker.ld"):
        (out / name).write_text(env.get_template(f"{name}.j2").render(context))


def run_measured(elf: Path, board: Board, functions: tuple[str, ...], timeout_s: float
                 ) -> tuple[str | None, int, list[Measured]]:
    """Run the harness `elf` on the QEMU board `board`, the cycle model measuring the calls of the first of
    `functions` the ELF has: its console's first line, its exit status and the measured calls."""
    session = QemuRunner(board, replace(CycleModel.for_board(board), run_symbols=functions)).start(elf)
    try:
        line = session.link.read_line(timeout_s)
        status = session.wait_exit(timeout_s)
        return line, status, session.cycles.take_inferences()
    finally:
        session.close()
