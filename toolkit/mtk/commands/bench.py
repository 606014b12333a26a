"""mtk bench: models × boards, one table (or JSON list, or PNG chart) of counts and memory."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from .. import ui
from ..boards import DEFAULT_BOARD, Board, get_board
from ..errors import MtkError
from ..lab import lab_targets
from ..pipeline import RunResult, run_model
from ._layers import layer_table
from ._target import add_target_arguments, run_options

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

exit status: 0 all ran, 4 some model/board pair failed, 2 bad usage, 3 tool missing
"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("models", nargs="+", help=".tflite models (int8; float with --calib)")
    add_target_arguments(p, several_boards=True)
    p.add_argument("-n", "--runs", type=int, default=5, help="inferences timed per pair (default: 5)")
    p.add_argument("--profile", action="store_true", help="per-layer counts (profiling builds): a table per "
                   "model and board (MACs, count, MACs per unit, share) and, with --plot, a chart per model")
    p.add_argument("--plot", type=Path, metavar="PNG", help="write charts of the results to this PNG file: per "
                   "inference by model and board (log axis), flash and RAM against each board's")
    p.add_argument("--lab", type=Path, metavar="MAP",
                   help="run on the connected boards of a Zephyr Twister hardware map (`mtk ports --hardware-map`)")


def _row(r: RunResult) -> list[object]:
    return [r.model, r.board.name, f"{r.per_inference.median:,}", r.unit, f"{r.time_ms:.2f}",
            f"{r.macs / max(r.per_inference.median, 1):.3f}", f"{r.arena_bytes:,}", f"{r.sizes.ram_bytes:,}",
            f"{r.sizes.flash_bytes:,}", f"{r.code_bytes:,}"]


def _targets(args: argparse.Namespace) -> list[tuple[Board, dict[str, Any] | None]]:
    """(board, runner options or None for the command line's) for every board to run on."""
    if args.lab is not None:
        if args.boards:
            raise MtkError("give either --board or --lab, not both")
        targets = list(lab_targets(args.lab))
        if not targets:
            raise MtkError(f"{args.lab} lists no connected board mtk knows")
        return targets
    return [(get_board(name), None) for name in args.boards or [DEFAULT_BOARD]]


def run(args: argparse.Namespace) -> int:
    targets = _targets(args)
    pairs = [(m, board, runner) for board, runner in targets for m in args.models]
    results: list[RunResult] = []
    failures: list[tuple[str, str, str]] = []
    for k, (model, board, runner) in enumerate(pairs, 1):
        ui.info(f"[{k}/{len(pairs)}] {Path(model).name} on {board.name}")
        try:
            results.append(run_model(model, run_options(args, board, runner, runs=args.runs, profile=args.profile)))
        except MtkError as err:
            ui.info(f"  failed: {err}")
            failures.append((Path(model).name, board.name, str(err).splitlines()[0]))
    if args.plot and results:
        from ..plots import write_bench_png   # matplotlib is slow to import
        write_bench_png(results, args.plot)
    if args.json:
        json.dump([r.to_json() for r in results] +
                  [{"model": m, "board": b, "error": e} for m, b, e in failures], sys.stdout)
        print()
    else:
        print(ui.table(["model", "board", "per inference", "unit", "ms", "MACs/unit", "arena B", "RAM B",
                        "flash B", "code B"], [_row(r) for r in results]))
        for model, board, error in failures:
            print(f"FAILED {model} on {board}: {error}")
        for r in results:
            if r.layers:
                print(f"\n{r.model} on {r.board.name}, per layer:\n{layer_table(r)}")
    return 4 if failures else 0
