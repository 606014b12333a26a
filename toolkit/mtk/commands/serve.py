"""mtk serve: an MLPerf Tiny DUT for the stock host runner, built from a model and left running."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .. import interrupts, mlperf, mlperf_ports, ui
from ..errors import TargetError
from ..runners import get_runner
from ..runners.qemu_pty import PacedQemu, pacing_shift, run_fraction
from ._target import add_target_arguments, run_options

NAME = "serve"
HELP = "build MLPerf Tiny conforming firmware and serve it to the stock runner (QEMU on a paced pty, or a board)"
DESCRIPTION = """\
Build firmware that is an MLPerf Tiny DUT for the model (--mlperf-tiny ID, or the benchmark whose
reference model has the model's I/O) and leave it running for MLPerf Tiny's host runner
(mlcommons/tiny benchmark/runner): print its serial port on stdout, then wait.

QEMU boards run in QEMU with the UART on a pseudo-terminal, paced to the board's clock in real
time (-icount shift=S,align=on: 2^S ns an instruction, at least the board's speed, and the VM
stopped and continued on its monitor so that it runs the share of the time that makes the board's
speed): the runner's windows last on the host as long as on the board. Timestamps (m-lap-us-) are
the cycle model's: the inferences' estimated cycles (the rest of the firmware one instruction a
cycle) in microseconds of the board's clock; with --emulate, of the emulated board's (its core's
QEMU machine runs its code, paced to that machine's clock). Ctrl-C or
SIGTERM stops QEMU. Physical boards are flashed (console at the runner's baud rate for the
benchmark) and their serial port printed.

The runner finds its DUT by USB ids, which a pty has not: run it through mtk/mlperf_ports.py
(printed below), which lists the port with the ids of the runner's devices file.

examples:
  mtk serve kws_dscnn_int8.tflite                          # kws01 on mps2/an386 (QEMU, 25 MHz)
  mtk serve ic.tflite --board mps2/an500 --mlperf-tiny ic01
  mtk serve ad.tflite --board nucleo_l4r5zi                # flash; console at 921600 baud

exit status: 0 stopped by Ctrl-C/SIGTERM (or a board flashed), 2 bad model/usage, 3 tool missing,
4 build or target failure (QEMU ended by itself)
"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", help=".tflite model (int8; float with --calib)")
    add_target_arguments(p)
    p.set_defaults(mlperf_tiny=mlperf.AUTO)


def runner_hint(port: str, benchmark_id: str) -> str:
    devices = "devices_ad.yaml" if benchmark_id == "ad01" else "devices_kws_ic_vww.yaml"
    return (f"python3 {Path(mlperf_ports.__file__).resolve()} --port {port} "
            f"main.py -d {devices} -s DATASETS -m p    (-m a: accuracy)")


def run(args: argparse.Namespace) -> int:
    from ..pipeline import build_firmware, int8_model, work_folder
    from ..reader import read_model

    from ..cycles.model import CycleModel

    options = run_options(args, args.board)
    board = options.board
    runner = get_runner(board, **options.runner_options)
    shift = pacing_shift(board.clock_hz) if runner.caps.paced else 0
    with work_folder(options.build_dir) as work:
        int8 = int8_model(read_model(args.model), options.calib, work, options.build_dir is not None)
        compiled, elf = build_firmware(int8, options, work, shift)
        benchmark = mlperf.resolve(options.mlperf_tiny, compiled)
        if runner.caps.flashes:
            with ui.step(f"flashing {board.name}"):
                runner.start(elf).close()
            return _report(args, runner.select_board(), benchmark, board, None)
        try:   # Ctrl-C, SIGTERM, SIGHUP: the CLI's interrupts.handler raises them as a KeyboardInterrupt
            cycles = options.runner_options.get("cycles") or CycleModel.for_board(board)
            with PacedQemu(board, elf, shift, cycles) as qemu:
                _report(args, qemu.port, benchmark, board, shift, cycles)
                status = qemu.wait()
                raise TargetError(f"QEMU ended by itself (status {status}):\n{qemu.log()}")
        except KeyboardInterrupt:
            interrupts.handled_by_command()
            ui.info("stopped")
            return 0


def _report(args: argparse.Namespace, port: str, benchmark: mlperf.Benchmark, board, shift: int | None,
            cycles=None) -> int:
    if shift is not None:
        mhz = f"{board.clock_hz / 1e6:g} MHz"
        ui.info(f"MLPerf Tiny {benchmark.id} DUT on {port}: {board.name} in QEMU, paced to the board's {mhz} "
                f"({2**shift} ns an instruction, the VM running {run_fraction(board.clock_hz, shift):.0%} of the "
                f"time); timestamps are estimated cycles at {cycles.clock_hz / 1e6:g} MHz, the cycle model's "
                f"estimate for {cycles.label}")
        ui.info(f"stock runner, from its folder: {runner_hint(port, benchmark.id)}")
        ui.info("Ctrl-C stops")
    else:
        ui.info(f"MLPerf Tiny {benchmark.id} DUT flashed on {board.name}, serial port {port} at "
                f"{benchmark.baud['performance']} baud")
    if args.json:
        json.dump({"port": port, "benchmark": benchmark.id, "board": board.name,
                   "icount_shift": shift, "clock_hz": board.clock_hz,
                   "timestamps": None if cycles is None else {"unit": "us of estimated cycles",
                                                              "estimate_for": cycles.label,
                                                              "clock_hz": cycles.clock_hz}}, sys.stdout)
        print(flush=True)
    else:
        print(port, flush=True)
    return 0
