"""mtk's firmware RAM against tflite-micro's, the same thing on both sides: .data + .bss + the main stack.

    python bench/ram_vs_tflm.py                                  # the shared models, mps2/an386
    python bench/ram_vs_tflm.py --board mps3/corstone300/an547 /tmp/vww_96_int8.tflite --json out.json

TFLM's figure is `ram_total` of ../shared/peer/tflm_qemu.json (.data + .bss + stack of its bare-metal
QEMU firmware, CMSIS-NN, -O2, on the board's core; its arena, model inputs and outputs among them, lies
in .bss). mtk's is the same sum over its bare-metal firmware ELF (elfsize.py: the arena, the model's input
and output among its buffers as in TFLM's, the firmware core's data and the main stack sized for the model). A model the peer file has no row for
(any other .tflite given) gets TFLM's arena from its Python interpreter (an upper figure: 64-bit host
structs) plus the median of the core's peer rows' RAM besides the arena: marked "est.".

Then the arena that would bring mtk's RAM to --fraction (default 0.5) of TFLM's, compiled with that
`--max-ram`: the tiled firmware's RAM, its ratio, the compiler's estimate of the extra instructions
(target.Costs) and the flash the tiled kernels add; or, where the tiling cannot get there, the lowest
arena it reaches. The estimate covers the tiling only: layers that took a leaner variant to get there
(a Winograd F(4x4) convolution's F(2x2), an F(2x2) one's GEMM, a GEMM in smaller chunks: OpDef.leaner) are
counted in the "leaner" column, their cost is not in it. The last two columns are measured: one inference of
both firmwares in QEMU, the extra instructions and the cycle model's extra estimated cycles. Exit status 1 if
any model stays above the fraction.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from arena_vs_tflm import tflm_arena  # noqa: E402
from mtk.boards import get_board  # noqa: E402
from mtk.compiled import CompiledModel  # noqa: E402
from mtk.elfsize import elf_sizes  # noqa: E402
from mtk.errors import MtkError  # noqa: E402
from mtk.fsutil import check_output_file_first, write_output_text  # noqa: E402
from mtk.pipeline import build_firmware, run_model  # noqa: E402
from mtk.reader import read_model  # noqa: E402
from mtk.runoptions import RunOptions  # noqa: E402

SHARED = ROOT.parent / "shared"
CORES = {"cortex-m4": "m4", "cortex-m7": "m7", "cortex-m33": "m33", "cortex-m55": "m55", "cortex-m3": "m3"}


def peer_rows(cpu: str) -> dict[str, dict]:
    """TFLM's rows with CMSIS-NN at -O2 on `cpu`, by model."""
    rows = json.loads((SHARED / "peer" / "tflm_qemu.json").read_text())["rows"]
    return {r["model"]: r for r in rows if r["cpu"] == CORES.get(cpu) and r["kernels"] == "cmsis" and r["opt"] == "O2"}


def tflm_ram(model: Path, peers: dict[str, dict]) -> tuple[int, int, bool]:
    """TFLM's (arena, RAM, estimated) for `model`."""
    if model.stem in peers:
        return peers[model.stem]["arena_used_bytes"], peers[model.stem]["ram_total"], False
    besides_arena = statistics.median(r["ram_total"] - r["arena_used_bytes"] for r in peers.values())
    arena = tflm_arena(model)[0]
    return arena, arena + int(besides_arena), True


def firmware(model: Path, board: str, work: Path, max_ram: int | None = None) -> tuple[CompiledModel, int, int]:
    """(compiled model, firmware RAM, firmware flash) of `model` built bare metal for `board`."""
    compiled, elf = build_firmware(read_model(model), RunOptions(board=get_board(board), max_ram=max_ram), work)
    sizes = elf_sizes(elf)
    return compiled, sizes.ram_bytes, sizes.flash_bytes


def measured(model: Path, board: str, max_ram: int | None = None) -> tuple[int, int]:
    """(instructions, estimated cycles) of one inference of `model`'s firmware in QEMU (the build cache's)."""
    result = run_model(model, RunOptions(board=get_board(board), runs=1, max_ram=max_ram))
    return result.per_inference.median, result.estimate.per_inference.median


def compare(model: Path, board: str, fraction: float, peers: dict[str, dict], work: Path) -> dict:
    arena, ram, estimated = tflm_ram(model, peers)
    untiled, mtk_ram, flash = firmware(model, board, work / "untiled")
    row = {"model": model.stem, "board": board, "mtk_arena_bytes": untiled.arena_bytes, "mtk_ram_bytes": mtk_ram,
           "mtk_stack_bound_bytes": untiled.memory.stack_bytes, "tflm_arena_bytes": arena, "tflm_ram_bytes": ram,
           "tflm_estimated": estimated, "ratio": mtk_ram / ram}
    besides_arena = mtk_ram - untiled.arena_bytes
    max_ram = int(fraction * ram) - besides_arena
    if row["ratio"] <= fraction:
        return row
    if max_ram <= 0:
        return {**row, "max_ram": max_ram, "refused": f"the RAM besides the arena ({besides_arena:,} B) is "
                                                      f"above {fraction:g} x TFLM's already"}
    try:
        tiled, tiled_ram, tiled_flash = firmware(model, board, work / "tiled", max_ram)
    except MtkError as err:
        return {**row, "max_ram": max_ram, "refused": err.message.split(": ", 1)[-1]}
    tiling = tiled.memory.tiling
    leaner = sum(a.variant != b.variant for a, b in zip(untiled.ops, tiled.ops))
    (insns, cycles), (tiled_insns, tiled_cycles) = measured(model, board), measured(model, board, max_ram)
    return {**row, "max_ram": max_ram, "tiled_arena_bytes": tiled.arena_bytes, "tiled_ram_bytes": tiled_ram,
            "tiled_ratio": tiled_ram / ram, "tiled_flash_added_bytes": tiled_flash - flash,
            "extra_instructions_percent_estimate": tiling.extra_instructions_percent if tiling else 0.0,
            "leaner_variant_layers": leaner, "extra_instructions_percent": 100 * (tiled_insns / insns - 1),
            "extra_cycles_percent": 100 * (tiled_cycles / cycles - 1)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", type=Path, help="more .tflite models (besides the shared ones)")
    parser.add_argument("--board", default="mps2/an386")
    parser.add_argument("--fraction", type=float, default=0.5, help="the RAM target, a fraction of TFLM's")
    parser.add_argument("--json", type=Path, help="write the rows to this file")
    args = parser.parse_args()
    peers = peer_rows(get_board(args.board).cpu.name)
    models = [SHARED / "models" / f"{name}.tflite" for name in sorted(peers)] + args.models
    if args.json:
        try:
            check_output_file_first(args.json, models)
        except MtkError as err:
            parser.error(str(err))
    rows = []
    print(f"{'model':26} {'mtk arena':>9} {'mtk RAM':>8} {'TFLM arena':>10} {'TFLM RAM':>9} {'×':>5} │ "
          f"{'--max-ram':>9} {'tiled RAM':>9} {'×':>5} {'est. +insns':>11} {'flash +B':>8} {'leaner':>6} "
          f"{'+insns':>7} {'+cycles':>7}")
    with tempfile.TemporaryDirectory(prefix="mtk-ram-") as tmp:
        for model in models:
            r = compare(model, args.board, args.fraction, peers, Path(tmp) / model.stem)
            rows.append(r)
            tflm = f"{r['tflm_ram_bytes']:,}{'*' if r['tflm_estimated'] else ''}"
            head = (f"{r['model']:26} {r['mtk_arena_bytes']:9,} {r['mtk_ram_bytes']:8,} {r['tflm_arena_bytes']:10,} "
                    f"{tflm:>9} {r['ratio']:5.2f} │ ")
            if "tiled_ram_bytes" in r:
                tail = (f"{r['max_ram']:9,} {r['tiled_ram_bytes']:9,} {r['tiled_ratio']:5.2f} "
                        f"{r['extra_instructions_percent_estimate']:10.2f}% {r['tiled_flash_added_bytes']:8,} "
                        f"{r['leaner_variant_layers']:6} {r['extra_instructions_percent']:6.2f}% "
                        f"{r['extra_cycles_percent']:6.2f}%")
            else:
                tail = f"{r['max_ram']:9,} {r['refused']}" if "refused" in r else "untiled"
            print(head + tail, flush=True)
    print("* TFLM's arena from its host interpreter + the median RAM besides the arena of the core's peer rows")
    if args.json:
        write_output_text(args.json, json.dumps(rows, indent=1) + "\n")
    return 0 if all(min(r["ratio"], r.get("tiled_ratio", 1e9)) <= args.fraction for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
