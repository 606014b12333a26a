"""Which QEMU board runs a physical board's code for the cycle model (`--emulate`, the sequence tests)."""

from __future__ import annotations

from dataclasses import replace

from ..boards import Board, get_board
from ..errors import MtkError
from .model import CycleModel

# The QEMU machines whose core executes each core's code, in order of preference; the first that holds a
# board's flash and RAM runs its firmware. A Cortex-M3 executes every ARMv6-M instruction as an M0/M0+
# does (the cycles come from the emulated core's table, not from the machine): the micro:bit's 16 KB of
# RAM holds no Cortex-M0+ board's firmware.
QEMU_BOARDS_OF_CPU: dict[str, tuple[str, ...]] = {
    "cortex-m0": ("bbc_microbit", "mps2/an385"),
    "cortex-m0plus": ("bbc_microbit", "mps2/an385"),
    "cortex-m3": ("mps2/an385",),
    "cortex-m4": ("mps2/an386",),
    "cortex-m7": ("mps2/an500",),
    "cortex-m33": ("mps2/an505",),
    "cortex-m55": ("mps3/corstone300/an547",),
}


def _machines(cpu: str) -> tuple[str, ...]:
    if cpu not in QEMU_BOARDS_OF_CPU:
        raise MtkError(f"no QEMU machine runs {cpu} code", hint=f"cores with one: {', '.join(QEMU_BOARDS_OF_CPU)}")
    return QEMU_BOARDS_OF_CPU[cpu]


def qemu_board_for(cpu: str) -> str:
    """The QEMU board that runs `cpu`'s instruction sequences (mtk.cycles.sequences)."""
    return _machines(cpu)[0]


def holds(machine: Board, board: Board) -> bool:
    """`machine`'s code memory and its firmware's RAM take any firmware that fits `board`."""
    return machine.flash_bytes >= board.flash_bytes and machine.system_region.size >= board.ram_bytes


def emulation_board(board: Board) -> Board:
    """The QEMU board that runs physical `board`'s firmware: the first machine of its core's list that
    holds its flash and RAM, with `board`'s core (the build's -mcpu and kernels), its flash and RAM and their
    timing (a model is compiled, tiled and refused as for `board`; its arena in the machine's RAM)."""
    machines = [get_board(name) for name in _machines(board.cpu.name)]
    machine = next((m for m in machines if holds(m, board)), None)
    if machine is None:
        raise MtkError(f"no QEMU machine running {board.cpu.name} code has {board.name}'s {board.flash_bytes:,} B "
                       f"of flash and {board.ram_bytes:,} B of RAM",
                       hint=", ".join(f"{m.name}: {m.flash_bytes:,} B, {m.system_region.size:,} B" for m in machines))
    machine = _with_code_ram(machine, board)
    return replace(machine, cpu=board.cpu, flash_bytes=board.flash_bytes, ram_bytes=board.ram_bytes,
                   ram_regions=(replace(machine.system_region, size=board.ram_bytes),),
                   memory_timing=board.memory_timing, emulates=board.name)


def _with_code_ram(machine: Board, board: Board) -> Board:
    """`machine` with `board`'s code RAM at the top of its code memory, which its flash no longer covers: the
    cycle model times fetches from there as from no region (zero wait, no cache), as `board`'s code bus does."""
    if board.code_ram is None:
        return machine
    code = machine.qemu.code
    flash_size = code.size - board.code_ram.size
    if flash_size < board.flash_bytes:
        raise MtkError(f"{machine.name}'s code memory ({code.size:,} B) cannot hold {board.name}'s flash and code RAM")
    code_ram = replace(board.code_ram, base=code.base + flash_size)
    return replace(machine, qemu=replace(machine.qemu, code=replace(code, size=flash_size)), code_ram=code_ram)


def emulated_runner(board: Board) -> tuple[Board, dict[str, CycleModel]]:
    """The QEMU board that runs physical `board`'s firmware and the runner options that time it under
    `board`'s cycle model (`--emulate`)."""
    machine = emulation_board(board)
    return machine, {"cycles": CycleModel.for_board(machine, board)}
