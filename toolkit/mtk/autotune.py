"""`mtk tune`: per layer, the variant that takes the fewest estimated cycles in QEMU (the cycle model's,
mtk.cycles: the board's core, exact and the same on every run) for the flash it costs. Tunable layers: conv, fully connected and 1→N depthwise (GEMM variants: block and
weight format), depthwise with several input channels and average/max pooling (kernel variants:
ops/variants.py). A physical board is tuned emulated (tune_target): its builds run on the QEMU board of its core
under its cycle model (its clock, flash and RAM timing), as `mtk bench --emulate` runs them; the tuning file keeps
each board's counts and choices apart (tuning.py).

A layer's count depends on its own kernel only, so one candidate build measures one variant of every
layer still to measure (the k-th build: each layer's k-th unmeasured variant): as many builds as the
layer with the most variants needs (the untuned build measures the variant each layer takes without a tuning
file: its default, or the compiler's choice for the board, code_fitting_tuning). The model is built with per-op
counters and run on two different inputs (pipeline.run_model, profile=True); a layer's count is the mean of the
two (a kernel's cycles can depend on the data: requantization, borders). A build that does not fit the board,
or whose outputs differ, is split into one build per variant, to leave out only what does not fit and
to name the variant that is wrong. Layers that run in tiled stages (a model tiled to fit the board's
RAM: codegen/tiling.py) are measured where the same key runs untiled, else left at their default: a
stage's counter ticks for all its layers. A variant whose weights and own code (its layer's function and the kernels
only layers of its variant call, in the build that measured it: codegen/code_size.py) take more flash than the
leanest variant's (int16 or paired weights: twice; a kernel of its own) may be chosen only if it saves
cycles over the leanest at `flash_per_instruction` bytes or less per cycle (choose); among those,
each layer keeps the fewest cycles, and of equal counts the first in the layer's variant order (the
default first): the same choices on every run. A candidate
whose build does not fit the board is left out. Every build must give the untuned build's outputs
on the same inputs, bit for bit. Layer shapes already in the tuning file are not measured again but
chosen again from its counts; new counts and the choices are merged into it. The model is then
built with the chosen variants and checked again.
"""

from __future__ import annotations

import math
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from . import __version__, ui
from .boards import Board, Unit
from .cycles.emulate import emulated_runner
from .cycles.model import UNIT as CYCLES_UNIT
from .errors import MismatchError, ModelError, MtkError
from .graph import Graph
from .ops import prepare_ops
from .ops.variants import Variant
from .pipeline import int8_model, run_model
from .runoptions import RunOptions
from .runresult import RunResult
from .reader import read_model
from .tuning import Layer, Tuning, read_entries, tunable_layers, write_entries

MEASURED_INPUTS = 2   # each build runs on this many different inputs
COUNTS = "cycles"     # what a layer's variants are compared by: the cycle model's estimate (the tuning file's key)
CODE = "code_bytes"   # the tuning file's key of each variant's own code (LayerTime.code_bytes)


@dataclass
class LayerChoice:
    key: str
    ops: list[int]                  # op indices with this key
    counts: dict[str, int]          # estimated cycles by variant label
    code: dict[str, int | None]     # by variant label: the code its kernels take as if alone (bytes)
    extra_flash: dict[str, int]     # by variant label: flash (weights and that code) over the leanest variant's
    variant: Variant
    passed_over: dict[str, str]     # by variant label: why it was not chosen
    cached: bool                    # counts read from the tuning file, not measured now


@dataclass
class TuneResult:
    model: str
    target: RunOptions              # what each build ran on (tune_target)
    cache: Path
    flash_per_instruction: float
    layers: list[LayerChoice]
    builds_measured: int            # candidate builds run (0: everything was in the tuning file)
    untuned: RunResult
    tuned: RunResult

    @property
    def board(self) -> str:
        """The board whose cycles were measured (with --emulate, the emulated one)."""
        return measured_board(self.target)

    @property
    def emulated_on(self) -> str | None:
        """The QEMU board that ran the builds of another board (--emulate), else None."""
        return emulator_of(self.target)

    def to_json(self) -> dict:
        def whole(r: RunResult) -> dict:
            return {"instructions": r.per_inference.median, COUNTS: r.estimate.per_inference.median if r.estimate
                    else None, "arena_bytes": r.arena_bytes,
                    "flash_bytes": r.sizes.flash_bytes, "constant_bytes": r.constant_bytes}
        return {"model": self.model, "board": self.board, "emulated_on": self.emulated_on,
                "unit": CYCLES_UNIT, "cpu": self.target.board.cpu.name, "cache": str(self.cache),
                "flash_per_instruction": _json_limit(self.flash_per_instruction),
                "builds_measured": self.builds_measured, "untuned": whole(self.untuned), "tuned": whole(self.tuned),
                "bit_exact": True,
                "layers": [{"key": c.key, "ops": c.ops, COUNTS: c.counts, "code_bytes": c.code,
                            "extra_flash_bytes": c.extra_flash, "cached": c.cached, "schedule": c.variant.to_json(),
                            "passed_over": c.passed_over} for c in self.layers]}


def _json_limit(flash_per_instruction: float) -> float | None:
    """The limit as JSON has it: null for none (inf)."""
    return flash_per_instruction if math.isfinite(flash_per_instruction) else None


def _same_outputs(a: RunResult, b: RunResult) -> bool:
    return all(np.array_equal(x, y) for sa, sb in zip(a.outputs, b.outputs) for x, y in zip(sa, sb))


def tune_target(board: Board, emulate: bool = False) -> RunOptions:
    """How each build is run: on QEMU `board` under its core's cycle model, or with `emulate` on the QEMU board of
    physical `board`'s core under `board`'s (its flash and RAM timing: cycles/emulate.py)."""
    if emulate:
        if board.qemu is not None:
            raise MtkError(f"--emulate estimates a physical board's cycles in QEMU: {board.name} is a QEMU board",
                           hint=f"tune on it without --emulate: `mtk tune MODEL --board {board.name}`")
        machine, runner_options = emulated_runner(board)
        return _measuring(machine, runner_options=runner_options, emulate=board)
    if board.caps.unit != Unit.INSTRUCTIONS:
        raise MtkError(f"{board.name} is not a QEMU board: mtk tune runs every build in QEMU",
                       hint=f"estimate its cycles on its core's QEMU board: `mtk tune MODEL --board {board.name} "
                            "--emulate`")
    return _measuring(board)


def _measuring(board: Board, **options) -> RunOptions:
    """A profiling build on `board`, run once on MEASURED_INPUTS inputs, never from the firmware cache."""
    return RunOptions(board=board, runs=1, profile=True, cache=False, random_samples=MEASURED_INPUTS, **options)


def measured_board(target: RunOptions) -> str:
    """The board whose estimated cycles `target`'s runs measure: the tuning file's key."""
    return target.board.budget_name


def emulator_of(target: RunOptions) -> str | None:
    """The QEMU board that runs another board's code (--emulate), else None."""
    return target.board.name if target.emulate is not None else None


def _run(model: Graph, target: RunOptions, tuning: Tuning | None, untuned: RunResult | None) -> RunResult:
    result = run_model(model, replace(target, tuning=tuning))
    if untuned is not None and not _same_outputs(result, untuned):
        raise MismatchError(f"{model.source.name} on {measured_board(target)}: the outputs with {tuning.source} "
                            "differ from the untuned build's (a kernel bug: please report it)")
    return result


def _code(result: RunResult) -> dict[int, int | None]:
    """The code each op's layer's kernels take as if alone, by op index (None: no compiler to measure it)."""
    return {layer.index: layer.code_bytes for layer in result.layers or []}


def _counts(result: RunResult) -> dict[int, int]:
    """Estimated cycles per op index: the mean over the inputs measured."""
    per_sample = result.estimate.sample_layers if result.estimate else ()
    if not per_sample:
        raise MtkError(f"mtk tune chooses by estimated cycles: {result.board.name}'s run gave none",
                       hint="the cycle model is off (MTK_NO_CYCLE_MODEL) or has no table for the core")
    return {layer.index: round(sum(cycles.get(layer.index, 0) for cycles in per_sample) / len(per_sample))
            for layer in result.layers or []}


def choose(layer: Layer, counts: dict[str, int], tick: float, flash_per_unit: float,
           unit: str = COUNTS, code: dict[str, int | None] | None = None) -> tuple[Variant, dict[str, str]]:
    """The variant for `layer` from its measured `counts` (of `unit`, by label, the leanest variant's
    always there) and its variants' own `code` (Layer.flash), and why each other variant was passed over.
    A variant is allowed if it takes no more flash than the leanest, or extra flash ≤ flash_per_unit × the
    count it saves over the leanest; of the allowed, the fewest, and within `tick` of the fewest the first."""
    leanest = layer.leanest(code)
    lean, extra_flash = counts[leanest.label], layer.extra_flash(code)
    allowed: list[Variant] = []
    passed_over: dict[str, str] = {}
    for s in layer.variants:
        extra, count = extra_flash[s.label], counts.get(s.label)
        if count is None:
            passed_over[s.label] = "not measured: the build did not fit the board"
        elif extra > 0 and lean <= count:
            passed_over[s.label] = f"{count - lean:+,} {unit} and +{extra:,} B flash over {leanest.label}"
        elif extra > 0 and extra > flash_per_unit * (lean - count):
            passed_over[s.label] = (f"+{extra:,} B flash for {lean - count:,} {unit} saved "
                                    f"(limit {flash_per_unit:g} B per {unit.removesuffix('s')})")
        else:
            allowed.append(s)
    fewest = min(counts[s.label] for s in allowed)
    chosen = next(s for s in allowed if counts[s.label] - fewest <= tick)
    for s in allowed:
        if s != chosen:
            more = counts[s.label] - counts[chosen.label]
            passed_over[s.label] = (f"a tie with {chosen.label} (within a tick), which comes first"
                                    if counts[s.label] - fewest <= tick else f"{more:+,} {unit}")
    return chosen, passed_over


def candidate_tunings(layers: list[Layer], measured: dict[str, dict[str, int | None]] | None = None) -> list[Tuning]:
    """The candidate builds: the k-th gives each layer key its k-th variant that has no count in `measured` yet
    (the untuned build's variant has: without `measured`, the default)."""
    if measured is None:
        measured = {layer.key: {layer.variants[0].label: None} for layer in layers}
    todo = [(layer.key, [s for s in layer.variants if s.label not in measured.get(layer.key, {})]) for layer in layers]
    rounds = max((len(variants) for _, variants in todo), default=0)
    return [_candidate({key: variants[k] for key, variants in todo if k < len(variants)}) for k in range(rounds)]


def _candidate(variants: dict[str, Variant]) -> Tuning:
    labels = dict.fromkeys(s.label for s in variants.values())
    return Tuning(variants, "schedule " + ", ".join(labels))


def _split(tuning: Tuning) -> list[Tuning]:
    """One candidate per variant of `tuning`: [] when it holds one."""
    by_variant: dict[Variant, dict[str, Variant]] = {}
    for key, variant in tuning.variants.items():
        by_variant.setdefault(variant, {})[key] = variant
    return [_candidate(keys) for keys in by_variant.values()] if len(by_variant) > 1 else []


def is_measured(layer: Layer, counts: dict[str, int | None]) -> bool:
    """Every variant of the layer has a count (None: its build did not fit the board)."""
    return all(s.label in counts for s in layer.variants)


Measured = dict[str, dict[str, dict[str, int | None]]]   # by layer key, COUNTS and CODE: each by variant label


def untuned_variants(layers: list[Layer], untuned: RunResult) -> dict[str, Variant]:
    """By layer key, the variant its layer took in the untuned build: its default, or the one the compiler chose for
    the board (compiler.code_fitting_tuning, cache_fitting_tuning)."""
    took = {t.index: t.variant for t in untuned.layers or []}
    return {layer.key: next((v for v in layer.variants if v.label == took.get(layer.op.index)), layer.variants[0])
            for layer in layers}


def _measure(model: Graph, target: RunOptions, layers: list[Layer], untuned: RunResult, cache: Path,
             known: Measured) -> tuple[Measured, int]:
    """Estimated cycles and own code of each layer key by variant label (None: the build did not fit): those of
    the variant each took in the untuned build from it, those `known` from an interrupted run, the others from the
    candidate builds. They go to the tuning file after every build (the untuned build's variant stays the layer's
    until all are measured), so that an interrupted tune resumes where it stopped. Also returns the
    number of candidate builds run."""
    measured: Measured = {layer.key: {what: dict(known.get(layer.key, {}).get(what, {})) for what in (COUNTS, CODE)}
                          for layer in layers}
    took = untuned_variants(layers, untuned)
    _record(measured, layers, took, untuned)
    _save_counts(cache, target, layers, measured, took)
    candidates, builds = candidate_tunings(layers, {key: m[COUNTS] for key, m in measured.items()}), 0
    while candidates:
        tuning = candidates.pop(0)
        builds += 1
        ui.info(f"[{builds}/{builds + len(candidates)}] {tuning.source.removeprefix('schedule ')} on "
                f"{len(tuning.variants)} layer shape(s)")
        try:
            result = _run(model, target, tuning, untuned)
        except (ModelError, MismatchError) as err:   # too big for the board (the untuned build fits), or wrong
            if _split(tuning):
                ui.info(f"  {err.message}: one build per schedule instead")
                candidates[:0] = _split(tuning)
                continue
            if isinstance(err, MismatchError):
                raise
            ui.info(f"  left out: {err.message}")
            result = None
        _record(measured, layers, tuning.variants, result)
        _save_counts(cache, target, layers, measured, took)
    return measured, builds


def _record(measured: Measured, layers: list[Layer], variants: dict[str, Variant], result: RunResult | None) -> None:
    """Into `measured`: the cycles and own code of the layers a build ran in `variants` (None: it did not fit)."""
    counts, code = (_counts(result), _code(result)) if result is not None else ({}, {})
    for layer in layers:
        if layer.key in variants:
            label = variants[layer.key].label
            measured[layer.key][COUNTS][label] = counts.get(layer.op.index)
            measured[layer.key][CODE][label] = code.get(layer.op.index)


def _provenance(target: RunOptions) -> dict[str, str]:
    """What a tuning file's entry says of how it was measured, besides its board (the file's key)."""
    on = emulator_of(target)
    return {"mtk_version": __version__, **({"emulated_on": on} if on else {})}


def _save_counts(cache: Path, target: RunOptions, layers: list[Layer], measured: Measured,
                 schedules: dict[str, Variant]) -> None:
    if layers:
        write_entries(cache, measured_board(target), {
            layer.key: {**measured[layer.key], **_provenance(target), "schedule": schedules[layer.key].to_json()}
            for layer in layers})


def _measurable_layers(layers: list[Layer], untuned: RunResult) -> dict[str, list[Layer]]:
    """The layers by key, first one whose count is its own: not in a tiled stage (codegen/tiling.py), whose
    count its first op reports for the whole stage. Keys with no such layer keep their default."""
    tiled = {t.index for t in untuned.layers or [] if t.tiled}
    by_key: dict[str, list[Layer]] = {}
    for layer in sorted(layers, key=lambda layer: layer.op.index in tiled):
        by_key.setdefault(layer.key, []).append(layer)
    in_stages = [key for key, same in by_key.items() if same[0].op.index in tiled]
    if in_stages:
        ui.info(f"{len(in_stages)} layer shape(s) left at their default: they run only in tiled stages, whose "
                "cycles are counted for the whole stage")
    return {key: same for key, same in by_key.items() if key not in in_stages}


def tune_model(model: Path, board: Board, cache: Path, calib: str | None = None,
               flash_per_instruction: float = 1.0, emulate: bool = False) -> TuneResult:
    """Each layer's variant for `board` (with `emulate`: a physical board, its cycles estimated on its core's QEMU
    board: tune_target), measured or read from the tuning file `cache`'s entries for that board, chosen and
    written back to them."""
    target = tune_target(board, emulate)
    if not cache.parent.is_dir():
        raise MtkError(f"cannot write the tuning file {cache}: folder {cache.parent} does not exist")
    if not flash_per_instruction >= 0:
        raise MtkError(f"--flash-per-instruction {flash_per_instruction}: expected bytes ≥ 0 (inf: no limit)")
    entries = read_entries(cache).get(measured_board(target), {}) if cache.exists() else {}
    with tempfile.TemporaryDirectory(prefix="mtk-tune-") as tmp:
        graph = int8_model(read_model(model), calib, Path(tmp))
        untuned = _run(graph, target, None, None)
        by_key = _measurable_layers(tunable_layers(prepare_ops(graph, board.cpu)), untuned)
        # files of instructions: measured again
        known = {key: {what: entry.get(what, {}) for what in (COUNTS, CODE)} for key, entry in entries.items()}
        todo = [layers[0] for key, layers in by_key.items()
                if not is_measured(layers[0], known.get(key, {}).get(COUNTS, {}))]
        ui.info(f"{len(by_key)} layer shapes to tune for {measured_board(target)} ({board.cpu.name}): "
                f"{len(by_key) - len(todo)} in {cache}, "
                + (f"{len(todo)} to measure" if todo else "nothing to measure"))
        new, builds = _measure(graph, target, todo, untuned, cache, known)
        measured = {key: {**m, **_provenance(target)} for key, m in new.items()}
        choices: list[LayerChoice] = []
        chosen_entries: dict[str, dict] = {}
        for key, layers in by_key.items():
            entry = measured.get(key) or entries[key]
            code = entry.get(CODE, {})
            variant, passed_over = choose(layers[0], entry[COUNTS], 0, flash_per_instruction, code=code)
            extra = layers[0].extra_flash(code)
            chosen_entries[key] = {**entry, "schedule": variant.to_json(), "extra_flash_bytes": extra,
                                   "flash_per_instruction": _json_limit(flash_per_instruction)}
            choices.append(LayerChoice(key, sorted(layer.op.index for layer in layers), entry[COUNTS], code, extra,
                                       variant, passed_over, key not in measured))
        changed = {key: entry for key, entry in chosen_entries.items() if entries.get(key) != entry}
        if changed:
            write_entries(cache, measured_board(target), changed)
        took = untuned_variants([layers[0] for layers in by_key.values()], untuned)
        if all(c.variant == took[c.key] for c in choices):
            tuned = untuned
        else:
            ui.info("building with the chosen schedules")
            tuning = Tuning({c.key: c.variant for c in choices}, str(cache))
            tuned = _run(graph, target, tuning, untuned)
    return TuneResult(graph.source.name, target, cache, flash_per_instruction, choices, builds, untuned, tuned)
