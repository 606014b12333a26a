"""mtk's estimated cycles on the MLPerf Tiny models next to the best published silicon results.

    python bench/published_compare.py ../shared/models/*.tflite /tmp/vww_96_int8.tflite
    python bench/published_compare.py kws.tflite --board nucleo_l4r5zi --json

Each model runs with `--emulate` on each board: the board's code in QEMU on a machine whose core executes it,
under the cycle model (the core's table, the board's clock and flash/RAM timing, mtk.cycles). Its
estimated cycles per inference (the model's run function: no input conversion, no I/O) are set next
to the fewest cycles per inference published for that board and benchmark in
../shared/peer/mlperf_tiny_published.csv (MLPerf Tiny v0.5-v1.3, cycles = latency x clock), with
the stack that reached them, and mtk's ratio to it (< 1: mtk's estimate is fewer cycles). The
benchmark of a model is the first of kws, ic, vww, ad in its file name. The firmware is compiled for the
board's flash and RAM: a model that does not fit them gets a row saying so, and no estimate.

Like with like: the published rows whose stack reads its weights from RAM (Bosch HALE's "max_performance
(weights in RAM)") are compared with mtk built with --weights-in-ram, in a row of their own ("RAM" in the
weights column); the others, with mtk's default build, whose constants stay in flash ("flash").

mtk's figure is an estimate; the published ones are measured on silicon (see README, cycle model, for
what the estimate leaves out). The table printed is the README's; --json gives every figure. mtk's RAM is
the firmware's, with the model's code copied into a board's code RAM (boards.yaml `code_ram`) among it.

Under the table, each row above 0.70 of the best published says what limits it (--json: the row's `limits`): the
cycles its code fetches and loads wait for their memory (flash, QSPI, cache misses), the core's own cycles without
them and the ratio those would give, and the layers with the most cycles (from a profiling build of the model).
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import sys
from pathlib import Path

from mtk.boards import get_board
from mtk.cycles.emulate import emulated_runner
from mtk.errors import DoesNotFit, MtkError
from mtk.pipeline import run_model
from mtk.runoptions import RunOptions

PUBLISHED = Path(__file__).resolve().parents[2] / "shared" / "peer" / "mlperf_tiny_published.csv"
BENCHMARKS = ("kws", "ic", "vww", "ad")
# the published system names of each board (the CSV's `system` column starts with one of them)
SYSTEMS = {"nucleo_l4r5zi": ("NUCLEO-L4R5ZI",), "nucleo_h7a3zi_q": ("NUCLEO-H7A3ZI",),
           "nucleo_u575zi_q": ("NUCLEO-U575ZI",), "nucleo_f746zg": ("NUCLEO-F746ZG",),
           "stm32f746g_disco": ("STM32F746G-DISCO", "32F746GDISCOVERY", "DISCO-F746NG"),
           "nucleo_g0b1re": ("NUCLEO-G0B1RE",)}
DEFAULT_BOARDS = ("nucleo_l4r5zi", "nucleo_h7a3zi_q", "nucleo_u575zi_q")
LIMITS_ABOVE = 0.70   # rows above this ratio to the best published say what limits them
TOP_LAYERS = 3


def benchmark_of(model: Path) -> str:
    words = re.split(r"[^a-z0-9]+", model.stem.lower())
    found = next((b for b in BENCHMARKS if b in words), None)
    if found is None:
        raise MtkError(f"{model}: no MLPerf Tiny benchmark ({', '.join(BENCHMARKS)}) in its file name")
    return found


def weights_in_ram(row: dict[str, str]) -> bool:
    """A published row of a stack that reads its weights from RAM (its `stack` says so)."""
    return "weights in ram" in row["stack"].lower()


def best_published(rows: list[dict[str, str]], board: str, benchmark: str,
                   in_ram: bool | None = None) -> dict[str, str] | None:
    """The fewest cycles published for `board` and `benchmark`: of every row, or (`in_ram` True/False) of the rows
    whose weights are in RAM / in flash."""
    systems = tuple(s.lower() for s in SYSTEMS.get(board, ()))
    matching = [r for r in rows if r["benchmark"] == benchmark and r["system"].lower().startswith(systems)
                and (in_ram is None or weights_in_ram(r) == in_ram)]
    return min(matching, key=lambda r: float(r["cycles_per_inference"]), default=None) if systems else None


def estimate(model: Path, board_name: str, in_ram: bool = False, profile: bool = False) -> dict:
    """mtk's estimate of `model` on `board_name`; a profiling build's (`profile`) with each layer's op."""
    board = get_board(board_name)
    qemu, runner_options = emulated_runner(board)
    result = run_model(model, RunOptions(board=qemu, runs=1, emulate=board, weights_in_ram=in_ram, profile=profile,
                                         runner_options=runner_options))
    if result.estimate is None:
        raise MtkError(f"{model.name} on {board_name}: the cycle model gave no estimate")
    figures = result.estimate.to_json()
    if profile:
        ops = {layer.index: layer.type for layer in result.layers}
        figures["layers"] = [{**layer, "op": ops[layer["index"]]} for layer in figures["layers"]]
    return {"instructions": result.per_inference.median, "ram_bytes": result.sizes.ram_bytes,
            "code_ram_bytes": result.sizes.code_ram_bytes, **figures}


def limits(mtk: dict, layers: list[dict], published_cycles: int) -> dict:
    """What holds mtk's estimate `mtk` where it is: its memory waits, the core's cycles without them and their
    ratio to `published_cycles`, and the TOP_LAYERS `layers` (a profiling build's) with the most cycles."""
    waits = mtk["memory_wait_cycles"]
    waited = waits["fetch"] + waits["data"]
    layer_cycles = sum(layer["cycles"] for layer in layers)
    top = sorted(layers, key=lambda layer: -layer["cycles"])[:TOP_LAYERS]
    core = mtk["median"] - waited
    return {"memory_wait_cycles": waits, "memory_wait_share": round(waited / mtk["median"], 3),
            "core_cycles": core, "core_ratio": round(core / published_cycles, 3),
            "top_layers": [{"index": layer["index"], "op": layer["op"], "cycles": layer["cycles"],
                            "share": round(layer["cycles"] / layer_cycles, 3),
                            "memory_wait_cycles": sum(layer["memory_wait_cycles"].values())} for layer in top]}


def compare(models: list[Path], boards: list[str], published: Path) -> list[dict]:
    with open(published, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    out = []
    for board in boards:
        for model in models:
            benchmark = benchmark_of(model)
            ram_row = best_published(rows, board, benchmark, in_ram=True)
            for in_ram in (False, True) if ram_row else (False,):
                out.append(comparison(model, board, benchmark, in_ram, best_published(rows, board, benchmark, in_ram)))
    return out


def comparison(model: Path, board: str, benchmark: str, in_ram: bool, best: dict[str, str] | None) -> dict:
    """mtk's estimate of `model` on `board` (its constants in RAM or in flash) beside the published row `best`; a
    model that does not fit the board gets the reason instead (`does_not_fit`)."""
    row = {"board": board, "benchmark": benchmark, "model": model.name, "weights": "RAM" if in_ram else "flash",
           "clock_hz": get_board(board).clock_hz,
           "published": None if best is None else {
               "cycles": int(best["cycles_per_inference"]), "latency_ms": float(best["latency_ms"]),
               "stack": best["stack"], "submitter": best["submitter"], "version": best["version"],
               "system": best["system"]}}
    try:
        mtk = estimate(model, board, in_ram)
    except DoesNotFit as err:   # no firmware to estimate
        return {**row, "does_not_fit": err.message, "mtk_estimated_cycles": None, "ratio": None}
    ratio = None if best is None else round(mtk["median"] / int(best["cycles_per_inference"]), 3)
    row = {**row, "mtk_estimated_cycles": mtk["median"], "mtk_estimated_ms": mtk["time_ms_at_clock"],
           "instructions": mtk["instructions"], "mtk_ram_bytes": mtk["ram_bytes"],
           "mtk_code_ram_bytes": mtk["code_ram_bytes"], "estimate": mtk, "ratio": ratio}
    if ratio is not None and ratio > LIMITS_ABOVE:
        row["limits"] = limits(mtk, estimate(model, board, in_ram, profile=True)["layers"],
                               int(best["cycles_per_inference"]))
    return row


def markdown(results: list[dict]) -> str:
    lines = ["| board | benchmark | weights | mtk estimated cycles (ms) | best published cycles (ms) | stack | mtk / best "
             "| mtk RAM B |", "|---|---|---|---|---|---|---|---|"]
    for r in results:
        p = r["published"]
        best = "-" if p is None else f"{p['cycles']:,} ({p['latency_ms']:g})"
        stack = "-" if p is None else f"{p['stack']} (v{p['version']})"
        ratio = "-" if r["ratio"] is None else f"{r['ratio']:.2f}"
        mtk = f"{r['mtk_estimated_cycles']:,} ({r['mtk_estimated_ms']:.3f})" if "does_not_fit" not in r else \
            "does not fit: " + r["does_not_fit"].split(": ", 1)[-1]
        lines.append(f"| {r['board']} ({r['clock_hz'] / 1e6:g} MHz) | {r['benchmark']} | {r['weights']} | {mtk} | "
                     f"{best} | {stack} | {ratio} | {ram_text(r)} |")
    return "\n".join(lines)


def limits_text(results: list[dict]) -> str:
    """Under the table: what limits each row above LIMITS_ABOVE (its `limits`)."""
    lines = []
    for r in results:
        if "limits" not in r:
            continue
        limit = r["limits"]
        waits = limit["memory_wait_cycles"]
        layers = ", ".join(f"layer {layer['index']} {layer['op']} {layer['cycles']:,} ({100 * layer['share']:.1f} %, "
                           f"waits {layer['memory_wait_cycles']:,})" for layer in limit["top_layers"])
        lines.append(f"- {r['board']} {r['benchmark']} {r['weights']} ({r['ratio']:.2f}): memory waits "
                     f"{waits['fetch'] + waits['data']:,} of {r['mtk_estimated_cycles']:,} cycles "
                     f"({100 * limit['memory_wait_share']:.1f} %: fetch {waits['fetch']:,}, data {waits['data']:,}); "
                     f"the core's {limit['core_cycles']:,} without them: {limit['core_ratio']:.2f}; most cycles "
                     f"(profiling build): {layers}")
    if not lines:
        return ""
    return "\n".join([f"What limits the rows above {LIMITS_ABOVE:.2f} of the best published:", *lines])


def ram_text(row: dict) -> str:
    """mtk's firmware RAM, with the part of it that is code run from the board's code RAM."""
    if row.get("mtk_ram_bytes") is None:
        return "-"
    code = row["mtk_code_ram_bytes"]
    return f"{row['mtk_ram_bytes']:,}" + (f" (code {code:,})" if code else "")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    p.add_argument("models", nargs="+", type=Path, help="MLPerf Tiny .tflite models (int8)")
    p.add_argument("--board", action="append", dest="boards", metavar="BOARD",
                   help=f"a physical board, repeatable (default: {', '.join(DEFAULT_BOARDS)}; "
                        f"with a published result also {', '.join(sorted(set(SYSTEMS) - set(DEFAULT_BOARDS)))})")
    p.add_argument("--published", type=Path, default=PUBLISHED, help="the published results CSV")
    p.add_argument("--json", action="store_true", help="print the comparison as JSON")
    args = p.parse_args(argv)
    try:
        results = compare(args.models, args.boards or list(DEFAULT_BOARDS), args.published)
    except MtkError as err:
        print(f"published_compare: {err}", file=sys.stderr)
        return err.exit_code
    if args.json:
        json.dump(results, sys.stdout, indent=1)
        print()
    else:
        print(markdown(results))
        limited = limits_text(results)
        if limited:
            print("\n" + limited)
    return 0


if __name__ == "__main__":
    sys.exit(main())
