"""Plumerai's showcase model against mtk: MobileNetV2, alpha 0.3, 80×80×3 input, 1000 classes, int8, on a Cortex-M7.

    python bench/mobilenetv2_anchor.py --tf-python /path/to/tf-venv/bin/python
    python bench/mobilenetv2_anchor.py --model mobilenetv2_int8.tflite --json out.json

Needs TensorFlow (`pip install tensorflow-cpu` in a venv of its own: --tf-python is its interpreter; mtk's own
environment need not have it). That interpreter builds `tf.keras.applications.MobileNetV2(alpha=0.3,
input_shape=(80, 80, 3), weights=None, classes=1000)` (random initial weights: nothing is downloaded) and saves
it as a float .tflite, with random calibration inputs in MobileNetV2's [-1, 1] range; `mtk quantize` makes it
int8 (--work keeps both; --model takes an int8 model made so before, and needs no TensorFlow).
Random weights give the same layer shapes and hence the same work as trained ones; only the requantization
constants differ.

It then runs as `mtk bench --emulate --profile` would (in this process: holding_the_model) for the board
(default stm32f746g_disco, the STM32F746 at 216 MHz Plumerai measured on) on the QEMU machine with its core
(mps2/an500, Cortex-M7): the cycle model's estimated cycles per inference at the board's clock and flash timing, instructions (QEMU -icount, exact), RAM (arena +
stack + the firmware's data: the ELF's RAM sections) and flash, beside Plumerai's published figures
(https://plumerai.com/benchmark: 77 ms at 216 MHz = 16.6 M cycles, 80 KiB RAM) and the target of ≤ 11.6 M
cycles, ≤ 64 KiB RAM. Twice: with mtk's default memory plan, then (where that takes more RAM than the target)
with the arena capped so that the same stack and data fit the target (--max-ram: that cap instead), the layers
where the arena peaks computed in tiles. Each run's per-layer estimated cycles (its profiling build) are
summed by kind of layer (1x1 expansion/projection convolutions, depthwise by stride, residual ADDs, ...)
beside their MACs; tiled layers run interleaved (the profile counts consecutive tiled stages as one) and are one
row. The model's flash is set beside the board's. Each plan is also checked with `mtk validate` against
tflite-micro, on the model without its final SOFTMAX: tflite-micro aborts in that layer of this random-weight
model (its 1000 nearly equal scores overflow the sum of exps TFLM allows).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:   # mtk is imported where it runs: the TensorFlow interpreter that runs --float-only has no mtk
    from mtk.boards import Board
    from mtk.graph import Graph, Op
    from mtk.runresult import RunResult

ALPHA, SIDE, CLASSES = 0.3, 80, 1000
CALIB_SAMPLES = 16
PLUMERAI = {"cycles": 16.6e6, "ram_bytes": 80 * 1024}
TARGET = {"cycles": 11.6e6, "ram_bytes": 64 * 1024}


def make_float_model(out: Path, calib: Path, seed: int) -> None:
    """The float .tflite and its calibration inputs (run by the TensorFlow interpreter)."""
    import numpy as np
    import tensorflow as tf

    tf.keras.utils.set_random_seed(seed)
    model = tf.keras.applications.MobileNetV2(alpha=ALPHA, input_shape=(SIDE, SIDE, 3), weights=None,
                                              classes=CLASSES)
    rng = np.random.default_rng(seed)
    for layer in model.layers:   # trained-like batch-norm statistics: Keras' defaults leave channels dead
        if isinstance(layer, tf.keras.layers.BatchNormalization):
            gamma, beta, mean, var = layer.get_weights()
            layer.set_weights([gamma, rng.uniform(0, 0.5, beta.shape), rng.normal(0, 0.1, mean.shape),
                               rng.uniform(0.5, 1.5, var.shape)])
    out.write_bytes(tf.lite.TFLiteConverter.from_keras_model(model).convert())
    np.save(calib, rng.uniform(-1, 1, (CALIB_SAMPLES, SIDE, SIDE, 3)).astype(np.float32))


# ---- the table's logic -------------------------------------------------------------------------

def op_kind(graph: Graph, op: Op) -> str:
    """What a layer is in a MobileNet: a 1x1 convolution feeding a depthwise one expands, one fed by a depthwise one
    projects; other convolutions and depthwise ones by window and stride; an ADD of two activations is a residual."""
    def window_and_stride() -> str:
        kh, kw = graph.tensors[op.inputs[1]].shape[1:3]
        return f"{kh}x{kw} s{op.options.get('stride_h', 1)}"

    if op.type == "CONV_2D":
        if window_and_stride() != "1x1 s1":
            return f"conv {window_and_stride()}"
        if any(o.type == "DEPTHWISE_CONV_2D" and op.outputs[0] in o.inputs for o in graph.ops):
            return "conv 1x1 expansion"
        if any(o.type == "DEPTHWISE_CONV_2D" and op.inputs[0] in o.outputs for o in graph.ops):
            return "conv 1x1 projection"
        return "conv 1x1 other"
    if op.type == "DEPTHWISE_CONV_2D":
        return f"depthwise {window_and_stride()}"
    if op.type == "ADD" and not any(graph.tensors[i].is_constant for i in op.inputs):
        return "add (residual)"
    return op.type.lower().replace("_", " ")


def groups(row: dict) -> list[list[dict]]:
    """mtk bench --profile's layers, each with those after it that have no cycles of their own. Tiled layers run
    interleaved: the profile gives their cycles at the first one and none at the others."""
    counted = {layer["index"] for layer in row["estimated_cycles"]["layers"]}
    runs: list[list[dict]] = []
    for layer in row["layers"]:
        if layer["index"] in counted or not runs:
            runs.append([])
        runs[-1].append(layer)
    return runs


def by_kind(graph: Graph, row: dict) -> list[dict]:
    """mtk bench --profile's row of one model and board, its layers' estimated cycles summed by op_kind (in the order
    a kind first runs); tiled layers (a layer followed by layers with MACs but no cycles) are a row of their own."""
    cycles = {layer["index"]: layer["cycles"] for layer in row["estimated_cycles"]["layers"]}
    kinds: dict[str, dict] = {}

    def add(name: str, members: list[dict], estimated_cycles: int) -> None:
        k = kinds.setdefault(name, {"kind": name, "layers": 0, "macs": 0, "instructions": 0, "estimated_cycles": 0,
                                    "outputs": 0})
        k["layers"] += len(members)
        k["macs"] += sum(m["macs"] for m in members)
        k["instructions"] += sum(m["units"] for m in members)
        k["estimated_cycles"] += estimated_cycles
        k["outputs"] += sum(graph.tensors[graph.ops[m["index"]].outputs[0]].size for m in members)

    for first, *rest in groups(row):
        if any(m["macs"] for m in rest):
            add(f"tiled, layers {first['index']}-{rest[-1]['index']}", [first, *rest],
                cycles.get(first["index"], 0))
            continue
        for m in (first, *rest):
            add(op_kind(graph, graph.ops[m["index"]]), [m], cycles.get(m["index"], 0))
    total_cycles = sum(k["estimated_cycles"] for k in kinds.values())
    total_macs = sum(k["macs"] for k in kinds.values())
    for k in kinds.values():
        k["cycle_share"] = k["estimated_cycles"] / total_cycles
        k["mac_share"] = k["macs"] / total_macs if total_macs else 0.0
        k["cycles_per_mac"] = k["estimated_cycles"] / k["macs"] if k["macs"] else None
        k["cycles_per_output"] = k["estimated_cycles"] / k["outputs"]
    return list(kinds.values())


def figures(row: dict, max_ram: int | None) -> dict:
    """One run's figures from mtk bench's JSON row, with its ratios to Plumerai's and the target."""
    cycles = row["estimated_cycles"]
    out = {"plan": f"arena <= {max_ram:,} B (tiled)" if max_ram else "default", "max_ram": max_ram,
           "board": cycles["board"], "emulated_on": row["board"], "cpu": row["cpu"], "clock_hz": cycles["clock_hz"],
           "macs": row["macs"], "instructions": row["per_inference"]["median"],
           "estimated_cycles": cycles["median"], "time_ms": cycles["time_ms_at_clock"],
           "arena_bytes": row["arena_bytes"], "ram_bytes": row["ram_bytes"], "flash_bytes": row["flash_bytes"]}
    for name, ref in (("plumerai", PLUMERAI), ("target", TARGET)):
        out[f"cycles_vs_{name}"] = out["estimated_cycles"] / ref["cycles"]
        out[f"ram_vs_{name}"] = out["ram_bytes"] / ref["ram_bytes"]
    out["meets_target"] = out["estimated_cycles"] <= TARGET["cycles"] and out["ram_bytes"] <= TARGET["ram_bytes"]
    return out


def exactness(validation: dict) -> dict:
    """mtk validate --json's verdict: whether every output element equals tflite-micro's, how many differ of how many."""
    return {"bit_exact": validation["bit_exact"], "mismatches": validation["mismatches"],
            "elements": sum(s["elements"] for s in validation["samples"])}


def capped_arena(row: dict) -> int | None:
    """The arena that leaves the run's stack and data within the RAM target, or None if the run meets it already."""
    if row["ram_bytes"] <= TARGET["ram_bytes"]:
        return None
    return TARGET["ram_bytes"] - (row["ram_bytes"] - row["arena_bytes"])


def table(runs: list[dict], board_flash: int) -> str:
    """The comparison (markdown): each run of mtk, Plumerai's figures, the target, a note where the model takes more
    than the board's `board_flash` bytes of flash; then each run's cycles by kind."""
    kib = lambda b: f"{b / 1024:.1f} KiB"
    first = runs[0]
    lines = [f"MobileNetV2 alpha {ALPHA} {SIDE}x{SIDE}x3, {CLASSES} classes, int8, for {first['board']} "
             f"({first['cpu']} at {first['clock_hz'] / 1e6:g} MHz, emulated on {first['emulated_on']}): "
             f"{first['macs']:,} MACs", "",
             "| stack | plan | estimated cycles (ms) | vs Plumerai, target | RAM: arena + stack + data | "
             "vs Plumerai, target | flash | bit-exact (without SOFTMAX) |", "|---|---|---|---|---|---|---|---|"]
    for r in runs:
        exact = "yes" if r["bit_exact"] else f"no: {r['mismatches']:,} of {r['elements']:,} outputs differ"
        lines.append(f"| mtk | {r['plan']} | {r['estimated_cycles']:,} ({r['time_ms']:.1f}) | "
                     f"{r['cycles_vs_plumerai']:.2f}, {r['cycles_vs_target']:.2f} | {kib(r['ram_bytes'])} "
                     f"(arena {r['arena_bytes']:,} B) | {r['ram_vs_plumerai']:.2f}, {r['ram_vs_target']:.2f} | "
                     f"{r['flash_bytes']:,} B | {exact} |")
    lines.append(f"| Plumerai (published) | | {PLUMERAI['cycles'] / 1e6:.1f} M (77) | | {kib(PLUMERAI['ram_bytes'])} | "
                 "| | |")
    lines.append(f"| target | | <= {TARGET['cycles'] / 1e6:.1f} M | | <= {kib(TARGET['ram_bytes'])} | | | |")
    largest = max(r["flash_bytes"] for r in runs)
    if largest > board_flash:
        lines += ["", f"The model takes up to {largest:,} B of flash, more than the board's {board_flash:,} B: the "
                      "estimate reads every constant at the board's internal-flash timing, as if they fitted "
                      "(the Discovery kit would keep them in its QSPI flash, slower)."]
    for r in runs:
        lines += ["", f"Where the cycles go, {r['plan']} (profiling build, per-layer estimated cycles):", "",
                  "| kind | layers | MACs (share) | est. cycles (share) | cycles/MAC | cycles/output value |",
                  "|---|---|---|---|---|---|"]
        for k in r["kinds"]:
            per_mac = f"{k['cycles_per_mac']:.2f}" if k["cycles_per_mac"] is not None else ""
            lines.append(f"| {k['kind']} | {k['layers']} | {k['macs']:,} ({k['mac_share']:.1%}) | "
                         f"{k['estimated_cycles']:,} ({k['cycle_share']:.1%}) | {per_mac} | "
                         f"{k['cycles_per_output']:.1f} |")
    return "\n".join(lines)


# ---- running it ---------------------------------------------------------------------------------

def mtk(*args: str) -> str:
    return subprocess.run([sys.executable, "-m", "mtk", *args], check=True, stdout=subprocess.PIPE, text=True).stdout


def holding_the_model(name: str) -> "Board":
    """Board `name` with the flash of the QEMU machine that emulates its core: the model's 1.8 MB of constants
    exceed the STM32F746's 1 MB of internal flash (the Discovery kit's 16 MB QSPI flash would hold them), and
    `--emulate` refuses a firmware its board cannot hold; here it is estimated as if it fitted, every constant read
    at internal-flash timing (the table says so)."""
    from dataclasses import replace

    from mtk.boards import get_board
    from mtk.cycles.emulate import qemu_board_for

    board = get_board(name)
    return replace(board, flash_bytes=max(board.flash_bytes, get_board(qemu_board_for(board.cpu.name)).flash_bytes))


def emulated(model: Path, board: "Board", max_ram: int | None, profile: bool, samples: int = 1) -> "RunResult":
    from mtk.cycles.emulate import emulated_runner
    from mtk.pipeline import run_model
    from mtk.runoptions import RunOptions

    machine, runner_options = emulated_runner(board)
    return run_model(model, RunOptions(board=machine, emulate=board, runs=1, profile=profile, max_ram=max_ram,
                                       random_samples=samples, runner_options=runner_options))


def bench(model: Path, board: "Board", max_ram: int | None) -> dict:
    """What `mtk bench --emulate --profile -n 1 --json` gives for `model` on `board`."""
    from mtk.commands._layers import run_profiled

    return run_profiled(lambda profile: emulated(model, board, max_ram, profile)).to_json()


def validate(model: Path, board: "Board", max_ram: int | None) -> dict:
    """What `mtk validate --emulate --json` compares: `model` built as bench builds it, 3 random samples, each
    output beside tflite-micro's."""
    from mtk.commands.validate import compare
    from mtk.reference import run_reference_sequence

    result = emulated(model, board, max_ram, profile=False, samples=3)
    report = compare(result, run_reference_sequence(result.int8_model, result.inputs))
    return {"bit_exact": all(r["mismatches"] == 0 for r in report),
            "mismatches": sum(r["mismatches"] for r in report), "samples": report}


def without_softmax(model: Path, out: Path) -> None:
    """`model` with its last operator, a SOFTMAX, left out: its input the model's output."""
    import flatbuffers
    import numpy as np
    from ai_edge_litert import schema_py_generated as schema

    buf = model.read_bytes()
    tree = schema.ModelT.InitFromObj(schema.Model.GetRootAsModel(buf, 0))
    graph = tree.subgraphs[0]
    last = graph.operators[-1]
    code = tree.operatorCodes[last.opcodeIndex]
    if max(code.builtinCode, code.deprecatedBuiltinCode) != schema.BuiltinOperator.SOFTMAX:
        raise AnchorError(f"{model}: its last layer is no SOFTMAX", 2)
    for b in tree.buffers:   # constants stored after the flatbuffer (offset, size) move into it
        if b.offset:
            b.data, b.offset, b.size = np.frombuffer(buf[b.offset:b.offset + b.size], np.uint8), 0, 0
    graph.operators, graph.outputs = graph.operators[:-1], [int(last.inputs[0])]
    tree.signatureDefs = None
    builder = flatbuffers.Builder(len(buf))
    builder.Finish(tree.Pack(builder), file_identifier=b"TFL3")
    out.write_bytes(builder.Output())


class AnchorError(Exception):
    """One line on stderr, and the exit status."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


def build_model(work: Path, tf_python: str, seed: int) -> Path:
    """The int8 model in `work`, built with TensorFlow by `tf_python` and quantized by mtk."""
    try:
        made = subprocess.run([tf_python, __file__, "--float-only", str(work), "--seed", str(seed)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                              env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"})
    except OSError as e:
        raise AnchorError(f"cannot run {tf_python}: {e.strerror}", 2) from None
    if made.returncode:
        sys.stderr.write(made.stderr)
        raise AnchorError(f"building the float model with {tf_python} failed (TensorFlow installed?)", 1)
    model = work / "mobilenetv2_int8.tflite"
    mtk("quantize", "-q", str(work / "mobilenetv2_float.tflite"), "--calib", str(work / "calib.npy"),
        "-o", str(model), "--force")
    return model


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tf-python", type=Path, help="a Python interpreter with TensorFlow (default: this one)")
    parser.add_argument("--model", type=Path, help="an int8 model this script made before (no TensorFlow needed)")
    parser.add_argument("--board", default="stm32f746g_disco",
                        help="physical board to estimate, emulated in QEMU (default stm32f746g_disco)")
    parser.add_argument("--work", type=Path, help="keep the models here (default: a temporary folder)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the weights and calibration data")
    parser.add_argument("--max-ram", type=int, metavar="BYTES",
                        help="the capped run's arena (default: what leaves the default run's stack and data "
                             "within the RAM target)")
    parser.add_argument("--json", type=Path, help="write every figure to this file")
    parser.add_argument("--float-only", type=Path, metavar="DIR", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.float_only:
        make_float_model(args.float_only / "mobilenetv2_float.tflite", args.float_only / "calib.npy", args.seed)
        return 0
    from mtk.boards import get_board
    from mtk.errors import MtkError
    from mtk.fsutil import check_output_file_first, write_output_text
    from mtk.reader import read_model

    try:
        if args.json:
            check_output_file_first(args.json, [p for p in (args.model, args.work) if p])
        board_flash = get_board(args.board).flash_bytes
        board = holding_the_model(args.board)
        with tempfile.TemporaryDirectory() as tmp:
            work = args.work or Path(tmp)
            work.mkdir(parents=True, exist_ok=True)
            model = args.model or build_model(work, str(args.tf_python or sys.executable), args.seed)
            graph = read_model(model)
            checked = work / "mobilenetv2_int8_without_softmax.tflite"
            without_softmax(model, checked)
            rows = [(None, bench(model, board, None))]
            cap = args.max_ram or capped_arena(rows[0][1])
            if cap:
                rows.append((cap, bench(model, board, cap)))
            verdicts = [exactness(validate(checked, board, max_ram)) for max_ram, _ in rows]
    except (AnchorError, MtkError) as err:
        print(f"mobilenetv2_anchor.py: {str(err).splitlines()[0]}", file=sys.stderr)
        return getattr(err, "status", 2)
    except subprocess.CalledProcessError as err:
        print(f"mobilenetv2_anchor.py: {' '.join(err.cmd[2:4])} failed (exit {err.returncode})", file=sys.stderr)
        return 1
    runs = [{**figures(row, max_ram), **verdict, "kinds": by_kind(graph, row)}
            for (max_ram, row), verdict in zip(rows, verdicts)]
    print(table(runs, board_flash))
    if args.json:
        figures_json = {"model": str(model), "board_flash_bytes": board_flash, "plumerai": PLUMERAI, "target": TARGET,
                        "runs": runs}
        write_output_text(args.json, json.dumps(figures_json, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
