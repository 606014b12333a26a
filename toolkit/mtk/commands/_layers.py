"""The per-layer table of a profiling run (`mtk run --profile`, `mtk bench --profile`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import ui

if TYPE_CHECKING:
    from ..pipeline import RunResult


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
