"""Options shared by the commands that build and run firmware (run, validate, bench).

Like every command module, it imports no heavy library (TVM, numpy, the TFLite interpreters) at the
top: the arguments are parsed (and --help printed, and mistakes refused) before any of them loads.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import argtypes, mlperf
from ..boards import DEFAULT_BOARD, Board, get_board, require_clock
from ..budget import DEFAULT_MAX_RECOMPUTE
from ..cliparser import board_name
from ..platforms import PLATFORMS

if TYPE_CHECKING:
    from ..runoptions import RunOptions
    from ..tuning import Tuning


def add_tuning_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument("--tuning", type=Path, metavar="FILE",
                   help="per-layer schedules measured by `mtk tune` (its cache file, e.g. mtk-tuning.json) for the "
                        "board (with --emulate: the emulated board); layers it does not hold take the default")


def _bytes(text: str) -> int:
    """A byte count: 65536, 64K or 1M (K and M are 1024 and 1024²)."""
    scale = {"K": 1024, "M": 1024 * 1024}.get(text[-1:].upper(), 1)
    digits = text[:-1] if scale > 1 else text
    if not digits.isdigit() or int(digits) * scale >= 2**31:
        raise argparse.ArgumentTypeError(f"{text!r} is not a byte count (e.g. 65536, 64K, 1M)")
    return int(digits) * scale


def _fraction(text: str) -> float:
    """A fraction of the model's MACs: 0.15 or 15%."""
    try:
        value = float(text[:-1]) / 100 if text.endswith("%") else float(text)
    except ValueError:
        value = float("nan")
    if not 0 <= value <= 10:
        raise argparse.ArgumentTypeError(f"{text!r} is not a fraction between 0 and 10 (e.g. 0.15 or 15%)")
    return value


def add_memory_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--max-ram", type=_bytes, metavar="BYTES",
                   help="the most arena (working memory) the model may take: above it, the layers where the "
                        "arena peaks are computed in tiles of rows (default: what the board's RAM leaves, when "
                        "a board is given); refused if no tiling gets there")
    p.add_argument("--max-recompute", type=_fraction, default=DEFAULT_MAX_RECOMPUTE, metavar="FRACTION",
                   help="extra instructions tiling may add (recomputed tile borders, the calls of many small "
                        "tiles, moved rows; estimated from the CPU's costs), a fraction of the model's "
                        f"(default {DEFAULT_MAX_RECOMPUTE}; {100 * DEFAULT_MAX_RECOMPUTE:.0f}%% works too)")
    add_weights_argument(p)


def add_weights_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument("--weights-in-ram", action="store_true",
                   help="copy the model's constants (weights, biases, requantization tables) from flash into RAM "
                        "at startup, as .data is, and read them there: no flash wait states, at the cost of their "
                        "size in RAM as well as in flash (metadata.json's constant_bytes; e.g. ~270 KB for MLPerf "
                        "Tiny's AD). They go to the board's fastest RAM region that holds them, a tightly coupled "
                        "one first, or are split across its regions, each array whole in one; refused when the "
                        "constants, the arena and the stack do not fit its RAM")


def tuning_of(args: argparse.Namespace, board: str | None) -> Tuning | None:
    """The --tuning file's variants measured for `board` (None: a CPU without a board; tuning.load_tuning)."""
    if args.tuning is None:
        return None
    from ..tuning import load_tuning   # TVM, through the ops: only for a tuning file

    return load_tuning(args.tuning, board)


def add_mlperf_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument("--mlperf-tiny", nargs="?", const=mlperf.AUTO, choices=[*mlperf.BENCHMARKS, mlperf.AUTO],
                   metavar="ID", help="firmware that is an MLPerf Tiny DUT for benchmark ID "
                   f"({', '.join(mlperf.BENCHMARKS)}; alone: the one whose reference model has the model's I/O), "
                   "as the stock runner (mlcommons/tiny benchmark/runner) expects it")


def add_runner_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--runner", help="flash runner for a physical board: west (the build's default, default), a "
                   "Zephyr runner such as openocd or jlink, or pyocd (Python API)")
    p.add_argument("--serial-number", help="the probe's serial number, to pick one of several identical boards "
                   "(`mtk ports`)")
    p.add_argument("--port", help="the board's serial port, when its USB ids do not find it")


def add_target_arguments(p: argparse.ArgumentParser, several_boards: bool = False) -> None:
    if several_boards:
        p.add_argument("--board", action="append", dest="boards", metavar="BOARD", type=board_name,
                       help=f"target board, repeatable (default: {DEFAULT_BOARD}); `mtk boards` lists them, "
                            "`mtk boards --zephyr` those of your Zephyr workspace")
    else:
        p.add_argument("--board", default=DEFAULT_BOARD, type=board_name,
                       help=f"target board (default: {DEFAULT_BOARD}, QEMU Cortex-M4F); `mtk boards` lists them, "
                            "`mtk boards --zephyr` those of your Zephyr workspace")
    p.add_argument("--platform", choices=sorted(PLATFORMS),
                   help="firmware platform (default: baremetal for QEMU boards, zephyr for physical boards)")
    add_runner_arguments(p)
    p.add_argument("--emulate", action="store_true",
                   help="run a physical board's model in QEMU on the machine with its core (Cortex-M4: mps2/an386, "
                        "M7: mps2/an500, M33: mps2/an505, ...) and estimate its cycles and time at the board's clock "
                        "and flash/RAM timing (an estimate: see README, cycle model)")
    p.add_argument("--calib", metavar="DATA",
                   help="calibration data (.npy/.npz/folder) to quantize a float model on the way")
    p.add_argument("--build-dir", type=argtypes.folder, metavar="DIR",
                   help="keep the compiled model and the firmware project here (default: a temporary folder)")
    p.add_argument("--no-cache", dest="cache", action="store_false",
                   help="build again even if a bare-metal firmware built before from the same model, options "
                        "and mtk is in the cache ($XDG_CACHE_HOME/mtk, else ~/.cache/mtk)")
    add_tuning_argument(p)
    add_memory_arguments(p)
    add_mlperf_argument(p)
    p.add_argument("--timeout", type=_seconds, metavar="SECONDS",
                   help="seconds to wait for each whole answer of the target (default: 10; inferences 120)")
    p.add_argument("--json", action="store_true", help="print the result as JSON on stdout")


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 < value < 1e6:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds in (0, 1e6)")
    return value


def run_options(args: argparse.Namespace, board: Board | str, runner_options: dict[str, Any] | None = None,
                **overrides) -> RunOptions:
    from ..runoptions import RunOptions

    board = require_clock(board if isinstance(board, Board) else get_board(board))
    if getattr(args, "emulate", False):
        board, runner_options, overrides = _emulated(args, board, runner_options, overrides)
    if runner_options is None:
        runner_options = {key: value for key in ("runner", "serial_number", "port")
                          if (value := getattr(args, key)) is not None}
    platform = args.platform or board.caps.default_platform
    return RunOptions(board=board, platform=platform, calib=args.calib, build_dir=args.build_dir,
                      runner_options=runner_options, tuning=tuning_of(args, board.budget_name),
                      mlperf_tiny=args.mlperf_tiny, timeout=args.timeout, max_ram=args.max_ram,
                      max_recompute=args.max_recompute, cache=args.cache, weights_in_ram=args.weights_in_ram,
                      **overrides)


def _emulated(args: argparse.Namespace, board: Board, runner_options: dict[str, Any] | None,
              overrides: dict[str, Any]) -> tuple[Board, dict[str, Any], dict[str, Any]]:
    """--emulate: the QEMU board with `board`'s core, run under `board`'s cycle model."""
    from ..cycles.emulate import emulated_runner
    from ..errors import MtkError

    given = [f"--{o.replace('_', '-')}" for o in ("runner", "serial_number", "port", "platform")
             if getattr(args, o, None) is not None]
    if board.qemu is not None:
        raise MtkError(f"--emulate runs a physical board's code in QEMU: not with {board.name}")
    if given or runner_options:
        raise MtkError(f"--emulate runs in QEMU: {', '.join(given) or '--lab'} is for a board on the bench")
    return *emulated_runner(board), {**overrides, "emulate": board}
