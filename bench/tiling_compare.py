"""Tiled execution against the untiled plan, in QEMU with exact instruction counts.

    python bench/tiling_compare.py                       # MobileNetV1-0.25 96x96 and IC on mps2/an386
    python bench/tiling_compare.py --board mps3/corstone300/an547 --json out.json

Per model: the untiled arena and its lower bound, the arena `--max-ram` (a fraction of the untiled
arena: 0.5 for the MobileNet, as the issue asks of its lower bound, 0.8 for IC) gives, each build's
instructions per inference (`mtk bench --json`) with the ratio the compiler's estimate (target.Costs)
expected ("est."), and whether each build's outputs match tflite-micro bit for bit. The MobileNet is
the MLPerf Tiny visual wake words shape built with random weights (tests/modelgen.py mobilenet_v1);
its softmax saturates on random inputs, so the comparison also runs its first six blocks alone (the
tiled layers and past them), whose features are the output.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import modelgen  # noqa: E402
from mtk.compiler import compile_model  # noqa: E402
from mtk.samples import random_samples  # noqa: E402
from mtk.reference import run_reference_batch  # noqa: E402

SHARED = ROOT.parent / "shared" / "models"


def bench(model: Path, board: str, max_ram: int | None) -> dict:
    """One row of `mtk bench --json` (compile, build, run on `board`)."""
    command = ["mtk", "bench", str(model), "--board", board, "--json", "-q"] + \
        (["--max-ram", str(max_ram)] if max_ram is not None else [])
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return json.loads(done.stdout)[0]


def mismatches(model: Path, row: dict, board: str, max_ram: int | None, work: Path) -> int:
    """Output elements of the run that differ from tflite-micro on the same (deterministic random) inputs."""
    compiled = compile_model(model, work / "compiled", board=board, force=True, max_ram=max_ram)
    samples = random_samples(compiled, len(row["outputs"]))
    expected = run_reference_batch(model, samples)
    return sum(int(np.count_nonzero(np.asarray(want[0]).reshape(-1) != np.asarray(got)))
               for want, got in zip(expected, row["outputs"]))


def compare(name: str, model: Path, board: str, fraction: float, of_bound: bool, work: Path) -> dict:
    untiled = compile_model(model, work / "untiled", board=board, force=True)
    base = untiled.memory.lower_bound_bytes if of_bound else untiled.arena_bytes
    max_ram = int(fraction * base)
    rows = {key: bench(model, board, ram) for key, ram in (("untiled", None), ("tiled", max_ram))}
    tiled = compile_model(model, work / "tiled", board=board, force=True, max_ram=max_ram)
    insns = {key: row["per_inference"]["median"] for key, row in rows.items()}
    return {"model": name, "board": board, "untiled_arena_bytes": untiled.arena_bytes,
            "untiled_lower_bound_bytes": untiled.memory.lower_bound_bytes, "max_ram": max_ram,
            "tiled_arena_bytes": tiled.arena_bytes, "instructions": insns,
            "instructions_ratio": insns["tiled"] / insns["untiled"], "tiling": tiled.memory.tiling and tiled.memory.tiling.to_json(),
            "mismatches": {key: mismatches(model, row, board, ram, work / key)
                           for (key, row), ram in zip(rows.items(), (None, max_ram))}}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--board", default="mps2/an386")
    parser.add_argument("--json", type=Path, help="write the rows to this file")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="mtk-tiling-") as tmp:
        work = Path(tmp)
        models = {"mobilenet_v1_0.25_96": modelgen.mobilenet_v1(modelgen.Draw(np.random.default_rng(0))),
                  "mobilenet_v1_0.25_96_blocks6": modelgen.mobilenet_v1(modelgen.Draw(np.random.default_rng(0)),
                                                                        blocks=6)}
        for name, data in models.items():
            (work / f"{name}.tflite").write_bytes(data)
            rows.append(compare(name, work / f"{name}.tflite", args.board, 0.5, True, work / name))
        if (SHARED / "ic_resnet8_int8.tflite").is_file():
            rows.append(compare("ic_resnet8_int8", SHARED / "ic_resnet8_int8.tflite", args.board, 0.8, False,
                                work / "ic"))
    print(f"{'model':30} {'untiled':>8} {'bound':>8} {'tiled':>8} {'×':>5} │ {'insns untiled':>13} {'tiled':>11} "
          f"{'×':>6} {'est.':>6} │ exact")
    for r in rows:
        exact = "yes" if not any(r["mismatches"].values()) else f"NO {r['mismatches']}"
        estimate = 1 + r["tiling"]["extra_instructions_percent"] / 100 if r["tiling"] else 1
        print(f"{r['model']:30} {r['untiled_arena_bytes']:8,} {r['untiled_lower_bound_bytes']:8,} "
              f"{r['tiled_arena_bytes']:8,} {r['tiled_arena_bytes'] / r['untiled_arena_bytes']:5.2f} │ "
              f"{r['instructions']['untiled']:13,} {r['instructions']['tiled']:11,} {r['instructions_ratio']:6.3f} "
              f"{estimate:6.3f} │ {exact}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")
    return 0 if all(not any(r["mismatches"].values()) for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
