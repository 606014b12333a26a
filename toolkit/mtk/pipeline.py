"""The main job end to end: a model (quantized on the way if float) compiled, its firmware
rendered and built for a board, run on the target, and timing and outputs read back.

`mtk run`, `mtk validate` and `mtk bench` are thin layers over `run_model`.
"""

from __future__ import annotations

import shutil
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

import numpy as np

from . import mlperf, ui
from .argtypes import MAX_TIMED_RUNS
from .boards import Board
from .compiled import CompiledModel
from .budget import DEFAULT_MAX_RECOMPUTE
from .buildcache import cached_firmware, firmware_key, stable_application, store_firmware, sync_tree
from .cycles.estimate import Estimate, estimate_of
from .datafile import Npz, read_npy
from .errors import ModelError, MtkError, TargetError
from .mlperf import Benchmark
from .elfsize import ElfSizes, elf_sizes
from .graph import Tensor
from .lab import target_name
from .platforms import ProjectOptions, get_platform
from .platforms.zephyr import BUILD_DIR
from .reader import read_model
from .runners import Runner, get_runner
from .transport.protocol import CycleStats, FirmwareClient
from .transport.serial_link import BAUD_RATE

if TYPE_CHECKING:
    from .tuning import Tuning

Sample = list[np.ndarray]      # one array per model input
INFER_TIMEOUT_S = 120.0        # one `mtk-stats N` under QEMU on a slow machine
ANSWER_TIMEOUT_S = 10.0        # any other answer of the target, and its exit
BUILD_MARKER = ".mtk-build"


@dataclass(frozen=True)
class RunOptions:
    board: Board
    platform: str = "baremetal"
    runs: int = 10              # inferences timed for min/median/max
    profile: bool = False       # per-layer counts (a profiling build)
    calib: str | None = None    # calibration data: quantize a float model on the way
    build_dir: Path | None = None
    random_samples: int = 1     # inputs made up when the user gives none
    tuning: Tuning | None = None   # per-layer variants (`mtk tune`); None: the defaults
    mlperf_tiny: str | None = None  # an MLPerf Tiny benchmark id, or mlperf.AUTO: a conforming DUT
    runner_options: dict[str, Any] = field(default_factory=dict)
    semihosting: bool = True    # QEMU runs exit through semihosting; a board (or its stand-in) resets
    timeout: float | None = None   # seconds for each whole answer of the target (--timeout); None: the defaults
    max_ram: int | None = None     # the most arena (--max-ram); None: what the board's RAM leaves
    max_recompute: float = DEFAULT_MAX_RECOMPUTE   # extra MACs tiling may add (--max-recompute)
    emulate: Board | None = None   # a physical board whose code `board` (its core's QEMU board) runs: its estimate
    cache: bool = True             # reuse a bare-metal firmware built before from the same inputs (buildcache.py)


@dataclass(frozen=True)
class LayerTime:
    index: int
    type: str
    units: int
    macs: int
    tiled: bool = False   # in a tiled stage, whose units its first op reports (codegen/tiling.py)


@dataclass
class RunResult:
    board: Board
    model: str
    unit: str                          # "instructions" (QEMU) or "cycles"
    per_inference: CycleStats
    macs: int
    arena_bytes: int
    constant_bytes: int
    sizes: ElfSizes
    inputs: list[Sample]               # the samples sent, as the int8 model takes them
    outputs: list[Sample]              # per input sample, the model's outputs
    int8_model: bytes                  # the model compiled (quantized on the way if it was float)
    layers: list[LayerTime] | None = None   # the first sample's
    platform: str = "baremetal"
    tuning: str | None = None          # the tuning file the kernels' variants came from
    float_model: Path | None = None    # the float model quantized on the way into int8_model, if it was
    place: str | None = None           # the labgrid place it ran on (`mtk bench --lab labgrid`)
    host: str | None = None            # the exporter serving that place
    sample_layers: list[list[int]] | None = None   # per input sample, units per op (profiling builds)
    estimate: Estimate | None = None   # the cycle model's (QEMU runs)
    profiling: RunResult | None = None  # the profiling build's run, when `layers` come from one beside this plain build

    @property
    def target_name(self) -> str:
        """The board, or for a lab's place `place (board)`: what reports tell results apart by."""
        return target_name(self.board.name, self.place)

    @property
    def code_bytes(self) -> int:
        """Flash minus the model's constants: the firmware's and the kernels' code."""
        return self.sizes.flash_bytes - self.constant_bytes

    @property
    def time_ms(self) -> float:
        """Median time per inference at the board's clock (one instruction a cycle under QEMU)."""
        return self.per_inference.median / self.board.clock_hz * 1e3

    def to_json(self) -> dict[str, Any]:
        return {
            **({"place": self.place, "host": self.host} if self.place is not None else {}),
            "board": self.board.name, "cpu": self.board.cpu.name, "platform": self.platform, "model": self.model,
            "tuning": self.tuning, "unit": self.unit,
            "per_inference": {"min": self.per_inference.min, "median": self.per_inference.median,
                              "max": self.per_inference.max, "runs": self.per_inference.count},
            "time_ms_at_clock": round(self.time_ms, 4), "clock_hz": self.board.clock_hz,
            "macs": self.macs, "macs_per_unit": round(self.macs / max(self.per_inference.median, 1), 4),
            "arena_bytes": self.arena_bytes, "ram_bytes": self.sizes.ram_bytes,
            "flash_bytes": self.sizes.flash_bytes, "constant_bytes": self.constant_bytes,
            "code_bytes": self.code_bytes,
            "outputs": [sample[0].reshape(-1).astype(int).tolist() for sample in self.outputs],
            "layers": None if self.layers is None else [
                {"index": layer.index, "type": layer.type, "units": layer.units, "macs": layer.macs}
                for layer in self.layers],
            "estimated_cycles": self.estimate.to_json() if self.estimate else None,
            **({"profiling_build": {"per_inference_median": self.profiling.per_inference.median,
                                    "flash_bytes": self.profiling.sizes.flash_bytes}} if self.profiling else {}),
        }


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


def int8_model(model: Path, calib: str | None, work: Path, kept: bool = False) -> Path:
    """The model itself if it is int8; quantized with `calib` into `work` if it is float (`kept`: `work` is the
    user's --build-dir, else a temporary folder, and the messages say so)."""
    graph = read_model(model)
    is_float = any(graph.tensors[i].dtype == "float32" for i in graph.inputs) and \
        not any(op.type == "QUANTIZE" for op in graph.ops)
    if not is_float:
        if calib is not None:
            ui.info(f"{model.name} is already quantized: --calib is not used")
        return model
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
    return out


def benchmark_of(compiled: CompiledModel, options: RunOptions) -> Benchmark | None:
    """The MLPerf Tiny benchmark the firmware conforms to (None: mtk's own firmware)."""
    return mlperf.resolve(options.mlperf_tiny, compiled)


def build_firmware(model: Path, options: RunOptions, work: Path, icount_shift: int = 0) -> tuple[CompiledModel, Path]:
    from .compiler import compile_model   # TVM: not needed to run a firmware from the cache

    compiled = compile_model(model, work / "compiled", board=options.board.name, force=True, tuning=options.tuning,
                             max_ram=options.max_ram, max_recompute=options.max_recompute)
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
                 ) -> tuple[str, CycleStats, list[Sample], list[list[int]] | None, Estimate | None]:
    """Send each sample, read its outputs; time `options.runs` inferences of the first sample; with
    profiling, the units per op of each sample's (last) inference; under QEMU the cycle model's
    estimate of the timed inferences and of each sample's layers."""
    benchmark = benchmark_of(compiled, options)
    baudrate = benchmark.baud["performance"] if benchmark is not None else BAUD_RATE
    with ui.step(f"running on {options.board.name}"), runner.start(elf, baudrate) as session:
        client = FirmwareClient(session.link, timeout=options.timeout or ANSWER_TIMEOUT_S)
        infer_timeout = options.timeout or INFER_TIMEOUT_S
        client.wait_boot()
        info = client.info()
        outputs, stats, layers = [], None, [] if options.profile else None
        trace, estimate, measured, estimated_layers = session.cycles, None, [], []
        inferences = options.runs + len(samples) - 1
        for k, sample in enumerate(samples):
            if benchmark is not None:   # the bytes the MLPerf Tiny runner would send
                client.load_input(benchmark.encode(sample[0], compiled.inputs[0]))
            else:
                client.load_input(compiled.pack_inputs([np.ascontiguousarray(a).tobytes() for a in sample]))
            if k == 0:
                stats = client.stats(options.runs, timeout=infer_timeout)
            else:
                client.infer(1, 0, timeout=infer_timeout)
            if options.profile:
                layers.append(client.layers())
            if trace is not None:
                measured = measured or trace.take_inferences()   # the first sample's timed inferences
                if options.profile:
                    estimated_layers.append(trace.last_layers())
            outputs.append(_unpack(compiled, client.read_output()))
            ui.progress(options.runs + k, inferences)   # inferences done
        client.exit(0)
        status = session.wait_exit(options.timeout or ANSWER_TIMEOUT_S) if runner.caps.exit_status else 0
        if trace is not None:
            estimate = estimate_of(trace, measured, estimated_layers if options.profile else None,
                                   options.board.name if options.emulate else None)
    if status != 0:
        raise MtkError(f"the firmware on {options.board.name} exited with status {status}")
    return info.unit, stats, outputs, layers, estimate


def _layer_times(compiled: CompiledModel, counts: list[int]) -> list[LayerTime]:
    return [LayerTime(op.index, op.type, units, op.macs, op.tiled)
            for op, units in zip(compiled.ops, counts)]


@dataclass(frozen=True)
class Firmware:
    """A model built into firmware for one board type, with the samples it will be sent: what
    `run_built` runs on any number of targets of that type."""

    model: Path                 # as the user gave it
    int8: Path                  # the int8 model compiled
    compiled: CompiledModel
    elf: Path
    samples: list[Sample]
    options: RunOptions


def build_model_firmware(model: Path, options: RunOptions, work: Path,
                         samples: str | Path | list[Sample] | None = None) -> Firmware:
    """Quantize (if float), compile and build `model` for `options.board` in `work`, or take the
    firmware built before from the same inputs (bare metal, without --build-dir: buildcache.py)."""
    if isinstance(samples, (str, Path)):
        from .evaluation import check_data_labels
        check_data_labels(samples, model)   # bad labels refused before quantizing and a long build
    key = firmware_key(model, options) if options.cache and options.platform == "baremetal" \
        and options.build_dir is None else None
    cached = cached_firmware(key) if key is not None else None
    int8 = (cached.int8 or model) if cached is not None else \
        int8_model(model, options.calib, work, kept=options.build_dir is not None)
    if isinstance(samples, (str, Path)):
        samples = load_samples(samples, int8)
    if cached is not None:
        ui.info(f"reusing the firmware built before from the same model, options and mtk "
                f"({cached.elf.parent}; --no-cache builds it again)")
        compiled, elf = cached.compiled, cached.elf
    else:
        compiled, elf = build_firmware(int8, options, work)
        if key is not None:
            store_firmware(key, int8 if int8 != model else None, compiled, elf)
    samples = [check_sample(compiled, s) for s in samples or random_samples(compiled, options.random_samples)]
    return Firmware(model, int8, compiled, elf, samples, options)


def run_built(firmware: Firmware, runner: Runner) -> RunResult:
    """Run a built firmware on the target `runner` starts; its result."""
    options, compiled = firmware.options, firmware.compiled
    unit, stats, outputs, layers, estimate = run_firmware(runner, firmware.elf, compiled, firmware.samples, options)
    return RunResult(options.board, firmware.model.name, unit, stats, compiled.macs, compiled.arena_bytes,
                     compiled.constant_bytes, elf_sizes(firmware.elf), firmware.samples, outputs,
                     firmware.int8.read_bytes(), _layer_times(compiled, layers[0]) if layers else None,
                     options.platform, options.tuning.source if options.tuning else None,
                     firmware.model if firmware.int8 != firmware.model else None, sample_layers=layers or None,
                     estimate=estimate)


def check_runs(runs: int) -> None:
    if not 1 <= runs <= MAX_TIMED_RUNS:
        raise MtkError(f"-n {runs}: the firmware times 1 to {MAX_TIMED_RUNS} inferences at a time")


def run_model(model: str | Path, options: RunOptions, samples: str | Path | list[Sample] | None = None) -> RunResult:
    """Compile, build, run `model` on `options.board`. `samples`: a data file (load_samples), arrays,
    or None for `options.random_samples` deterministic random ones."""
    check_runs(options.runs)
    runner = get_runner(options.board, **options.runner_options)
    runner.find_target()   # no board attached: say so before a long build
    with work_folder(options.build_dir) as work:
        return run_built(build_model_firmware(Path(model), options, work, samples), runner)


# ---- input samples ---------------------------------------------------------------------------

QUANTIZED_INPUTS = ("int8", "int16")   # input types whose float samples are quantized with the tensor's scale


def random_samples(compiled: CompiledModel, count: int = 1) -> list[Sample]:
    """Deterministic random data over each input's whole range (int8, int16) or about ±1 (float)."""
    rng = np.random.default_rng(0)

    def sample(t) -> np.ndarray:
        if t.dtype in QUANTIZED_INPUTS:
            info = np.iinfo(t.dtype)
            return rng.integers(info.min, info.max + 1, t.shape).astype(t.dtype)
        return rng.uniform(-1, 1, t.shape).astype(t.dtype)
    return [[sample(t) for t in compiled.inputs] for _ in range(count)]


def check_sample(compiled: CompiledModel, sample: Sample) -> Sample:
    if len(sample) != len(compiled.inputs):
        raise MtkError(f"{compiled.name} takes {len(compiled.inputs)} inputs; a sample has {len(sample)}")
    return [np.asarray(a).reshape(t.shape).astype(t.dtype) for a, t in zip(sample, compiled.inputs)]


def load_samples(path: str | Path, model: str | Path) -> list[Sample]:
    """Samples for `model` from an .npy (one sample, with or without the batch dimension, or a
    batch of them) or an .npz (`x`, or one array per input named as the model's inputs).
    Float data for an int8 or int16 input is quantized with the input's scale and zero point."""
    inputs = model_inputs(model)
    batches = [_as_input(batch, array.dtype, t) for (array, batch), t in zip(sample_batches(path, inputs), inputs)]
    return [[batch[k:k + 1] for batch in batches] for k in range(len(batches[0]))]


def model_inputs(model: str | Path) -> list[Tensor]:
    graph = read_model(model)
    return [graph.tensors[i] for i in graph.inputs]


def sample_batches(path: str | Path, inputs: list[Tensor]) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per model input: the array as the file holds it, and as a float32 batch shaped (N, *input shape)."""
    from .quantize.dataset import as_batch, batch_check, batch_shape
    path = Path(path)
    if path.suffix == ".npz":
        with Npz(path) as npz:
            if len(inputs) == 1:
                keys = ("x", inputs[0].name, "arr_0")   # arr_0: np.savez with one positional array
                key = next((k for k in keys if k in npz.headers), None)
                if key is None:
                    raise MtkError(f"{path} holds arrays {sorted(npz.headers)}; the model's input is read from "
                                   f"{' or '.join(repr(k) for k in keys)}")
                chosen = [key]
            else:
                missing = [t.name for t in inputs if t.name not in npz.headers]
                if missing:
                    raise MtkError(f"{path} has no array for input(s) {missing} (holds {sorted(npz.headers)})")
                chosen = [t.name for t in inputs]
            for key, t in zip(chosen, inputs):   # shapes checked before anything is inflated
                batch_shape(npz.headers[key][0], tuple(t.shape[1:]), str(path))
            per_input = [npz.read(key) for key in chosen]
    else:
        if len(inputs) != 1:
            raise MtkError(f"the model has {len(inputs)} inputs: give an .npz with one array per input name "
                           f"({[t.name for t in inputs]})")
        per_input = [read_npy(path, batch_check(tuple(inputs[0].shape[1:]), str(path)))]
    batches = [(array, as_batch(array, tuple(t.shape[1:]), str(path))) for array, t in zip(per_input, inputs)]
    if len({len(b) for _, b in batches}) != 1:
        raise MtkError(f"{path}: the inputs hold different numbers of samples {[len(b) for _, b in batches]}")
    return batches


def _as_input(batch: np.ndarray, source_dtype: np.dtype, tensor: Tensor) -> np.ndarray:
    """A float32 batch (as_batch gives) in the input tensor's dtype."""
    if tensor.dtype not in QUANTIZED_INPUTS:
        return batch.astype(tensor.dtype)
    info = np.iinfo(tensor.dtype)
    if np.issubdtype(source_dtype, np.integer):
        if np.iinfo(source_dtype).bits > info.bits:
            raise MtkError(f"input {tensor.name} is {tensor.dtype}: give {tensor.dtype} values (already quantized) or "
                           f"float values (quantized with scale {tensor.quant.s:g}, zero point {tensor.quant.zp}); "
                           f"the samples are {source_dtype}")
        if batch.min() < info.min or batch.max() > info.max:
            raise MtkError(f"input {tensor.name} is {tensor.dtype}; the samples hold values outside {info.min}..{info.max}")
        return batch.astype(tensor.dtype)
    q = np.round(batch / np.float32(tensor.quant.s)) + tensor.quant.zp
    return np.clip(q, info.min, info.max).astype(tensor.dtype)
