"""Tiled execution against the untiled plan, in QEMU with exact instruction counts.

    python bench/tiling_compare.py                       # the shared models and MobileNetV1-0.25 96x96, mps2/an386
    python bench/tiling_compare.py --shared-only --board mps3/corstone300/an547 --json out.json

Per model: the untiled arena and its lower bound, the arena `--max-ram` gives (the shared KWS, IC and
AD: half TFLM's arena_used_bytes with CMSIS-NN on the board's core, from ../shared/peer/tflm_qemu.json;
the MobileNet: half its untiled lower bound) and its ratio to TFLM's (or, where the tiling cannot get
there, the lowest arena it reaches, and no run), each build's instructions per
inference and the cycle model's estimated cycles (`mtk bench --json`), with the ratio the compiler's
estimate (target.Costs) expected ("est."), the flash the tiled kernels add, and whether each build's
outputs match tflite-micro bit for bit. The MobileNet is
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
from mtk.errors import MtkError  # noqa: E402
from mtk.samples import random_samples  # noqa: E402
from mtk.reference import run_reference_batch  # noqa: E402

SHARED = ROOT.parent / "shared"
SHARED_MODELS = ("kws_dscnn_int8", "ic_resnet8_int8", "ad_fc_int8")
CORES = {"cortex-m4": "m4", "cortex-m7": "m7", "cortex-m33": "m33", "cortex-m55": "m55", "cortex-m3": "m3"}


def tflm_arenas(cpu: str) -> dict[str, int]:
    """TFLM's arena_used_bytes per shared model with CMSIS-NN at -O2 on `cpu`."""
    rows = json.loads((SHARED / "peer" / "tflm_qemu.json").read_text())["rows"]
    return {r["model"]: r["arena_used_bytes"] for r in rows
            if r["cpu"] == CORES.get(cpu) and r["kernels"] == "cmsis" and r["opt"] == "O2"}


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


def compare(name: str, model: Path, board: str, max_ram: int, work: Path, tflm_arena: int | None) -> dict:
    untiled = compile_model(model, work / "untiled", board=board, force=True)
    try:
        tiled = compile_model(model, work / "tiled", board=board, force=True, max_ram=max_ram)
    except MtkError as err:   # the tiling cannot get there: what it reaches at best instead of a row
        return {"model": name, "board": board, "untiled_arena_bytes": untiled.arena_bytes,
                "untiled_lower_bound_bytes": untiled.memory.lower_bound_bytes, "max_ram": max_ram,
                "tflm_arena_bytes": tflm_arena, "refused": err.message.split(": ", 1)[-1], "mismatches": {}}
    rows = {key: bench(model, board, ram) for key, ram in (("untiled", None), ("tiled", max_ram))}
    insns = {key: row["per_inference"]["median"] for key, row in rows.items()}
    cycles = {key: row["estimated_cycles"]["median"] for key, row in rows.items() if row.get("estimated_cycles")}
    return {"model": name, "board": board, "untiled_arena_bytes": untiled.arena_bytes,
            "untiled_lower_bound_bytes": untiled.memory.lower_bound_bytes, "max_ram": max_ram,
            "tiled_arena_bytes": tiled.arena_bytes, "tflm_arena_bytes": tflm_arena, "instructions": insns,
            "instructions_ratio": insns["tiled"] / insns["untiled"], "estimated_cycles": cycles,
            "estimated_cycles_ratio": cycles["tiled"] / cycles["untiled"] if len(cycles) == 2 else None,
            "flash_bytes": {key: row["flash_bytes"] for key, row in rows.items()},
            "ram_bytes": {key: row["ram_bytes"] for key, row in rows.items()},
            "tiling": tiled.memory.tiling and tiled.memory.tiling.to_json(),
            "mismatches": {key: mismatches(model, row, board, ram, work / key)
                           for (key, row), ram in zip(rows.items(), (None, max_ram))}}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--board", default="mps2/an386")
    parser.add_argument("--shared-only", action="store_true", help="only the shared models (no MobileNet)")
    parser.add_argument("--json", type=Path, help="write the rows to this file")
    args = parser.parse_args()
    from mtk.boards import get_board
    tflm = tflm_arenas(get_board(args.board).cpu.name)
    rows = []
    with tempfile.TemporaryDirectory(prefix="mtk-tiling-") as tmp:
        work = Path(tmp)
        for name in SHARED_MODELS:
            path = SHARED / "models" / f"{name}.tflite"
            if path.is_file() and name in tflm:
                rows.append(compare(name, path, args.board, tflm[name] // 2, work / name, tflm[name]))
        models = {} if args.shared_only else {
            "mobilenet_v1_0.25_96": modelgen.mobilenet_v1(modelgen.Draw(np.random.default_rng(0))),
            "mobilenet_v1_0.25_96_blocks6": modelgen.mobilenet_v1(modelgen.Draw(np.random.default_rng(0)), blocks=6)}
        for name, data in models.items():
            (work / f"{name}.tflite").write_bytes(data)
            bound = compile_model(work / f"{name}.tflite", work / name / "bound", board=args.board,
                                  force=True).memory.lower_bound_bytes
            rows.append(compare(name, work / f"{name}.tflite", args.board, bound // 2, work / name, None))
    print(f"{'model':30} {'untiled':>8} {'tiled':>8} {'×TFLM':>6} │ {'insns ×':>8} {'est.':>6} {'cycles ×':>8} │ "
          f"{'flash +B':>8} {'RAM':>7} │ exact")
    for r in rows:
        if "refused" in r:
            print(f"{r['model']:30} {r['untiled_arena_bytes']:8,} --max-ram {r['max_ram']:,}: {r['refused']}")
            continue
        exact = "yes" if not any(r["mismatches"].values()) else f"NO {r['mismatches']}"
        estimate = 1 + r["tiling"]["extra_instructions_percent"] / 100 if r["tiling"] else 1
        vs_tflm = f"{r['tiled_arena_bytes'] / r['tflm_arena_bytes']:6.2f}" if r["tflm_arena_bytes"] else f"{'':6}"
        cycles = f"{r['estimated_cycles_ratio']:8.4f}" if r["estimated_cycles_ratio"] else f"{'-':>8}"
        print(f"{r['model']:30} {r['untiled_arena_bytes']:8,} {r['tiled_arena_bytes']:8,} {vs_tflm} │ "
              f"{r['instructions_ratio']:8.4f} {estimate:6.3f} {cycles} │ "
              f"{r['flash_bytes']['tiled'] - r['flash_bytes']['untiled']:8,} {r['ram_bytes']['tiled']:7,} │ {exact}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")
    return 0 if all(not any(r["mismatches"].values()) for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
