"""Estimated cycles of instruction sequences: each assembled into a function of a tiny bare-metal image
for the QEMU machine of its core, run once under the cycle model; its cycles are the function's minus
those of an empty function (both end `isb; bx lr`, so the sequence pairs with nothing after it).

Before each call r0 points to a 64-byte buffer in RAM, r2 = 4 and r3 = 7; a sequence may change
r0-r12 and the flags. Usable from the command line:

    python -m mtk.cycles.sequences cortex-m4 'ldr r1, [r0]' 'ldr r2, [r0, #4]'
"""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from ..boards import get_board
from ..errors import MtkError, TargetError, ToolMissing
from ..target import get_cpu
from .emulate import qemu_board_for
from .model import CycleModel, Measured, elf_symbols
from .tables import core_table

TERMINATOR = "    isb\n    bx lr\n"
EMPTY = "seq_empty"

_SEMIHOSTING_EXIT = """
    ldr r1, =0x20026
    movs r0, #0x18
    bkpt 0xab
"""


def _source(sequences: dict[str, str], mve: bool) -> str:
    enable_coprocessors = """
    ldr r0, =0xE000ED88
    ldr r1, [r0]
    orr r1, r1, #(0xF << 20)
    str r1, [r0]
    dsb
    isb
""" if mve else ""
    calls = "".join(f"""    ldr r0, =buffer
    movs r2, #4
    movs r3, #7
    bl seq_{name}
""" for name in [EMPTY.removeprefix("seq_"), *sequences])
    functions = "".join(f"""
    .p2align 5
    .thumb_func
seq_{name}:
{body}
{TERMINATOR}""" for name, body in {EMPTY.removeprefix("seq_"): "", **sequences}.items())
    return f""".syntax unified
    .thumb
    .section .vectors, "a"
    .word __stack_top
    .word reset + 1
    .text
    .thumb_func
reset:
{enable_coprocessors if mve else ""}{calls}{_SEMIHOSTING_EXIT}
    b .
    .ltorg
{functions}
    .bss
    .p2align 3
buffer:
    .space 64
"""


def _linker_script(code: int, ram: int, ram_size: int) -> str:
    return f"""SECTIONS {{
  . = {code:#x};
  .text : {{ KEEP(*(.vectors)) *(.text*) *(.rodata*) }}
  . = {ram:#x};
  .bss (NOLOAD) : {{ *(.bss*) }}
  __stack_top = {ram + ram_size:#x};
}}
"""


def measure(cpu: str, sequences: dict[str, str], work: Path | None = None, emulate: str | None = None
            ) -> dict[str, int]:
    """name -> estimated cycles of each sequence (assembly lines) on `cpu`, under its table; with
    `emulate` (a board with memory timing, of that core) its flash timing applies to the QEMU board's code
    memory. Each function starts a 32-byte line: same-sized sequences fetch alike."""
    return {name: figures.cycles for name, figures in measure_figures(cpu, sequences, work, emulate).items()}


def measure_figures(cpu: str, sequences: dict[str, str], work: Path | None = None, emulate: str | None = None
                    ) -> dict[str, Measured]:
    """name -> each sequence's instructions, estimated cycles and memory waits, as `measure` runs them."""
    gcc, qemu = shutil.which("arm-none-eabi-gcc"), shutil.which("qemu-system-arm")
    if gcc is None or qemu is None:
        raise ToolMissing("measuring sequences needs arm-none-eabi-gcc and qemu-system-arm",
                          hint="apt-get install gcc-arm-none-eabi qemu-system-arm (install.sh does)")
    board = get_board(qemu_board_for(cpu))
    model = CycleModel(core_table(cpu), board.clock_hz) if emulate is None else \
        CycleModel.for_board(board, get_board(emulate))
    with tempfile.TemporaryDirectory(prefix="mtk-seq-") as tmp:
        folder = Path(work or tmp)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "seq.s").write_text(_source(sequences, get_cpu(cpu).mve), encoding="utf-8")
        (folder / "seq.ld").write_text(_linker_script(board.qemu.code.base, board.qemu.ram.base, board.qemu.ram.size),
                                       encoding="utf-8")
        elf = folder / "seq.elf"
        build = subprocess.run([gcc, *board.cpu.gcc_flags, "-nostdlib", "-nostartfiles", "-T", str(folder / "seq.ld"),
                                "-o", str(elf), str(folder / "seq.s")], capture_output=True, text=True)
        if build.returncode != 0:
            raise MtkError(f"the sequences do not assemble for {cpu}:\n{build.stderr.strip()[-2000:]}")
        names = [EMPTY, *(f"seq_{n}" for n in sequences)]
        addresses = {a & ~1: n for n, (a, _) in elf_symbols(elf, tuple(names)).items()}
        plugin = model.plugin_argument(elf, folder / "table.txt", folder / "cycles.txt")
        plugin += "".join(f",run={a:#x}" for a in addresses)
        result = subprocess.run([qemu, "-M", board.qemu.machine, "-kernel", str(elf), "-icount",
                                 "shift=0,align=off,sleep=off", "-display", "none", "-monitor", "none",
                                 "-serial", "null", "-semihosting-config", "enable=on,target=native",
                                 "-plugin", plugin], capture_output=True, text=True, timeout=60)
        if result.returncode != 0:
            raise TargetError(f"QEMU ({board.qemu.machine}) failed: {result.stderr.strip()[-2000:]}")
        figures = {}
        for line in (folder / "cycles.txt").read_text().splitlines():
            kind, address, *values = line.split()
            if kind == "inference":
                figures[addresses[int(address, 16)]] = Measured(*(int(v) for v in values))
    return {name: _difference(figures[f"seq_{name}"], figures[EMPTY]) for name in sequences}


def _difference(a: Measured, b: Measured) -> Measured:
    return Measured(*(x - y for x, y in zip(dataclasses.astuple(a), dataclasses.astuple(b))))


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print("usage: " + __doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    try:
        print(measure(argv[0], {"sequence": "\n".join(f"    {line}" for line in argv[1:])})["sequence"])
    except MtkError as err:
        print(f"error: {err}", file=sys.stderr)
        return err.exit_code
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
