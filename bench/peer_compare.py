"""mtk against TFLM + CMSIS-NN on the MLPerf Tiny models, in QEMU with exact instruction counts.

    python bench/peer_compare.py                         # the three shared models on every core the peer has
    python bench/peer_compare.py --board mps2/an386 --no-layers --json out.json
    python bench/peer_compare.py --tuning mtk-tuning.json   # per-layer variants from `mtk tune`

Per model and board: instructions per inference, arena bytes and code bytes next to the peer's
figures in ../shared/peer/tflm_qemu.json (TFLM + CMSIS-NN, -O2), as ratios; the memory plan's lower bound; whether the outputs match tflite-micro bit for bit; and
the host compile time. The
target figures come from `mtk bench --json`, with per-op counters (`--profile`: a few instructions per
op more) unless --no-layers; the per-op figures are printed beside the peer's per-op instructions (TFLM's profiler around each op's
Eval, graph order) where the peer file has them.

Code bytes = the firmware ELF's flash (.text + .rodata + .data) minus the model's constants:
the same quantity as the peer's code_flash_excl_model (both include the firmware harness and
libc). The generated model code alone (metadata code_bytes, arm-none-eabi-gcc -O2 .text of the
kernels and run function) is printed beside it. Flash = the ELF's flash, next to the peer's
flash_total (model included), as a ratio against the goal of less than the peer's: int16 or paired
weights chosen by `mtk tune` (--tuning) double their layers' share.
Each board is compared with the peer's rows for its CPU (m3 mps2/an385, m4 mps2/an386, m7 mps2/an500, m33 mps2/an505,
m55 mps3/corstone300/an547, read from the peer file); a board whose CPU the file has no rows for is
compared with the M4 rows, and the table says so.

Cycles: mtk's estimated cycles (the cycle model, mtk.cycles) are printed beside the instructions. The peer file has
TFLM's instructions only; TFLM's estimated cycles under the same cycle model, measured by hand on the QEMU boards
(bench/tflm_cycles.json says how; the TFLM build is not part of this repository), are read from --tflm-cycles
(default bench/tflm_cycles.json): the table shows them and mtk's ratio to them (boards the file does not have show -).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from mtk.boards import Board, get_board
from mtk.compiler import compile_model
from mtk.samples import random_samples
from mtk.compiled import CompiledModel
from mtk.errors import MtkError
from mtk.fsutil import check_output_file_first, write_output_text
from mtk.reference import run_reference_batch
from mtk.tuning import load_tuning

SHARED = Path(__file__).resolve().parents[2] / "shared"
MODELS = {"kws": "kws_dscnn_int8", "ic": "ic_resnet8_int8", "ad": "ad_fc_int8"}
PEER_BOARDS = {"m3": "mps2/an385", "m4": "mps2/an386", "m7": "mps2/an500", "m33": "mps2/an505",
               "m55": "mps3/corstone300/an547"}
FALLBACK_PEER_CPU = "m4"
INSNS_TARGET = 0.70                                             # × the peer's instructions
ARENA_TARGET = {"kws_dscnn_int8": 0.75, "ad_fc_int8": 0.75, "ic_resnet8_int8": 1.0}
CODE_TARGET = 0.30
FLASH_TARGET = 1.0
TFLM_CYCLES = Path(__file__).resolve().parent / "tflm_cycles.json"


def peer_rows(path: Path) -> dict[tuple[str, str], dict]:
    rows = json.loads(path.read_text())["rows"]
    return {(r["cpu"], r["model"]): r for r in rows if r["kernels"] == "cmsis" and r["opt"] == "O2"}


def tflm_cycles(path: Path) -> dict[tuple[str, str], int]:
    """(board, model) -> TFLM's estimated cycles per inference, from a file shaped as bench/tflm_cycles.json."""
    try:
        rows = json.loads(path.read_text())["rows"]
        return {(r["board"], r["model"]): int(r["estimated_cycles"]) for r in rows}
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError) as err:
        raise SystemExit(f"{path}: not TFLM cycles as bench/tflm_cycles.json holds them ({type(err).__name__}: "
                         f"{err})") from None


def compile_seconds(model: Path, board: Board, out: Path, tuning: Path | None) -> tuple[float, CompiledModel]:
    start = time.perf_counter()
    """Compile `model` for `board`'s CPU (the time it takes, and the result) with `tuning`'s variants for `board`."""
    compiled = compile_model(model, out, cpu=board.cpu, force=True,
                             tuning=load_tuning(tuning, board.name) if tuning else None)
    return time.perf_counter() - start, compiled


def mtk_bench(model: Path, board: str, layers: bool, tuning: Path | None) -> dict:
    """One row of `mtk bench --json` (it compiles, builds and runs the model on `board`)."""
    command = ["mtk", "bench", str(model), "--board", board, "--json", "-q"] + (["--profile"] if layers else []) \
        + (["--tuning", str(tuning)] if tuning else [])
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return json.loads(done.stdout)[0]


def output_mismatches(model: Path, compiled: CompiledModel, outputs: list[list[int]]) -> int:
    """Elements of the outputs `mtk bench` read back that differ from tflite-micro on the same inputs
    (its deterministic random samples, made again here)."""
    samples = random_samples(compiled, len(outputs))
    expected = run_reference_batch(model, samples)
    return sum(int(np.count_nonzero(np.asarray(want[0]).reshape(-1) != np.asarray(got)))
               for want, got in zip(expected, outputs))


def measure(model: Path, board_name: str, layers: bool, work: Path, tuning: Path | None) -> dict:
    board = get_board(board_name)
    seconds, compiled = compile_seconds(model, board, work / "compiled", tuning)
    row = mtk_bench(model, board.name, layers, tuning)
    return {
        "model": model.stem, "board": board.name, "cpu": board.cpu.name,
        "instructions": row["per_inference"]["median"],
        "estimated_cycles": (row.get("estimated_cycles") or {}).get("median"),   # the cycle model's (mtk.cycles)
        "arena_bytes": row["arena_bytes"],
        "arena_lower_bound_bytes": compiled.memory.lower_bound_bytes,
        "code_bytes": row["code_bytes"],
        "model_code_bytes": compiled.memory.code_bytes,
        "constant_bytes": row["constant_bytes"],
        "flash_bytes": row["flash_bytes"],
        "compile_s": round(seconds, 2),
        "output_mismatches": output_mismatches(model, compiled, row["outputs"]),
        "layers": None if row.get("layers") is None else [
            {"index": t["index"], "type": t["type"], "instructions": t["units"]} for t in row["layers"]],
    }


def peer_cpu_of(cpu: str, peers: dict[tuple[str, str], dict]) -> str:
    """The peer file's name of `cpu` ("cortex-m55" -> "m55") if it has rows for it, else the M4's."""
    name = cpu.removeprefix("cortex-")
    return name if any(c == name for c, _ in peers) else FALLBACK_PEER_CPU


def with_peer(row: dict, peers: dict[tuple[str, str], dict],
              cycles: dict[tuple[str, str], int] | None = None) -> dict:
    """`row` with the peer's figures and the ratios; `cycles`: TFLM's estimated cycles (tflm_cycles)."""
    peer_cpu = peer_cpu_of(row["cpu"], peers)
    peer = peers[(peer_cpu, row["model"])]
    peer_cycles = (cycles or {}).get((row["board"], row["model"]))
    return {**row, "peer_cpu": peer_cpu,
            "peer": {"instructions": peer["insns_per_inference"], "estimated_cycles": peer_cycles,
                     "arena_bytes": peer["arena_used_bytes"],
                     "code_bytes": peer["code_flash_excl_model"], "flash_bytes": peer["flash_total"],
                     "layers": [{"type": t, "instructions": n} for t, n in
                                zip(peer.get("op_types", []), peer.get("op_insns", []))] or None},
            "ratios": {"instructions": row["instructions"] / peer["insns_per_inference"],
                       "estimated_cycles": row["estimated_cycles"] / peer_cycles
                       if peer_cycles and row["estimated_cycles"] else None,
                       "arena": row["arena_bytes"] / peer["arena_used_bytes"],
                       "code": row["code_bytes"] / peer["code_flash_excl_model"],
                       "flash": row["flash_bytes"] / peer["flash_total"]},
            "targets": {"instructions": INSNS_TARGET, "arena": ARENA_TARGET[row["model"]], "code": CODE_TARGET,
                        "flash": FLASH_TARGET}}


def _mark(ratio: float, target: float) -> str:
    return f"{ratio:5.2f}{'' if ratio <= target else '!'}"


def _count(value: int | None) -> str:
    return "-" if value is None else f"{value:,}"


def _ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:5.2f}"


def print_table(rows: list[dict]) -> None:
    print(f"{'model':16} {'board':22} {'peer cpu':8} {'instructions':>12} {'peer':>10} {'×':>6} │ "
          f"{'est. cycles':>12} {'peer':>10} {'×':>6} │ "
          f"{'arena':>6} {'bound':>6} "
          f"{'peer':>6} {'×':>6} │ {'code':>6} {'(model)':>7} {'peer':>6} {'×':>6} │ {'flash':>7} {'peer':>7} "
          f"{'×':>6} │ {'compile':>7} exact")
    for r in rows:
        p, q, t = r["peer"], r["ratios"], r["targets"]
        print(f"{r['model']:16} {r['board']:22} {r['peer_cpu']:8} {r['instructions']:12,} {p['instructions']:10,} "
              f"{_mark(q['instructions'], t['instructions']):>6} │ {_count(r['estimated_cycles']):>12} "
              f"{_count(p['estimated_cycles']):>10} {_ratio(q['estimated_cycles']):>6} │ "
              f"{r['arena_bytes']:6} {r['arena_lower_bound_bytes']:6} "
              f"{p['arena_bytes']:6} {_mark(q['arena'], t['arena']):>6} │ {r['code_bytes']:6} "
              f"{r['model_code_bytes'] or 0:7} {p['code_bytes']:6} {_mark(q['code'], t['code']):>6} │ "
              f"{r['flash_bytes']:7} {p['flash_bytes']:7} {_mark(q['flash'], t['flash']):>6} │ "
              f"{r['compile_s']:6.1f}s {'yes' if r['output_mismatches'] == 0 else 'NO'}")
    print("× = mtk / TFLM+CMSIS-NN (-O2) on the peer cpu's board (the M4's when the peer file has no rows for "
          "the board's cpu); '!' = above the target "
          f"(instructions {INSNS_TARGET}, arena 0.75 kws/ad 1.0 ic, code {CODE_TARGET}, flash {FLASH_TARGET}); "
          "code = ELF flash − constants (as the peer's), (model) = generated kernels alone; est. cycles = the cycle "
          "model's (mtk.cycles) on the board, the peer's from --tflm-cycles (TFLM + CMSIS-NN under the "
          "same model, measured by hand), '-' where it has none")


def print_layers(row: dict) -> None:
    """mtk's instructions per op beside the peer's, graph order (the peer's op i is op i: both run the
    model's operators one for one)."""
    peer = row["peer"]["layers"] or []
    total = sum(layer["instructions"] for layer in row["layers"]) or 1
    print(f"\n{row['model']} on {row['board']}: instructions per op, mtk and TFLM+CMSIS-NN "
          f"({row['peer_cpu']}{'' if peer else ': no per-op figures in the peer file'})")
    print(f"  {'op':>3} {'type':20} {'mtk':>10} {'share':>6} {'peer':>10} {'×':>6}")
    for layer in sorted(row["layers"], key=lambda layer: layer["index"]):
        theirs = peer[layer["index"]] if layer["index"] < len(peer) else None
        line = f"  {layer['index']:3} {layer['type']:20} {layer['instructions']:10,} " \
               f"{100 * layer['instructions'] / total:5.1f}%"
        if theirs is not None and theirs["type"] == layer["type"] and theirs["instructions"]:
            line += f" {theirs['instructions']:10,} {layer['instructions'] / theirs['instructions']:6.2f}"
        print(line)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--board", action="append",
                        help="board(s) to run on (default: the board of every cpu the peer file has rows for)")
    parser.add_argument("--model", action="append", choices=sorted(MODELS), help="model(s) (default all three)")
    parser.add_argument("--layers", action=argparse.BooleanOptionalAction, default=True,
                        help="per-op instructions beside the peer's (a profiling build; default on)")
    parser.add_argument("--json", type=Path, help="write the rows to this file")
    parser.add_argument("--peer", type=Path, default=SHARED / "peer" / "tflm_qemu.json")
    parser.add_argument("--models-dir", type=Path, default=SHARED / "models")
    parser.add_argument("--tuning", type=Path, help="tuning file from `mtk tune` (default: untuned)")
    parser.add_argument("--tflm-cycles", type=Path, metavar="FILE", default=TFLM_CYCLES,
                        help="TFLM's estimated cycles per board and model (default: the hand-measured %(default)s)")
    args = parser.parse_args()

    if args.json:
        try:
            inputs = [args.peer, args.models_dir, args.tuning, args.tflm_cycles]
            check_output_file_first(args.json, [p for p in inputs if p])
        except MtkError as err:
            parser.error(str(err))
    peers = peer_rows(args.peer)
    try:
        cycles = tflm_cycles(args.tflm_cycles) if args.tflm_cycles else None
    except SystemExit as err:   # not such a file: bad usage (2)
        parser.error(str(err))
    rows = []
    for board in args.board or [PEER_BOARDS[cpu] for cpu in PEER_BOARDS if any(c == cpu for c, _ in peers)]:
        for key in args.model or list(MODELS):
            with tempfile.TemporaryDirectory(prefix="mtk-peer-") as tmp:
                rows.append(with_peer(measure(args.models_dir / f"{MODELS[key]}.tflite", board, args.layers,
                                              Path(tmp), args.tuning), peers, cycles))
    print_table(rows)
    if args.layers:
        for row in rows:
            print_layers(row)
    if args.json:
        write_output_text(args.json, json.dumps(rows, indent=1) + "\n")
    return 0 if all(r["output_mismatches"] == 0 for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
