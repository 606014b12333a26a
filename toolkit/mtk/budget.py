"""Does a compiled model fit a board: the one check `mtk compile --board`, the bare-metal and the
Zephyr platforms all make, before any firmware is built (a linker's "overflowed" hides the figures).

    flash: constants + generated code                       <= board.flash_bytes
    RAM:   arena + the firmware's I/O buffers + main stack   <= board.ram_bytes

The firmware core, libc and the RTOS come on top: the check is a lower bound, exact for the model.
"""

from __future__ import annotations

from .boards import Board, fitting_boards_hint
from .compiled import CompiledModel
from .errors import ModelError
from .target import get_cpu

DEFAULT_STACK_BYTES = 8192   # the firmware's main stack (ProjectOptions.stack_bytes)


def check_fits(model: CompiledModel, board: Board, stack_bytes: int = DEFAULT_STACK_BYTES) -> None:
    """ModelError with the figures if `model` cannot fit `board`'s flash or RAM."""
    code = model.memory.code_bytes or 0
    flash = model.constant_bytes + code
    buffers = model.input_bytes + model.output_bytes
    ram = model.arena_bytes + model.memory.state_bytes + buffers + stack_bytes
    if flash > board.flash_bytes:
        raise ModelError(f"{model.name} does not fit {board.name}: needs {model.constant_bytes:,} B of constants "
                         f"+ {code:,} B of code = {flash:,} B of flash; {board.name} has {board.flash_bytes:,} B",
                         hint=fitting_boards_hint(flash, ram))
    if ram > board.ram_bytes:
        state = f"state {model.memory.state_bytes:,}, " if model.memory.state_bytes else ""
        raise ModelError(f"{model.name} does not fit {board.name}: needs at least {ram:,} B of RAM (arena "
                         f"{model.arena_bytes:,}, {state}buffers {buffers:,}, stack {stack_bytes:,}; RAM {board.ram_bytes:,} B)",
                         hint=fitting_boards_hint(flash, ram))


def check_runs_on(model: CompiledModel, board: Board) -> None:
    """Refuse a board whose CPU needs other kernel layouts than the model was compiled for."""
    if model.cpu is not None and get_cpu(model.cpu).kernel_features != board.cpu.kernel_features:
        raise ModelError(f"{model.path or model.name} was compiled for {model.cpu}; {board.name} has a "
                         f"{board.cpu.name}, which needs other kernels", hint=f"compile it with --board {board.name}")
