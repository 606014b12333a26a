"""mtk validate: the target's outputs against the tflite-micro interpreter on the host, element by element."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from .. import ui
from ..errors import MismatchError
from ._target import add_target_arguments, run_options

if TYPE_CHECKING:
    from ..runresult import RunResult
    from ..samples import Sample

NAME = "validate"
HELP = "run samples on the target and compare every output with tflite-micro (exit 1 on any mismatch)"
DESCRIPTION = """\
Build and run the model on the board like `mtk run`, send each sample, read the outputs back
and compare them with TensorFlow Lite for Microcontrollers' reference interpreter on the host.
Prints the samples whose outputs differ (every sample with -v): mismatching elements and the
largest absolute difference. With labelled samples (an .npz with `x` and class labels `y`): the
top-1 accuracy of the target and of tflite-micro, overall and per class; for a float model
quantized on the way (--calib), the target's and tflite-micro's outputs against the float
model's (RMSE, MAE, L2 relative error, cosine, top-1 agreement), as stedgeai's validation does.

examples:
  mtk validate model.tflite --board mps2/an386 --input samples.npy
  mtk validate model.tflite --board qemu_cortex_m3          # 3 deterministic random samples
  mtk validate models/digits_cnn_float.tflite --calib models/digits_calib.npz --input models/digits_test.npz

exit status: 0 bit-exact, 1 outputs differ, 2 bad model/usage, 3 tool missing, 4 build or target failure
"""

MISMATCHES_SHOWN = 10   # differing samples listed without -v


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", help=".tflite model (int8; float with --calib)")
    add_target_arguments(p)
    p.add_argument("--input", metavar="FILE", help="samples: .npy (N samples or one) or .npz with one array per "
                   "input name (default: 3 deterministic random samples); an .npz's `y` (class labels) "
                   "gives the accuracy")
    p.add_argument("-v", "--verbose", action="store_true", help="a line for every sample, bit-exact or not")


def compare(result: RunResult, expected: list[Sample] | None = None) -> list[dict]:
    """Per sample: mismatching elements and max abs difference over all outputs, against `expected`
    (default: tflite-micro's outputs for the same samples, run in order as one stream like the firmware
    runs them: a model with state (SVDF) carries it from each sample to the next)."""
    if expected is None:
        from ..reference import run_reference_sequence

        expected = run_reference_sequence(result.int8_model, result.inputs)
    report = []
    for k, (got, want) in enumerate(zip(result.outputs, expected)):
        diffs = [abs(g.reshape(-1).astype("int64") - w.reshape(-1).astype("int64")) for g, w in zip(got, want)]
        report.append({"sample": k, "elements": int(sum(d.size for d in diffs)),
                       "mismatches": int(sum((d != 0).sum() for d in diffs)),
                       "max_abs_diff": int(max((d.max() for d in diffs if d.size), default=0))})
    return report


def run(args: argparse.Namespace) -> int:
    from ..evaluation import evaluate, format_evaluation
    from ..pipeline import run_model
    from ..reference import run_reference_sequence

    result = run_model(args.model, run_options(args, args.board, runs=1, random_samples=3), args.input)
    with ui.step(f"running the {len(result.inputs)} samples in tflite-micro on the host"):
        expected = run_reference_sequence(result.int8_model, result.inputs)
    report = compare(result, expected)
    evaluation = evaluate(result, args.input, expected)
    mismatches = sum(r["mismatches"] for r in report)
    if args.json:
        json.dump({"board": result.board.name, "platform": result.platform, "model": result.model,
                   "tuning": result.tuning, "samples": report,
                   "mismatches": mismatches, "bit_exact": mismatches == 0,
                   "per_inference": {"unit": result.unit, "median": result.per_inference.median},
                   "estimated_cycles": result.estimate.to_json() if result.estimate else None,
                   "evaluation": evaluation.to_json() if evaluation else None}, sys.stdout)
        print()
    else:
        differing = [r for r in report if r["mismatches"]]
        shown = report if args.verbose else differing[:MISMATCHES_SHOWN]
        for r in shown:
            verdict = "bit-exact" if r["mismatches"] == 0 else \
                f"{r['mismatches']} of {r['elements']} elements differ (max abs diff {r['max_abs_diff']})"
            print(f"sample {r['sample']}  {verdict}")
        if len(differing) > len(shown) and not args.verbose:
            print(f"... {len(differing) - len(shown)} more samples differ (-v prints every sample)")
        print(f"{result.model} on {result.board.name}: {len(report)} samples, "
              + ("bit-exact with tflite-micro" if mismatches == 0 else
                 f"{len(differing)} differ from tflite-micro ({mismatches} elements)"))
        print(f"time: {result.per_inference.median:,} {result.unit} per inference"
              + (f"; estimate {result.estimate.line()}" if result.estimate else ""))
        if evaluation:
            print("\n" + format_evaluation(evaluation, args.verbose))
    if mismatches:
        raise MismatchError(f"{result.model} on {result.board.name}: {mismatches} output elements differ "
                            "from tflite-micro")
    return 0
