"""`mtk tune`: per layer, the schedule that runs the fewest instructions in QEMU (exact under -icount).

Each candidate schedule is applied to every untuned layer that can take it, the model built with
per-op counters and run once (pipeline.run_model, profile=True); each layer keeps the schedule with
the fewest instructions. The counters tick every 1e9/timer_hz instructions (40 on MPS2), so counts
within a tick of the fewest are equal and the first of them in the layer's schedule order wins (the
default first): the same choices on every run. A candidate whose build does not fit the board is
left out. Every build must give the untuned build's outputs on the same inputs, bit for bit.
Layer shapes already in the tuning file are not measured again; new choices are merged into it.
The model is then built with the chosen schedules and checked again.
"""

from __future__ import annotations

import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from . import __version__, ui
from .boards import Board
from .errors import MismatchError, ModelError, MtkError
from .ops.gemm import GemmSchedule
from .pipeline import RunOptions, RunResult, int8_model, run_model
from .reader import read_model
from .tuning import Layer, Tuning, read_entries, tunable_layers, write_entries


@dataclass
class LayerChoice:
    key: str
    ops: list[int]                  # op indices with this key
    instructions: dict[str, int]    # by schedule label
    schedule: GemmSchedule
    cached: bool                    # read from the tuning file, not measured now


@dataclass
class TuneResult:
    model: str
    board: Board
    cache: Path
    layers: list[LayerChoice]
    builds_measured: int            # candidate builds run (0: everything was in the tuning file)
    untuned: RunResult
    tuned: RunResult

    def to_json(self) -> dict:
        def whole(r: RunResult) -> dict:
            return {"instructions": r.per_inference.median, "arena_bytes": r.arena_bytes,
                    "flash_bytes": r.sizes.flash_bytes, "constant_bytes": r.constant_bytes}
        return {"model": self.model, "board": self.board.name, "cpu": self.board.cpu.name, "cache": str(self.cache),
                "builds_measured": self.builds_measured, "untuned": whole(self.untuned), "tuned": whole(self.tuned),
                "bit_exact": True,
                "layers": [{"key": c.key, "ops": c.ops, "instructions": c.instructions, "cached": c.cached,
                            "schedule": asdict(c.schedule)} for c in self.layers]}


def _same_outputs(a: RunResult, b: RunResult) -> bool:
    return all(np.array_equal(x, y) for sa, sb in zip(a.outputs, b.outputs) for x, y in zip(sa, sb))


def _run(model: Path, board: Board, tuning: Tuning | None, untuned: RunResult | None) -> RunResult:
    result = run_model(model, RunOptions(board=board, runs=1, profile=True, tuning=tuning))
    if untuned is not None and not _same_outputs(result, untuned):
        raise MismatchError(f"{model.name} on {board.name}: the outputs with {tuning.source} differ from the "
                            "untuned build's (a kernel bug: please report it)")
    return result


def _counts(result: RunResult) -> dict[int, int]:
    return {layer.index: layer.units for layer in result.layers or []}


def choose(layer: Layer, instructions: dict[str, int], tick: float) -> GemmSchedule:
    """The measured schedule with the fewest instructions; within `tick` of the fewest, the first."""
    measured = [s for s in layer.schedules if s.label in instructions]
    fewest = min(instructions[s.label] for s in measured)
    return next(s for s in measured if instructions[s.label] - fewest <= tick)


def candidate_tunings(layers: list[Layer]) -> list[tuple[GemmSchedule, Tuning]]:
    """Per schedule other than a default, that schedule for every layer key that can take it."""
    tunings: dict[GemmSchedule, dict[str, GemmSchedule]] = {}
    for layer in layers:
        for schedule in layer.schedules[1:]:
            tunings.setdefault(schedule, {})[layer.key] = schedule
    return [(schedule, Tuning(keys, f"schedule {schedule.label}")) for schedule, keys in tunings.items()]


def _measure(model: Path, board: Board, layers: list[Layer], untuned: RunResult) -> dict[str, dict[str, int]]:
    """Instructions of each layer key by schedule label: the default's from the untuned build, the
    others' from one build per candidate schedule."""
    counts = _counts(untuned)
    measured = {layer.key: {layer.schedules[0].label: counts[layer.op.index]} for layer in layers}
    candidates = candidate_tunings(layers)
    for k, (schedule, tuning) in enumerate(candidates, 1):
        ui.info(f"[{k}/{len(candidates)}] {schedule.label} on {len(tuning.schedules)} layer shape(s)")
        try:
            counts = _counts(_run(model, board, tuning, untuned))
        except ModelError as err:   # the untuned build fits: this one is too big for the board
            ui.info(f"  left out: {err.message}")
            continue
        for layer in layers:
            if layer.key in tuning.schedules:
                measured[layer.key][schedule.label] = counts[layer.op.index]
    return measured


def tune_model(model: Path, board: Board, cache: Path, calib: str | None = None) -> TuneResult:
    if not board.is_qemu:
        raise MtkError(f"{board.name} is not a QEMU board: mtk tune measures instructions under QEMU's -icount",
                       hint="tune on a QEMU board with the same CPU, e.g. mps2/an386 for a Cortex-M4")
    if not cache.parent.is_dir():
        raise MtkError(f"cannot write the tuning file {cache}: folder {cache.parent} does not exist")
    entries = read_entries(cache) if cache.exists() else {}
    with tempfile.TemporaryDirectory(prefix="mtk-tune-") as tmp:
        model = int8_model(Path(model), calib, Path(tmp))
        by_key: dict[str, list[Layer]] = {}
        for layer in tunable_layers(read_model(model), board.cpu):
            by_key.setdefault(layer.key, []).append(layer)
        todo = [layers[0] for key, layers in by_key.items() if key not in entries]
        ui.info(f"{len(by_key)} layer shapes to tune on {board.cpu.name}: {len(by_key) - len(todo)} in {cache}, "
                + (f"{len(todo)} to measure" if todo else "nothing to measure"))

        untuned = _run(model, board, None, None)
        measured = _measure(model, board, todo, untuned)
        new_entries = {key: {"schedule": asdict(choose(by_key[key][0], counts, 1e9 / board.qemu.timer_hz)),
                             "instructions": counts, "board": board.name, "mtk_version": __version__}
                       for key, counts in measured.items()}
        if new_entries:
            write_entries(cache, new_entries)
        entries = {**entries, **new_entries}
        tuning = Tuning({key: GemmSchedule(**entries[key]["schedule"]) for key in by_key}, str(cache))
        choices = [LayerChoice(key, [layer.op.index for layer in layers], dict(entries[key].get("instructions", {})),
                               tuning.schedule(layers[0]), key not in new_entries) for key, layers in by_key.items()]
        if all(c.schedule == by_key[c.key][0].schedules[0] for c in choices):
            tuned = untuned
        else:
            ui.info("building with the chosen schedules")
            tuned = _run(model, board, tuning, untuned)
    return TuneResult(model.name, board, cache, choices, len(candidate_tunings(todo)), untuned, tuned)
