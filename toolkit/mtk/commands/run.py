"""mtk run: compile, build, run a model on a board and read timing and outputs back over serial."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from ..argtypes import MAX_TIMED_RUNS, integer
from ._layers import layer_heading, layer_table, run_profiled
from ._target import add_target_arguments, run_options

if TYPE_CHECKING:
    from ..runresult import RunResult

NAME = "run"
HELP = "compile a model, build firmware, run it on a board (QEMU by default) and print timing and outputs"
DESCRIPTION = """\
Compile the model, render and build firmware for the board, run it (QEMU boards: in
qemu-system-arm with exact instruction counts), send the input over the serial port and read
back the per-inference count (min/median/max over -n runs), memory use and the outputs.
With labelled samples (an .npz with `x` and class labels `y`) it prints the top-1 accuracy on
the target, overall and per class; for a float model quantized on the way (--calib), how far the
target's outputs are from the float model's and from tflite-micro's (RMSE, MAE, L2 relative
error, cosine, top-1 agreement), as stedgeai's validation report does.

examples:
  mtk run model.tflite                                   # default board mps2/an386 (QEMU, Cortex-M4F)
  mtk run model.tflite --board qemu_cortex_m3 -n 20 --input x.npy
  mtk run model_float.tflite --calib calib.npy           # quantize on the way
  mtk run models/digits_cnn_float.tflite --calib models/digits_calib.npz --input models/digits_test.npz
  mtk run model.tflite --profile                         # per-layer table

exit status: 0 ok, 2 bad model/usage, 3 tool missing, 4 build or target failure
"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", help=".tflite model (int8; float with --calib)")
    add_target_arguments(p)
    p.add_argument("--input", metavar="FILE",
                   help=".npy with one sample (with or without the batch dimension) or several, or an .npz "
                        "with one array per input name; float data is quantized with the input's scale "
                        "(default: deterministic random data); an .npz's `y` (class labels) gives the accuracy")
    p.add_argument("-n", "--runs", type=integer(1, MAX_TIMED_RUNS, "inferences"), default=10,
                   help=f"inferences to time, 1 to {MAX_TIMED_RUNS} (default: 10)")
    p.add_argument("--profile", action="store_true", help="per-layer counts, from a profiling build run beside "
                   "the plain one (whose totals are printed)")
    p.add_argument("-v", "--verbose", action="store_true", help="print every sample's outputs (default: "
                   "the first sample's only)")


def _count(value: int, unit: str) -> str:
    return f"{value:,} {unit}"


def format_outputs(result: RunResult, verbose: bool = False) -> list[str]:
    lines = []
    for k, outputs in enumerate(result.outputs if verbose else result.outputs[:1]):
        first = outputs[0].reshape(-1)
        values = " ".join(str(int(v)) for v in first[:16]) + (" ..." if first.size > 16 else "")
        argmax = f"argmax {int(first.argmax())}  " if first.size > 1 else ""
        lines.append(f"output {k}   {argmax}[{values}]")
    if not verbose and len(result.outputs) > 1:
        lines.append(f"           ({len(result.outputs)} samples: -v prints each one's outputs)")
    return lines


def _stack(result: RunResult) -> str:
    """The main stack's reservation and high-water mark, as far as the firmware tells them."""
    reserved = f"{result.sizes.stack_bytes:,} B" if result.sizes.stack_bytes else None
    used = f"{result.stack_used_bytes:,} B used" if result.stack_used_bytes else None
    parts = [p for p in (reserved, used) if p]
    return f" (stack {', '.join(parts)})" if parts else ""


def _in_ram(result: RunResult) -> str:
    """What the firmware copies from flash into RAM at startup: the constants (--weights-in-ram) by region, the
    model's code into the board's code RAM."""
    from ..compiled import bytes_by_region

    constants = f", copied into RAM: {bytes_by_region(result.constants_in_ram)}" if result.constants_in_ram else ""
    code = result.sizes.code_ram_bytes
    return constants + (f"; {code:,} B of code run from the code RAM (in both figures)" if code else "")


def format_result(result: RunResult, verbose: bool = False) -> str:
    s, board = result.per_inference, result.board
    lines = [
        f"board      {board.name} ({board.caps.where}, {board.cpu.name}, {board.clock_hz / 1e6:g} MHz)",
        f"model      {result.model}",
        f"inference  {_count(s.median, result.unit)} median (min {s.min:,}, max {s.max:,}, {s.count} runs)",
        f"time       {result.time_ms:.3f} ms at {board.clock_hz / 1e6:g} MHz"
        + (" (one instruction a cycle)" if result.unit == "instructions" else ""),
        *([f"estimate   {result.estimate.line()}"] if result.estimate else []),
        f"MACs       {result.macs:,} ({result.macs / max(s.median, 1):.3f} per {result.unit[:-1]})",
        f"memory     arena {result.arena_bytes:,} B, RAM {result.sizes.ram_bytes:,} B{_stack(result)}, "
        f"flash {result.sizes.flash_bytes:,} B (code {result.code_bytes:,} B, constants {result.constant_bytes:,} B)"
        + _in_ram(result),
    ]
    lines += format_outputs(result, verbose)
    if result.layers:
        lines += ["", layer_heading(result), layer_table(result)]
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    from ..evaluation import evaluate, format_evaluation
    from ..pipeline import run_model
    from ..reader import read_model

    model = read_model(args.model)   # once, for both builds of --profile

    def run_build(profile: bool) -> RunResult:
        return run_model(model, run_options(args, args.board, runs=1 if profile else args.runs, profile=profile),
                         args.input)

    result = run_profiled(run_build) if args.profile else run_build(False)
    evaluation = evaluate(result, args.input)
    if args.json:
        json.dump({**result.to_json(), "evaluation": evaluation.to_json() if evaluation else None}, sys.stdout)
        print()
    else:
        print(format_result(result, args.verbose))
        if evaluation:
            print("\n" + format_evaluation(evaluation, args.verbose))
    return 0
