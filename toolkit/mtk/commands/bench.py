"""mtk bench: models × boards, one table (or JSON list, or PNG chart) of counts and memory."""

from __future__ import annotations

import argparse
import json
import sys
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import ui
from ..argtypes import MAX_TIMED_RUNS, integer, real
from ..boards import DEFAULT_BOARD, Board, get_board
from ..errors import MtkError
from ..fsutil import check_readable_files
from ..lab import Failure, lab_targets
from ..labgrid_lab import coordinator_address, is_labgrid_lab, require_labgrid
from ._layers import layer_heading, layer_table, run_profiled
from ._target import add_target_arguments, run_options, tuning_of

if TYPE_CHECKING:
    from ..runresult import RunResult

NAME = "bench"
HELP = "benchmark models on boards: per-inference counts, memory, optional per-layer profile and PNG chart"
DESCRIPTION = """\
Run every model on every board like `mtk run` and report per-inference counts (instructions
under QEMU, cycles on silicon), time at the board's clock, MACs per unit, arena, RAM, flash
and code bytes. A failing pair is reported and the others still run.

examples:
  mtk bench a.tflite b.tflite --board mps2/an386 --board mps2/an500
  mtk bench models/*.tflite --json > bench.json
  mtk bench a.tflite --profile --plot bench.png
  mtk bench models/*.tflite --lab map.yaml --json        # every connected board of a Twister hardware map
  mtk bench models/*.tflite --lab labgrid://lab:20408    # every place tagged board=<mtk board> of a labgrid lab
  mtk bench a.tflite --lab map.yaml --emulate            # each kind of board of the lab estimated in local QEMU

exit status: 0 all ran, 4 some model/board pair failed, 2 bad usage, 3 tool missing
"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("models", nargs="+", help=".tflite models (int8; float with --calib)")
    add_target_arguments(p, several_boards=True)
    p.add_argument("-n", "--runs", type=integer(1, MAX_TIMED_RUNS, "inferences"), default=5,
                   help=f"inferences timed per pair, 1 to {MAX_TIMED_RUNS} (default: 5)")
    p.add_argument("--profile", action="store_true", help="per-layer counts from profiling builds run beside the "
                   "plain ones (whose totals the table shows): a table per "
                   "model and board (MACs, count, MACs per unit, share) and, with --plot, a chart per model")
    p.add_argument("--plot", type=Path, metavar="PNG", help="write charts of the results to this PNG file: per "
                   "inference (a linear panel per model, a bar per board), flash and RAM against each board's limit")
    p.add_argument("--lab", metavar="MAP|labgrid[://HOST:PORT]",
                   help="run on the connected boards of a Zephyr Twister hardware map (`mtk ports --hardware-map`), "
                        "or on every place tagged board=<mtk board> of a labgrid coordinator (address: "
                        "labgrid://HOST:PORT, else LG_COORDINATOR, else 127.0.0.1:20408)")
    p.add_argument("--lab-timeout", type=real(0, 1e6, "seconds"), default=300.0, metavar="SECONDS",
                   help="labgrid: wait this long for a place another client holds, then skip it (default: 300)")


def _row(r: RunResult, lab: bool) -> list[object]:
    return ([r.place, r.host] if lab else []) + [
        r.model, r.board.name, f"{r.per_inference.median:,}", r.unit, f"{r.time_ms:.2f}",
        f"{r.estimate.per_inference.median:,}" if r.estimate else "-", f"{r.estimate.time_ms:.2f}" if r.estimate else "-",
        f"{r.macs / max(r.per_inference.median, 1):.3f}", f"{r.arena_bytes:,}", f"{r.sizes.ram_bytes:,}",
        f"{r.sizes.flash_bytes:,}", f"{r.code_bytes:,}"]


def _targets(args: argparse.Namespace) -> list[tuple[Board, dict[str, Any] | None]]:
    """(board, runner options or None for the command line's) for every board to run on."""
    if args.lab is not None:
        if args.boards:
            raise MtkError("give either --board or --lab, not both")
        targets = list(lab_targets(Path(args.lab)))
        if not targets:
            raise MtkError(f"{args.lab} lists no connected board mtk knows")
        return _emulated_lab([board for board, _ in targets]) if args.emulate else targets
    return [(get_board(name), None) for name in args.boards or [DEFAULT_BOARD]]


def _emulated_lab(boards: list[Board]) -> list[tuple[Board, None]]:
    """`--lab --emulate`: each kind of board of the lab once, in local QEMU under its cycle model (the lab's
    boards are not used: the same firmware gives the same figures on every one of a kind)."""
    return [(board, None) for board in {board.name: board for board in boards}.values()]


def _run_pair(args: argparse.Namespace, model: str, board: Board, runner: dict[str, Any] | None,
              profile: bool) -> RunResult:
    from ..pipeline import run_model

    if args.emulate and args.lab is not None and board.qemu is not None:   # a lab's QEMU board: run as it is
        args = argparse.Namespace(**{**vars(args), "emulate": False})
    return run_model(model, run_options(args, board, runner, runs=1 if profile else args.runs, profile=profile))


def _bench_local(args: argparse.Namespace, targets: list[tuple[Board, dict[str, Any] | None]] | None = None
                 ) -> tuple[list[RunResult], list[Failure]]:
    targets = targets or _targets(args)
    check_readable_files(args.models, "model")   # bad input (2), not a board that failed (4)
    for board, _ in targets:   # so is a tuning file without a board's schedules
        tuning_of(args, board.budget_name)
    pairs = [(m, board, runner) for board, runner in targets for m in args.models]
    results: list[RunResult] = []
    failures: list[Failure] = []
    for k, (model, board, runner) in enumerate(pairs, 1):
        ui.info(f"[{k}/{len(pairs)}] {Path(model).name} on {board.name}")
        try:
            run_build = partial(_run_pair, args, model, board, runner)
            results.append(run_profiled(run_build) if args.profile else run_build(False))
        except MtkError as err:
            ui.info(f"  failed: {err}")
            failures.append(Failure(Path(model).name, board.name, str(err).splitlines()[0]))
    return results, failures


def _bench_labgrid(args: argparse.Namespace) -> tuple[list[RunResult], list[Failure]]:
    if args.boards:
        raise MtkError("give either --board or --lab, not both")
    given = [option for option in ("runner", "serial_number", "port") if getattr(args, option) is not None]
    if given:
        raise MtkError(f"--{given[0].replace('_', '-')} is for a board on this host: a labgrid place is flashed "
                       "through its own probe resource")
    check_readable_files(args.models, "model")
    require_labgrid()
    if args.emulate:
        from ..labgrid_lab.bench import lab_boards
        return _bench_local(args, _emulated_lab(lab_boards(coordinator_address(args.lab))))
    from ..labgrid_lab.bench import bench_on_labgrid
    from ..runoptions import check_runs
    check_runs(args.runs)
    return bench_on_labgrid(coordinator_address(args.lab), [Path(m) for m in args.models],
                            lambda board: run_options(args, board, {}, runs=args.runs, profile=args.profile,
                                                      semihosting=False),
                            args.lab_timeout, args.build_dir)


def run(args: argparse.Namespace) -> int:
    labgrid = args.lab is not None and is_labgrid_lab(args.lab)
    results, failures = (_bench_labgrid if labgrid else _bench_local)(args)
    if args.plot and results:
        from ..plots import write_bench_png   # matplotlib is slow to import
        write_bench_png(results, args.plot, [(f.model, f.target_name) for f in failures])
    if args.json:
        json.dump([r.to_json() for r in results] + [f.to_json() for f in failures], sys.stdout)
        print()
    else:
        print(ui.table((["place", "host"] if labgrid else []) +
                       ["model", "board", "per inference", "unit", "ms", "est. cycles", "est. ms", "MACs/unit",
                        "arena B", "RAM B", "flash B", "code B"], [_row(r, labgrid) for r in results]))
        for label in sorted({r.estimate.label() for r in results if r.estimate}):
            print(f"est.: {label}")
        for f in failures:
            print(f"FAILED {f.model} on {f.board}" + (f" at place {f.place} ({f.host or '?'})" if f.place else "")
                  + f": {f.error}")
        for r in results:
            if r.layers:
                print(f"\n{r.model} on {r.target_name}, {layer_heading(r)}:\n{layer_table(r)}")
    return 4 if failures else 0
