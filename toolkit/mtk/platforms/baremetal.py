"""Bare-metal firmware for the QEMU boards: rendered from baremetal_app/, built with make."""

from __future__ import annotations

import shutil
from fractions import Fraction
from pathlib import Path

import jinja2

from ..boards import Board
from ..budget import check_fits_once, check_runs_on, code_ram_for, stack_reservation
from ..compiled import CompiledModel
from ..errors import MtkError
from ..fsutil import atomic_output_dir
from ..names import safe_label
from ..paths import BAREMETAL_APP
from .base import Platform, ProjectOptions, require_tool, run_build
from .firmware import write_firmware_sources

LIBC = {"name": "picolibc", "package": "picolibc-arm-none-eabi", "specs": "--specs=picolibc.specs"}
ELF = Path("build/firmware.elf")


def icount_tick(timer_hz: int, icount_shift: int = 0) -> dict[str, int]:
    """Instructions per SysTick tick under -icount shift=S (2^S ns each) as num >> shift."""
    ratio = Fraction(10**9, timer_hz << icount_shift)
    if ratio.denominator & (ratio.denominator - 1):
        raise MtkError(f"SysTick at {timer_hz} Hz is not a power-of-two fraction of 1 GHz")
    return {"num": ratio.numerator, "shift": ratio.denominator.bit_length() - 1}


class BaremetalPlatform(Platform):
    name = "baremetal"

    def render(self, model: CompiledModel, board: Board, out_dir: Path, options: ProjectOptions) -> Path:
        if board.qemu is None:
            raise MtkError(f"the bare-metal platform runs QEMU boards only; {board.name} is a physical board",
                           hint="use the zephyr platform for it")
        if options.energy:
            raise MtkError("MLPerf Tiny energy mode needs a physical board (a timestamp pin for the energy monitor)",
                           hint="render it for a board with `mtk project --energy`")
        check_runs_on(model, board)
        stack_bytes = options.stack_bytes or stack_reservation(model.memory.stack_bytes, options.opt_level)
        check_fits_once(model, board, stack_bytes)
        env = jinja2.Environment(loader=jinja2.FileSystemLoader(BAREMETAL_APP), undefined=jinja2.StrictUndefined,
                                 keep_trailing_newline=True)
        context = {"board": board, "qemu": board.qemu, "model": model, "label": safe_label(model.name),
                   "options": options, "stack_bytes": stack_bytes, "libc": LIBC, "code_ram": code_ram_for(model, board),
                   "tick": icount_tick(board.qemu.timer_hz, options.icount_shift)}
        with atomic_output_dir(out_dir, force=options.force) as tmp:
            for source in sorted(BAREMETAL_APP.iterdir()):
                if source.suffix == ".j2":
                    (tmp / source.stem).write_text(env.get_template(source.name).render(context))
                else:
                    shutil.copy2(source, tmp / source.name)
            write_firmware_sources(model, tmp, "model_glue.c", options.benchmark)
        return Path(out_dir).resolve()

    def build(self, project_dir: Path) -> Path:
        require_tool("arm-none-eabi-gcc", "gcc-arm-none-eabi")
        make = require_tool("make", "make")
        run_build([make, "-j2"], cwd=Path(project_dir))
        return Path(project_dir) / ELF
