"""Per-layer figures (`mtk run --profile`, `mtk bench --profile`): the plain build's totals, and the
per-layer counts of a profiling build (its counters take instructions and flash of their own) beside them."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Callable

from .. import ui

if TYPE_CHECKING:
    from ..runresult import RunResult


def run_profiled(run: Callable[[bool], RunResult]) -> RunResult:
    """`run(profile)` twice: the plain build's result, carrying the profiling build's per-layer counts."""
    plain, profiled = run(False), run(True)
    estimate = plain.estimate and profiled.estimate and \
        replace(plain.estimate, layers=profiled.estimate.layers, sample_layers=profiled.estimate.sample_layers,
                layer_memory_waits=profiled.estimate.layer_memory_waits)
    return replace(plain, layers=profiled.layers, sample_layers=profiled.sample_layers, profiling=profiled,
                   estimate=estimate or plain.estimate)


def layer_heading(result: RunResult) -> str:
    """Where the per-layer counts come from, and how the profiling build differs from the plain one."""
    profiled = result.profiling or result
    own = (f"{profiled.per_inference.median:,} {result.unit} an inference, flash {profiled.sizes.flash_bytes:,} B")
    if result.profiling is None:
        return f"per layer, from the profiling build ({own}: the totals above are its own)"
    return (f"per layer, from a profiling build ({own}; the plain build above: "
            f"{result.per_inference.median:,}, {result.sizes.flash_bytes:,} B)")


def layer_table(result: RunResult) -> str:
    """One row per layer as the firmware ran them: its MACs, its count, MACs per unit and share."""
    unit = result.unit[:-1]
    total = sum(layer.units for layer in result.layers or []) or 1
    estimated = result.estimate.layers if result.estimate and result.estimate.layers else None
    rows = [[layer.index, layer.type, f"{layer.macs:,}", f"{layer.units:,}",
             f"{layer.macs / layer.units:.3f}" if layer.units and layer.macs else "-", f"{100 * layer.units / total:.1f}"]
            + ([f"{estimated[layer.index]:,}" if layer.index in estimated else "-"] if estimated else [])
            for layer in result.layers or []]
    macs = sum(layer.macs for layer in result.layers or [])
    rows.append(["", "total", f"{macs:,}", f"{total:,}", f"{macs / total:.3f}", "100.0"]
                + ([f"{sum(estimated.values()):,}"] if estimated else []))
    return ui.table(["layer", "op", "MACs", result.unit, f"MACs/{unit}", "%"] + (["est. cycles"] if estimated else []),
                    rows)
