"""mtk project: a Zephyr application for a model and a board, to build with west or `mtk build`."""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from .. import mlperf, ui
from ..argtypes import INT32_MAX, MIN_STACK_BYTES, integer
from ..boards import get_board
from ..budget import DEFAULT_STACK_BYTES
from ..cliparser import board_name
from ..compiled import CompiledModel
from ..errors import MtkError
from ..platforms import ProjectOptions, get_platform
from ._target import add_mlperf_argument, add_weights_argument

NAME = "project"
HELP = "render a Zephyr application for a model and a board (an ordinary app you can edit and west build)"
DESCRIPTION = """\
Compile the model (or take a folder `mtk compile` made) and render a Zephyr application from
zephyr_app/: CMakeLists.txt, Kconfig, prj.conf, boards/<board>.conf and .overlay, the firmware
core with its Zephyr port layer, and the compiled model. The serial protocol (EEMBC/MLPerf Tiny
and mtk's extensions) runs on the board's console UART.

examples:
  mtk project model.tflite --board nucleo_f746zg -o app/
  mtk project compiled/ --board qemu_cortex_m3 -o app/ --profile
  mtk build app/ && mtk flash app/
  mtk project kws.tflite --board nucleo_l4r5zi -o app/ --mlperf-tiny kws01 --energy

Over an application mtk rendered before, it refreshes what it owns (model/, firmware/,
src/model_glue.c, mtk-project.json) and the other files it writes only where they are as it wrote
them: files you edited are kept and named (--force replaces them); your own files and the build
folder stay. Any other non-empty folder is refused unless --force (which replaces its content).
"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", type=Path, help="an int8 .tflite (float with --calib), or a folder made by `mtk compile`")
    p.add_argument("--board", required=True, type=board_name, help="target board: `mtk boards` lists mtk's, `mtk boards --zephyr` those of your Zephyr "
                        "workspace (any Cortex-M board, e.g. nrf5340dk/nrf5340/cpuapp)")
    p.add_argument("-o", "--output", type=Path, required=True, help="application folder to write")
    p.add_argument("--calib", metavar="DATA", help="calibration data to quantize a float model on the way")
    p.add_argument("--profile", action="store_true", help="per-layer counts (CONFIG_MTK_PROFILE)")
    p.add_argument("--stack-bytes", type=integer(MIN_STACK_BYTES, INT32_MAX, "stack bytes"),
                   help=f"main thread stack, at least {MIN_STACK_BYTES} (default: bare metal, the firmware core's "
                        f"and the model's deepest call chain + 25 %%; Zephyr, {DEFAULT_STACK_BYTES})")
    add_weights_argument(p)
    add_mlperf_argument(p)
    p.add_argument("--energy", action="store_true",
                   help="with --mlperf-tiny: MLPerf Tiny energy mode (timestamps as pulses on the board's "
                        "timestamp pin for EEMBC's energy monitor, console at 9600 baud)")
    p.add_argument("--force", action="store_true", help="replace the files of an application you edited, or a non-empty folder mtk did not render")


def run(args: argparse.Namespace) -> int:
    if args.weights_in_ram and args.model.is_dir():
        raise MtkError(f"--weights-in-ram: {args.model} is compiled already; its constants stay where it was "
                       "compiled for", hint="compile it with `mtk compile --weights-in-ram`, or give the .tflite")
    from ..compiler import compile_model
    from ..pipeline import int8_model
    from ..reader import read_model

    board = get_board(args.board)
    if args.energy and args.mlperf_tiny is None:
        raise MtkError("--energy is MLPerf Tiny's energy mode: give --mlperf-tiny too")
    with tempfile.TemporaryDirectory(prefix="mtk-project-") as tmp:
        if args.model.is_dir():
            compiled = CompiledModel.load(args.model)
        else:
            model = int8_model(read_model(args.model), args.calib, Path(tmp))
            compiled = compile_model(model, Path(tmp) / "compiled", board=board.name,
                                     weights_in_ram=args.weights_in_ram)
        benchmark = mlperf.resolve(args.mlperf_tiny, compiled)
        if benchmark is not None:
            ui.info(f"MLPerf Tiny {benchmark.id} ({benchmark.title}){' energy mode' if args.energy else ''}")
        options = ProjectOptions(profile=args.profile, stack_bytes=args.stack_bytes, force=args.force,
                                 benchmark=benchmark, energy=args.energy)
        project = get_platform("zephyr").render(compiled, board, args.output, options)
    ui.info(f"build it with: mtk build {project}   (or: west build -b {board.name} -d {project}/build {project}); "
            f"flash it with: mtk flash {project}")
    print(project)
    return 0
