"""mtk tune: per-layer schedules measured in QEMU, cached in a tuning file the other commands read."""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import TYPE_CHECKING

from .. import ui
from ..argtypes import real
from ..boards import DEFAULT_BOARD, get_board
from ..cliparser import board_name

if TYPE_CHECKING:
    from ..autotune import LayerChoice, TuneResult

NAME = "tune"
DEFAULT_FILE = "mtk-tuning.json"
OUTPUT_ARGS = ("tuning",)   # read, then rewritten
HELP = ("measure each layer's schedules (kernels) in QEMU, for a QEMU board or a physical one (--emulate), and keep "
        "the fastest for its flash in a tuning file (--tuning FILE, here and elsewhere)")
DESCRIPTION = f"""\
For every conv, fully connected, depthwise and average/max pooling layer, measure each schedule the
layer can take (conv, fully connected, 1->N depthwise: micro-kernel block 2x2, 1x4 or 1x8, int8,
biased or int16-expanded weights on DSP cores, paired weights on the Cortex-M3; depthwise with several
input channels and pooling: the kernels their family has for the core, e.g. Helium's or 4 channels a
call): one build per schedule of every layer at a time, each run in QEMU on two different inputs with
per-op counters and the cycle model (estimated cycles of the board's core, the same on every run; a
layer's count is the mean of the two), and keep per layer the schedule with the fewest cycles among
those whose weights and own code (the layer's function and the kernels only layers of that schedule call) take
no more flash than the leanest schedule's, or at most --flash-per-instruction bytes more per cycle saved (equal
counts: the first schedule wins, the default first). Every build's outputs must equal the untuned build's, bit for
bit. Counts, each schedule's own code and extra flash and the choices go to a JSON tuning file under the board
measured, keyed by layer shape and CPU (default ./{DEFAULT_FILE}), merged with what it holds: shapes already there
for that board are not measured again, only chosen again (another --flash-per-instruction measures nothing). Keep
the file with the model, share it, and pass it to `mtk compile/run/bench/validate --board B --tuning FILE`: they
take the schedules measured for B, and refuse a file holding other boards' only.

A physical board (--board nucleo_l4r5zi --emulate) is tuned in QEMU on the machine with its core (Cortex-M4:
mps2/an386; `mtk bench --emulate` runs there too), each layer's schedule chosen by the board's estimated cycles:
the cycle model with its clock and flash/RAM timing (wait states, prefetch and fetch caches), under which a
schedule's code that overflows a small instruction cache costs what it would there. Its schedules are kept under
that board's name, apart from the QEMU board's: `mtk bench --emulate --board nucleo_l4r5zi --tuning FILE` and
a build for the board itself take them; one for mps2/an386 does not.

examples:
  mtk tune model.tflite                                  # mps2/an386 (Cortex-M4F), ./{DEFAULT_FILE}
  mtk tune model.tflite --board mps2/an385 --tuning tuning/m3.json --json
  mtk tune model.tflite --flash-per-instruction inf      # fewest cycles, whatever the flash
  mtk bench model.tflite --tuning {DEFAULT_FILE}
  mtk tune kws.tflite --board nucleo_l4r5zi --emulate     # the STM32L4R5's estimated cycles, in QEMU
  mtk bench kws.tflite --board nucleo_l4r5zi --emulate --tuning {DEFAULT_FILE}

exit status: 0 tuned, 1 a schedule changed the outputs, 2 bad model/usage/tuning file, 3 tool missing,
4 build or target failure
"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", help=".tflite model (int8; float with --calib)")
    p.add_argument("--board", default=DEFAULT_BOARD, type=board_name,
                   help=f"board to tune for: a QEMU board, or a physical one with --emulate (default: {DEFAULT_BOARD})")
    p.add_argument("--emulate", action="store_true",
                   help="tune a physical board: run each build in QEMU on the machine with its core and choose by "
                        "the board's estimated cycles (its clock and flash/RAM timing; see README, cycle model)")
    p.add_argument("--tuning", type=Path, default=Path(DEFAULT_FILE), metavar="FILE",
                   help=f"tuning file to read and update (default: ./{DEFAULT_FILE})")
    p.add_argument("--calib", metavar="DATA", help="calibration data to quantize a float model on the way")
    p.add_argument("--flash-per-instruction", type=real(0, math.inf, "bytes"), default=1.0, metavar="B",
                   help="flash bytes a schedule may add over the leanest schedule's per estimated cycle it saves "
                        "per inference (default: 1.0; 0: no extra flash; inf: fewest cycles only)")
    p.add_argument("--json", action="store_true", help="print the result as JSON on stdout")


def _rows(c: LayerChoice) -> list[list[str]]:
    """One row per variant of the layer: estimated cycles, own code, extra flash, chosen or why not."""
    return [[",".join(map(str, c.ops)) if k == 0 else "", c.key if k == 0 else "", label,
             f"{c.counts[label]:,}" if c.counts.get(label) is not None else "-",
             f"{c.code[label]:,}" if c.code.get(label) is not None else "-", f"{extra:+,}",
             c.passed_over.get(label, "chosen" + (" (cached counts)" if c.cached else ""))]
            for k, (label, extra) in enumerate(c.extra_flash.items())]


def format_result(r: TuneResult) -> str:
    rows = [row for c in r.layers for row in _rows(c)]
    before, after = r.untuned, r.tuned
    board = f"{r.board} (emulated on {r.emulated_on})" if r.emulated_on else r.board
    return "\n".join([
        ui.table(["ops", "layer", "schedule", "est. cycles", "code B", "flash B", "chosen, or why not"], rows), "",
        f"{r.model} on {board}: {before.estimate.per_inference.median:,} -> "
        f"{after.estimate.per_inference.median:,} estimated cycles, {before.per_inference.median:,} -> "
        f"{after.per_inference.median:,} instructions "
        f"({after.per_inference.median / max(before.per_inference.median, 1):.3f}x, profiling builds), flash "
        f"{before.sizes.flash_bytes:,} -> {after.sizes.flash_bytes:,} B, outputs bit-exact with the untuned build",
        f"tuning file {r.cache} ({r.builds_measured} candidate builds measured), flash per cycle saved "
        f"at most {r.flash_per_instruction:g} B"])


def run(args: argparse.Namespace) -> int:
    from ..autotune import tune_model

    result = tune_model(Path(args.model), get_board(args.board), args.tuning, args.calib, args.flash_per_instruction,
                        args.emulate)
    print(json.dumps(result.to_json()) if args.json else format_result(result))
    return 0
