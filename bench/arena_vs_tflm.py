"""mtk's arena against tflite-micro's on any models (mtk's arena against TFLM's
arena_used_bytes()), without a target: TFLM's figures come from its Python interpreter on the host.

    python bench/arena_vs_tflm.py models/*.tflite ../shared/models/*.tflite
    python bench/arena_vs_tflm.py --generated           # also the tests' generated models (tests/modelgen.py)
    python bench/arena_vs_tflm.py --fraction 0.5 ../shared/models/*.tflite   # and tiled to half TFLM's total

Per model: mtk's arena (compiled for --cpu, default cortex-m4) and the bytes of the model's inputs
and outputs it holds among its buffers (as TFLM's does); TFLM's arena total (what arena_used_bytes() reports: on this 64-bit host its
structs are larger than on a Cortex-M, so it is an upper figure) and its head (the planned tensors
and scratch, model inputs and outputs among them), as RecordingMicroAllocator prints them. With
`--fraction F`, also the arena `--max-ram` F × TFLM's total gives (codegen/tiling.py), or the
lowest the tiling reaches when it refuses. Exit status 1 if any mtk arena is larger than TFLM's total.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from mtk.compiler import compile_model
from mtk.errors import MtkError

TESTS = Path(__file__).resolve().parents[1] / "tests"
TFLM_ALLOCATIONS = ("from tflite_micro.python.tflite_micro import runtime; "
                    "runtime.Interpreter.from_file({path!r}).print_allocations()")


def tflm_arena(model: Path) -> tuple[int, int]:
    """TFLM's (total, head) arena bytes for `model`, from its allocator's report (printed by C++, so
    read from a child process)."""
    out = subprocess.run([sys.executable, "-c", TFLM_ALLOCATIONS.format(path=str(model))],
                         capture_output=True, text=True, check=True)
    figures = dict(re.findall(r"Arena allocation (total|head) (\d+) bytes", out.stdout + out.stderr))
    return int(figures["total"]), int(figures["head"])


def generated_models() -> dict[str, bytes]:
    """The tests' fixed example models, one per op family and seed."""
    sys.path.insert(0, str(TESTS))
    import modelgen
    return {f"{family}.{seed}": data for seed in (0, 1) for family, data in modelgen.example_models(seed).items()}


def tiled(path: Path, work: Path, cpu: str, max_ram: int) -> str:
    """The arena `--max-ram max_ram` gives, or what the compiler says it reaches at best."""
    try:
        memory = compile_model(path, work / "tiled", cpu=cpu, force=True, max_ram=max_ram).memory
    except MtkError as err:
        return f"  --max-ram {max_ram:,}: {err.message.split(': ', 1)[-1]}"
    return f"  --max-ram {max_ram:,}: {memory.arena_bytes:,} B"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", type=Path, help="int8 .tflite models")
    parser.add_argument("--generated", action="store_true", help="also the tests' generated example models")
    parser.add_argument("--cpu", default="cortex-m4")
    parser.add_argument("--fraction", type=float, help="also compile with --max-ram this fraction of TFLM's total")
    args = parser.parse_args()
    above = 0
    with tempfile.TemporaryDirectory(prefix="mtk-arena-") as tmp:
        models = {p.stem: p.read_bytes() for p in args.models}
        models.update(generated_models() if args.generated else {})
        print(f"{'model':32} {'mtk arena':>10} {'its I/O':>8} {'TFLM total':>11} {'TFLM head':>10} {'×':>6}")
        for name, data in models.items():
            path = Path(tmp) / f"{name}.tflite"
            path.write_bytes(data)
            try:
                memory = compile_model(path, Path(tmp) / name, cpu=args.cpu, force=True).memory
            except MtkError as err:
                print(f"{name:32} not compiled: {err.message}")
                continue
            total, head = tflm_arena(path)
            above += memory.arena_bytes > total
            print(f"{name:32} {memory.arena_bytes:10,} {memory.io_bytes:8,} {total:11,} {head:10,} "
                  f"{memory.arena_bytes / total:6.2f}{'  ABOVE TFLM' if memory.arena_bytes > total else ''}"
                  f"{tiled(path, Path(tmp) / name, args.cpu, int(args.fraction * total)) if args.fraction else ''}",
                  flush=True)
    return 1 if above else 0


if __name__ == "__main__":
    sys.exit(main())
