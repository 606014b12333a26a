"""Does a compiled model fit a board: the one check `mtk compile --board`, the bare-metal and the
Zephyr platforms all make, before any firmware is built (a linker's "overflowed" hides the figures).

    flash: constants + generated code                       <= board.flash_bytes
    RAM:   arena (the model's inputs and outputs among its buffers) + state + main stack   <= board.ram_bytes
           (+ the constants, copied into RAM at startup with --weights-in-ram)

The bare-metal main stack is sized from the model (stack_reservation); Zephyr's keeps DEFAULT_STACK_BYTES.

The firmware core, libc and the RTOS come on top: the check is a lower bound, exact for the model.
"""

from __future__ import annotations

import math

from .argtypes import MIN_STACK_BYTES
from .boards import Board, CodeRam, fitting_boards_hint
from .codegen.regions import constants_regions, footprint
from .compiled import CompiledModel, RamConstants, by_region
from .errors import DoesNotFit, ModelError
from .target import get_cpu

DEFAULT_STACK_BYTES = 8192   # the main stack where the model's deepest call chain is unknown, and on Zephyr
# The bare-metal firmware core's own deepest stack use under the model (gcc -fcallgraph-info=su: Reset_Handler,
# mtk_core_main, mtk_core_feed, run_model and the glue's run, 112 B on the M4) plus an exception frame with FP
# context (104 B) and the SysTick handler's, rounded up; its high-water mark under QEMU, less the model's call
# chain, is 120-220 B on the M3, M4, M7, M33 and M55 boards.
FIRMWARE_STACK_BYTES = 256
STACK_MARGIN = 1.25          # on the core's and the model's stack use together
STACK_ALIGN = 128
DEFAULT_MAX_RECOMPUTE = 0.15   # extra instructions tiling may add (estimated), a fraction of the model's
FIRMWARE_DATA_BYTES = 8192   # the firmware core's, libc's and the RTOS's own data: kept free beside the arena
CODE_RAM_SPARE = 1 / 16      # of a code RAM, kept free when the model's code is placed there


def stack_reservation(model_stack_bytes: int | None, opt_level: str = "O2") -> int:
    """The bare-metal main stack for a model whose generated C's deepest call chain takes
    `model_stack_bytes` at -O2 (MemoryUse.stack_bytes): the firmware core's and the model's with a 25 %
    margin, in 128 B steps, at least MIN_STACK_BYTES; DEFAULT_STACK_BYTES where that chain is unknown."""
    if model_stack_bytes is None or opt_level != "O2":
        return DEFAULT_STACK_BYTES
    need = math.ceil((FIRMWARE_STACK_BYTES + model_stack_bytes) * STACK_MARGIN / STACK_ALIGN) * STACK_ALIGN
    return max(MIN_STACK_BYTES, need)


def arena_room(board: Board, state_bytes: int, stack_bytes: int = DEFAULT_STACK_BYTES, constants_in_ram: int = 0) -> int:
    """RAM left for the arena (the model's inputs and outputs are in it) once the state, the stack and the
    constants copied into RAM (if they are) are in: the limit the memory report draws."""
    return board.ram_bytes - state_bytes - stack_bytes - constants_in_ram


def system_reserved(state_bytes: int, stack_bytes: int = DEFAULT_STACK_BYTES) -> int:
    """What the system RAM region keeps for the firmware when the arena is split across regions."""
    return state_bytes + stack_bytes + FIRMWARE_DATA_BYTES


def code_ram_for(model: CompiledModel, board: Board) -> CodeRam | None:
    """The board's code RAM if the model's generated code goes there: it fits with CODE_RAM_SPARE of the region to
    spare (the linker's veneers and alignment); else None, and the code runs from flash."""
    code_ram = board.code_ram
    code = model.memory.code_bytes
    if code_ram is None or code is None or code > code_ram.size * (1 - CODE_RAM_SPARE):
        return None
    return code_ram


def flash_bytes(model: CompiledModel) -> int:
    """The flash the model itself takes: its constants and its generated code."""
    return model.constant_bytes + (model.memory.code_bytes or 0)


def check_fits(model: CompiledModel, board: Board, stack_bytes: int | None = None) -> None:
    """ModelError with the figures if `model` cannot fit `board`'s flash or RAM (with a main stack of
    `stack_bytes`, by default the bare-metal one sized for the model)."""
    stack_bytes = stack_reservation(model.memory.stack_bytes) if stack_bytes is None else stack_bytes
    code = model.memory.code_bytes or 0
    flash = flash_bytes(model)
    ram = ram_bytes(model, stack_bytes)
    name = board.budget_name
    if flash > board.flash_bytes:
        raise DoesNotFit(f"{model.name} does not fit {name}: needs {model.constant_bytes:,} B of constants "
                         f"+ {code:,} B of code = {flash:,} B of flash; {name} has {board.flash_bytes:,} B",
                         hint=fitting_boards_hint(flash, ram))
    used = [*(r.name for r in model.memory.regions), *model.memory.constants_regions]
    missing = list(dict.fromkeys(name for name in used if name not in {b.name for b in board.ram_regions}))
    if missing:
        raise ModelError(f"{model.name} was compiled for RAM region{'s' * (len(missing) > 1)} {', '.join(missing)}, "
                         f"which {board.name} does not have", hint=f"compile it with --board {board.name}")
    check_ram(model, board, stack_bytes, hint=fitting_boards_hint(flash, ram))


def ram_bytes(model: CompiledModel, stack_bytes: int) -> int:
    """The RAM the model takes with a main stack of `stack_bytes` (and its constants, if copied into RAM)."""
    return model.arena_bytes + model.memory.state_bytes + stack_bytes + model.memory.constants_in_ram_bytes


def check_ram(model: CompiledModel, board: Board, stack_bytes: int, hint: str | None = None) -> None:
    """ModelError with the figures if `model` with a main stack of `stack_bytes` needs more than `board`'s RAM."""
    ram = ram_bytes(model, stack_bytes)
    if ram > board.ram_bytes:
        constants = model.memory.constants_in_ram_bytes
        state = f"state {model.memory.state_bytes:,}, " if model.memory.state_bytes else ""
        weights = f"constants in RAM (--weights-in-ram) {constants:,}, " if constants else ""
        raise DoesNotFit(f"{model.name} does not fit {board.budget_name}: needs at least {ram:,} B of RAM "
                         f"({weights}arena {model.arena_bytes:,}, {state}stack {stack_bytes:,}; "
                         f"RAM {board.ram_bytes:,} B)",
                         hint=f"without --weights-in-ram it needs {ram - constants:,} B" if constants else hint)


def emulated_constants(model: CompiledModel, board: Board) -> tuple[RamConstants, ...]:
    """For --emulate, whose firmware keeps the constants in the QEMU board's one RAM: where a build for `board`
    would copy `model`'s constants (--weights-in-ram), by region; DoesNotFit with the figures if its regions
    cannot hold them even split."""
    arrays = [a for share in model.memory.constants_in_ram for a in share.arrays]
    if not arrays:
        return ()
    stack_bytes = stack_reservation(model.memory.stack_bytes)
    region_of = constants_regions({str(i): footprint(*a) for i, a in enumerate(arrays)},
                                  model.memory.constants_in_ram_bytes, board.ram_regions,
                                  system_reserved(model.memory.state_bytes, stack_bytes),
                                  f"{model.name} does not fit {board.name}")
    return by_region([r.name for r in board.ram_regions], [(region_of[str(i)], *a) for i, a in enumerate(arrays)])


def check_emulated_ram(model: CompiledModel, board: Board) -> None:
    """For --emulate, whose firmware is linked for the QEMU board's RAM: ModelError with the figures if `model`'s
    constants copied into RAM, its arena and stack would not fit the emulated `board`'s RAM (its regions holding
    the constants, whole or split as a build for `board` places them: emulated_constants; then the whole)."""
    emulated_constants(model, board)
    check_ram(model, board, stack_reservation(model.memory.stack_bytes))


def check_fits_once(model: CompiledModel, board: Board, stack_bytes: int) -> None:
    """check_fits, unless compile_model already checked `model` against `board` with this stack."""
    if model.target.board != board.name or stack_bytes != stack_reservation(model.memory.stack_bytes):
        check_fits(model, board, stack_bytes)


def check_runs_on(model: CompiledModel, board: Board) -> None:
    """Refuse a board whose CPU needs other kernel layouts than the model was compiled for."""
    compiled_for = None if model.cpu is None else (get_cpu(model.cpu).long_multiply, model.target.dsp, model.target.mve)
    if compiled_for is not None and compiled_for != board.cpu.kernel_features:
        raise ModelError(f"{model.path or model.name} was compiled for {model.cpu}; {board.name} has a "
                         f"{board.cpu.name}, which needs other kernels", hint=f"compile it with --board {board.name}")
