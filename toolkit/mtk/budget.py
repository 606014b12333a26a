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
DEFAULT_MAX_RECOMPUTE = 0.15   # extra instructions tiling may add (estimated), a fraction of the model's
FIRMWARE_DATA_BYTES = 8192   # the firmware core's, libc's and the RTOS's own data: kept free beside the arena


def arena_room(board: Board, io_bytes: int, state_bytes: int, stack_bytes: int = DEFAULT_STACK_BYTES) -> int:
    """RAM left for the arena once the firmware's I/O buffers, the state and the stack are in: the
    limit the memory report draws."""
    return board.ram_bytes - io_bytes - state_bytes - stack_bytes


def system_reserved(io_bytes: int, state_bytes: int, stack_bytes: int = DEFAULT_STACK_BYTES) -> int:
    """What the system RAM region keeps for the firmware when the arena is split across regions."""
    return io_bytes + state_bytes + stack_bytes + FIRMWARE_DATA_BYTES


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
    missing = [r.name for r in model.memory.regions if r.name not in {b.name for b in board.ram_regions}]
    if missing:
        raise ModelError(f"{model.name} was compiled for RAM region{'s' * (len(missing) > 1)} {', '.join(missing)}, "
                         f"which {board.name} does not have", hint=f"compile it with --board {board.name}")
    if ram > board.ram_bytes:
        state = f"state {model.memory.state_bytes:,}, " if model.memory.state_bytes else ""
        raise ModelError(f"{model.name} does not fit {board.name}: needs at least {ram:,} B of RAM (arena "
                         f"{model.arena_bytes:,}, {state}buffers {buffers:,}, stack {stack_bytes:,}; RAM {board.ram_bytes:,} B)",
                         hint=fitting_boards_hint(flash, ram))


def check_fits_once(model: CompiledModel, board: Board, stack_bytes: int = DEFAULT_STACK_BYTES) -> None:
    """check_fits, unless compile_model already checked `model` against `board` with this stack."""
    if model.target.board != board.name or stack_bytes != DEFAULT_STACK_BYTES:
        check_fits(model, board, stack_bytes)


def check_runs_on(model: CompiledModel, board: Board) -> None:
    """Refuse a board whose CPU needs other kernel layouts than the model was compiled for."""
    compiled_for = None if model.cpu is None else (get_cpu(model.cpu).long_multiply, model.target.dsp, model.target.mve)
    if compiled_for is not None and compiled_for != board.cpu.kernel_features:
        raise ModelError(f"{model.path or model.name} was compiled for {model.cpu}; {board.name} has a "
                         f"{board.cpu.name}, which needs other kernels", hint=f"compile it with --board {board.name}")
