"""The main job end to end: a model (quantized on the way if float) compiled, its firmware
rendered and built for a board, run on the target, and timing and outputs read back.

`mtk run`, `mtk validate` and `mtk bench` are thin layers over `run_model`.
"""

from __future__ import annotations

import shutil
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Iterator

import numpy as np

from . import mlperf, ui
from .budget import check_emulated_ram, emulated_constants
from .compiled import CompiledModel
from .buildcache import cached_firmware, firmware_key, stable_application, store_firmware, sync_tree
from .cycles.estimate import Estimate, estimate_of
from .errors import ModelError, MtkError, TargetError
from .mlperf import Benchmark
from .elfsize import ElfSizes, elf_sizes
from .platforms import ProjectOptions, get_platform
from .platforms.zephyr import BUILD_DIR
from .graph import Graph
from .reader import as_graph, read_model
from .runners import Runner, get_runner
from .runoptions import RunOptions, check_runs
from .runresult import LayerTime, RunResult
from .samples import Sample, check_sample, load_samples, random_samples
from .transport.protocol import CycleStats, FirmwareClient
from .transport.serial_link import BAUD_RATE

INFER_TIMEOUT_S = 120.0        # one `mtk-stats N` under QEMU on a slow machine
ANSWER_TIMEOUT_S = 10.0        # any other answer of the target, and its exit
BUILD_MARKER = ".mtk-build"


@contextmanager
def work_folder(build_dir: Path | None) -> Iterator[Path]:
    """A temporary folder, or the user's --build-dir (kept; only ever one mtk made)."""
    if build_dir is None:
        with tempfile.TemporaryDirectory(prefix="mtk-") as tmp:
            yield Path(tmp)
        return
    build_dir = Path(build_dir)
    if build_dir.exists() and any(build_dir.iterdir()) and not (build_dir / BUILD_MARKER).exists():
        raise MtkError(f"--build-dir {build_dir} holds files mtk did not make; give an empty or new folder")
    build_dir.mkdir(parents=True, exist_ok=True)
    (build_dir / BUILD_MARKER).touch()
    yield build_dir


def int8_model(graph: Graph, calib: str | None, work: Path, kept: bool = False) -> Graph:
    """The model itself if it is int8; quantized with `calib` into `work` and read back if it is float (`kept`:
    `work` is the user's --build-dir, else a temporary folder, and the messages say so)."""
    model = graph.source
    is_float = any(graph.tensors[i].dtype == "float32" for i in graph.inputs) and \
        not any(op.type == "QUANTIZE" for op in graph.ops)
    if not is_float:
        if calib is not None:
            ui.info(f"{model.name} is already quantized: --calib is not used")
        return graph
    if calib is None:
        raise ModelError(f"{model} is a float model", hint="give calibration data with --calib to quantize it "
                         "on the way, or quantize it first with `mtk quantize`")
    from .quantize import format_report, quantize_model   # ai-edge-quantizer is slow to import
    out = work / f"{model.stem.removesuffix('_float')}_int8.tflite"
    where = out if kept else (f"a temporary {out.name}, removed at exit (`mtk quantize {model} --calib {calib}` "
                              "writes it beside the model)")
    ui.info(f"{model.name} is a float model: quantizing it with {calib} into {where}")
    report = quantize_model(model, calib, out)
    ui.info(format_report(report if kept else replace(report, int8_model=Path(f"{out.name} (temporary)"))))
    return read_model(out)


def benchmark_of(compiled: CompiledModel, options: RunOptions) -> Benchmark | None:
    """The MLPerf Tiny benchmark the firmware conforms to (None: mtk's own firmware)."""
    return mlperf.resolve(options.mlperf_tiny, compiled)


def build_firmware(model: Graph, options: RunOptions, work: Path, icount_shift: int = 0) -> tuple[CompiledModel, Path]:
    from .compiler import compile_model   # TVM: not needed to run a firmware from the cache

    compiled = compile_model(model, work / "compiled", board=options.board, force=True, tuning=options.tuning,
                             max_ram=options.max_ram, max_recompute=options.max_recompute,
                             weights_in_ram=options.weights_in_ram)
    if options.emulate is not None and options.weights_in_ram:   # the QEMU board's RAM is not the estimated board's
        check_emulated_ram(compiled, options.emulate)
    benchmark = benchmark_of(compiled, options)
    if benchmark is not None and options.mlperf_tiny == mlperf.AUTO:
        ui.info(f"MLPerf Tiny: {benchmark.id} ({benchmark.title}), detected from the model's I/O "
                f"({benchmark.describe()})")
    return compiled, build_project(compiled, benchmark, options, work, icount_shift)


def build_project(compiled: CompiledModel, benchmark: Benchmark | None, options: RunOptions, work: Path,
                  icount_shift: int = 0) -> Path:
    """Render the firmware project for `compiled` into `work` and build it: its ELF. A Zephyr project
    without --build-dir is built in the folder kept for its board and options (incrementally)."""
    platform = get_platform(options.platform)
    project = platform.render(compiled, options.board, work / "project",
                              ProjectOptions(profile=options.profile, semihosting=options.semihosting,
                                             force=True, benchmark=benchmark, icount_shift=icount_shift))
    if options.platform != "zephyr" or options.build_dir is not None:
        with ui.step(f"building {options.platform} firmware for {options.board.name}"):
            return platform.build(project)
    with stable_application(options, icount_shift) as app:   # west build redoes only what changed
        sync_tree(project, app, keep=(BUILD_DIR,))
        with ui.step(f"building zephyr firmware for {options.board.name} in {app}"):
            elf = work / "zephyr.elf"
            shutil.copy2(platform.build(app), elf)
    return elf


def _unpack(compiled: CompiledModel, raw: bytes) -> Sample:
    if len(raw) != compiled.output_bytes:
        raise TargetError(f"the target sent {len(raw)} output bytes; {compiled.name}'s outputs take {compiled.output_bytes}")
    return [np.frombuffer(data, dtype=t.dtype).reshape(t.shape)
            for data, t in zip(compiled.unpack_outputs(raw), compiled.outputs)]


def run_firmware(runner: Runner, elf: Path, compiled: CompiledModel, samples: list[Sample], options: RunOptions
                 ) -> tuple[str, CycleStats, list[Sample], list[list[int]] | None, Estimate | None, int | None]:
    """Send each sample, read its outputs; then time `options.runs` inferences; with
    profiling, the units per op of each sample's inference; where the runner runs a cycle model,
    its estimate of the timed inferences and of each sample's layers; the main stack's high-water mark
    after all that, where the firmware can tell. What the runner can do (exit status, console baud rate,
    cycle model) is read from its RunnerCaps. The input lives in the model's arena, where a run may
    overwrite it: each sample's outputs are those of the inference right after it was sent, and the timed
    inferences come after the last sample's, on what it left there (as an MLPerf Tiny performance run of
    TFLM times its inferences after one th_load_tensor; a stream's state carries on past its samples, whose
    outputs are read by then); a benchmark firmware converts its own `db` buffer into the input before each."""
    benchmark = benchmark_of(compiled, options)
    baudrate = benchmark.baud["performance"] if benchmark is not None and runner.caps.sets_baud else BAUD_RATE
    with ui.step(f"running on {options.board.name}"), runner.start(elf, baudrate) as session:
        client = FirmwareClient(session.link, timeout=options.timeout or ANSWER_TIMEOUT_S)
        infer_timeout = options.timeout or INFER_TIMEOUT_S
        client.wait_boot()
        info = client.info()
        outputs, stats, layers = [], None, [] if options.profile else None
        trace = session.cycles if runner.caps.estimates_cycles else None
        estimate, measured, estimated_layers = None, [], []
        inferences = options.runs + len(samples)
        for k, sample in enumerate(samples):
            if benchmark is not None:   # the bytes the MLPerf Tiny runner would send
                client.load_input(benchmark.encode(sample[0], compiled.inputs[0]))
            else:
                client.load_input(compiled.pack_inputs([np.ascontiguousarray(a).tobytes() for a in sample]))
            client.infer(1, 0, timeout=infer_timeout)
            if options.profile:
                layers.append(client.layers())
                if trace is not None:
                    estimated_layers.append(trace.last_layers())
            outputs.append(_unpack(compiled, client.read_output()))
            ui.progress(k + 1, inferences)   # inferences done
        if trace is not None:
            trace.take_inferences()   # the samples' own, untimed
        stats = client.stats(options.runs, timeout=infer_timeout)
        measured = trace.take_inferences() if trace is not None else []
        timed_layers = trace.last_layers() if trace is not None and options.profile else None
        ui.progress(inferences, inferences)
        stack_used = client.info().stack_used_bytes
        client.exit(0)
        status = session.wait_exit(options.timeout or ANSWER_TIMEOUT_S) if runner.caps.exit_status else 0
        if trace is not None:
            estimate = estimate_of(trace, measured, estimated_layers if options.profile else None,
                                   options.board.name if options.emulate else None, timed_layers)
    if status != 0:
        raise MtkError(f"the firmware on {options.board.name} exited with status {status}")
    return info.unit, stats, outputs, layers, estimate, stack_used


def _layer_times(compiled: CompiledModel, counts: list[int]) -> list[LayerTime]:
    """The ops in the order they run, each with its units (the firmware counts them by op index)."""
    return [LayerTime(op.index, op.type, counts[op.index], op.macs, op.tiled, op.code_bytes,
                      op.variant["kernel"] if op.variant else None)
            for op in compiled.ops if op.index < len(counts)]


@dataclass(frozen=True)
class Firmware:
    """A model built into firmware for one board type, with the samples it will be sent: what
    `run_built` runs on any number of targets of that type."""

    model: Path                 # as the user gave it
    int8: Graph                 # the int8 model compiled (its source: the file; the user's or a quantized one)
    compiled: CompiledModel
    elf: Path
    samples: list[Sample]
    options: RunOptions


def build_model_firmware(model: str | Path | Graph, options: RunOptions, work: Path,
                         samples: str | Path | list[Sample] | None = None) -> Firmware:
    """Quantize (if float), compile and build `model` for `options.board` in `work`, or take the
    firmware built before from the same inputs (bare metal, without --build-dir: buildcache.py)."""
    given = as_graph(model)
    model = given.source
    if isinstance(samples, (str, Path)):
        from .evaluation import check_data_labels
        check_data_labels(samples, given)   # bad labels refused before quantizing and a long build
    key = firmware_key(model, options) if options.cache and options.platform == "baremetal" \
        and options.build_dir is None else None
    cached = cached_firmware(key) if key is not None else None
    if cached is None:
        int8 = int8_model(given, options.calib, work, kept=options.build_dir is not None)
    else:
        int8 = given if cached.int8 is None else read_model(cached.int8)
    if isinstance(samples, (str, Path)):
        samples = load_samples(samples, int8)
    if cached is not None:
        ui.info(f"reusing the firmware built before from the same model, options and mtk "
                f"({cached.elf.parent}; --no-cache builds it again)")
        compiled, elf = cached.compiled, cached.elf
    else:
        compiled, elf = build_firmware(int8, options, work)
        if key is not None:
            store_firmware(key, int8.source if int8 is not given else None, compiled, elf)
    samples = [check_sample(compiled, s) for s in samples or random_samples(compiled, options.random_samples)]
    return Firmware(model, int8, compiled, elf, samples, options)


def check_stack(board: str, sizes: ElfSizes, stack_used: int | None) -> None:
    """TargetError if the firmware's stack high-water mark reached the end of its reservation."""
    if stack_used is not None and sizes.stack_bytes is not None and stack_used >= sizes.stack_bytes:
        raise TargetError(f"the firmware on {board} used its whole main stack ({sizes.stack_bytes:,} B): "
                          "it may have overflowed into the RAM below it, and the outputs are not to be trusted",
                          hint="give it more with `mtk project --stack-bytes`")


def run_built(firmware: Firmware, runner: Runner) -> RunResult:
    """Run a built firmware on the target `runner` starts; its result."""
    options, compiled = firmware.options, firmware.compiled
    unit, stats, outputs, layers, estimate, stack_used = run_firmware(runner, firmware.elf, compiled,
                                                                      firmware.samples, options)
    sizes = elf_sizes(firmware.elf)
    check_stack(options.board.name, sizes, stack_used)
    return RunResult(options.board, firmware.model.name, unit, stats, compiled.macs, compiled.arena_bytes,
                     compiled.constant_bytes, sizes, firmware.samples, outputs,
                     firmware.int8.source.read_bytes(), _layer_times(compiled, layers[0]) if layers else None,
                     options.platform, options.tuning.source if options.tuning else None,
                     firmware.model if firmware.int8.source != firmware.model else None, sample_layers=layers or None,
                     estimate=estimate, graph=firmware.int8, stack_used_bytes=stack_used,
                     constants_in_ram=emulated_constants(compiled, options.emulate) if options.emulate is not None
                     else compiled.memory.constants_in_ram)


def run_model(model: str | Path | Graph, options: RunOptions,
              samples: str | Path | list[Sample] | None = None) -> RunResult:
    """Compile, build, run `model` (its file, or its graph already read) on `options.board`. `samples`: a data
    file (load_samples), arrays, or None for `options.random_samples` deterministic random ones."""
    check_runs(options.runs)
    runner = get_runner(options.board, **options.runner_options)
    runner.find_target()   # no board attached: say so before a long build
    with work_folder(options.build_dir) as work:
        return run_built(build_model_firmware(model, options, work, samples), runner)
