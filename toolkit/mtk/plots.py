"""`mtk bench --plot`: one PNG of the results (matplotlib, Agg backend, no display needed).

  row 1   per inference: one panel per model, a bar per board on a linear axis from 0, values on the bars
  row 2   flash and RAM used (KB, linear, scaled to the bars), each bar marked at its board's limit; a limit
          far above the bars is named at the top of the bar's slot instead ("limit 4,096 ↑")
  then    with --profile, per model: each layer's share of the instructions (or cycles) and its
          MACs per instruction, layer by layer as the firmware ran them, one colour per board
The boards' legend stands outside the panels, where it covers no bar and no mark.

`mtk compile --plot-memory`: the arena's live bytes at each op step (stacked by RAM region on a board
with several), the untiled plan's and any other curves, on an axis scaled to them and to the --max-ram
cap; the arena, the cap, the board's room for the arena and each region's as labelled lines, a room far
above the data (the AN547's 480 KB of DTCM under a 50 KB arena) named at the top edge instead.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Callable, Sequence

from matplotlib import rc_context
from matplotlib.axes import Axes
from matplotlib.figure import Figure   # the object API: no pyplot state, no GUI backend
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter

from .compiled import CompiledModel, bytes_by_region
from .fsutil import atomic_output_file
from .runresult import LayerTime, RunResult

ROW_HEIGHT = 4.2     # inches per row of panels
DPI = 100
OFF_SCALE = 3.0      # a limit more than this times the data's top is named, not drawn to scale
HEADROOM = 1.25      # the y axis reaches this times the highest bar, line or curve shown
# Names from outside (model files, boards, places) are shown as they are: `$...$` is no mathtext.
PLAIN_TEXT = partial(rc_context, {"text.parse_math": False})


def _short(value: float) -> str:
    for limit, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= limit:
            return f"{value / limit:.3g}{suffix}"
    return f"{value:.3g}"


def _unit(results: list[RunResult]) -> str:
    return " / ".join(sorted({r.unit for r in results}))


def _slot(index: int, count: int) -> float:
    """The x offset of bar `index` of `count` in a group of width 0.8 centred on its tick."""
    return (index - (count - 1) / 2) * 0.8 / count


def _legend_outside(ax: Axes, title: str | None = None) -> None:
    ax.legend(title=title, fontsize=8, title_fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0),
              borderaxespad=0.0)


def _per_inference_panel(ax: Axes, model: str, boards: list[str], colours: dict[str, str],
                         by_pair: dict[tuple[str, str], RunResult], failed: Sequence[tuple[str, str]]) -> None:
    """One model: a bar per board (its median count), linear from 0, the value on the bar."""
    ran = [(k, by_pair[model, board]) for k, board in enumerate(boards) if (model, board) in by_pair]
    bars = ax.bar([k for k, _ in ran], [r.per_inference.median for _, r in ran], 0.7,
                  color=[colours[r.target_name] for _, r in ran])
    ax.bar_label(bars, [_short(r.per_inference.median) for _, r in ran], fontsize=8, padding=2)
    for k, board in enumerate(boards):
        if (model, board) in failed:
            ax.text(k, 0.03, f"{board}: failed", transform=ax.get_xaxis_transform(), rotation=90, ha="center",
                    va="bottom", fontsize=8, color=colours[board])
    ax.set_xticks(range(len(boards)), [""] * len(boards))
    ax.set_xlim(-0.6, len(boards) - 0.4)
    ax.set_ylim(0, HEADROOM * max((r.per_inference.median for _, r in ran), default=1))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: _short(v)))
    ax.set_title(model, fontsize=9)
    ax.grid(axis="y", alpha=0.3)


def _grouped_bars(ax: Axes, models: list[str], boards: list[str], colours: dict[str, str],
                  value: Callable[[RunResult], float], label: Callable[[RunResult], str],
                  by_pair: dict[tuple[str, str], RunResult]) -> list[tuple[object, RunResult]]:
    """Bars per model (groups on the x axis), one per board that ran it, labelled on top; (bar, result)s."""
    drawn = []
    for b, board in enumerate(boards):
        pairs = [(m, by_pair[model, board]) for m, model in enumerate(models) if (model, board) in by_pair]
        if not pairs:
            continue
        bars = ax.bar([m + _slot(b, len(boards)) for m, _ in pairs], [value(r) for _, r in pairs],
                      0.8 / len(boards), color=colours[board])
        ax.bar_label(bars, [label(r) for _, r in pairs], fontsize=7, padding=2,
                     rotation=90 if len(boards) * len(models) > 8 else 0)
        drawn += list(zip(bars, [r for _, r in pairs]))
    ax.set_xticks(range(len(models)), models, fontsize=8)
    ax.set_xlim(-0.5, len(models) - 0.5)   # every group's slots, those of pairs that failed too
    return drawn


def _limit_marks(ax: Axes, marks: list[tuple[object, str, float]], top_of_bars: float, unit: str) -> None:
    """Each bar's board limit (bar, board, limit): a black line across the bar labelled with its value, or,
    when far above the bars, named in one note at the top; the axis scaled to the bars and the lines."""
    drawn = [limit for _, _, limit in marks if limit <= OFF_SCALE * top_of_bars]
    ax.set_ylim(0, HEADROOM * max([top_of_bars, *drawn]))
    above: dict[float, list[str]] = {}   # limit: the boards whose limit it is
    for bar, board, limit in marks:
        x0, x1 = bar.get_x(), bar.get_x() + bar.get_width()
        if limit in drawn:
            ax.hlines(limit, x0, x1, colors="black", linewidth=2.5)
            ax.text((x0 + x1) / 2, limit, f"limit {limit:,.0f}", ha="center", va="bottom", fontsize=6)
        elif board not in above.setdefault(limit, []):
            above[limit].append(board)
    if above:
        note = ax.text(0.01, 0.985, "\n".join([f"↑ off the scale, the boards' limits:"] + [
                       f"  {limit:,.0f} {unit}: {', '.join(boards)}" for limit, boards in sorted(above.items())]),
                       transform=ax.transAxes, ha="left", va="top", fontsize=7,
                       bbox={"facecolor": "white", "edgecolor": "gray", "alpha": 0.9, "pad": 2})
        note.set_in_layout(False)


def _layer_rows(results: list[RunResult]) -> list[LayerTime]:
    """The layers that ran any code on any board (aliasing reshapes take none), in execution order."""
    busy = {layer.index for r in results for layer in r.layers or [] if layer.units}
    first = next(r for r in results if r.layers)
    return [layer for layer in first.layers if layer.index in busy]


def _layer_panels(share_ax: Axes, rate_ax: Axes, model: str, results: list[RunResult],
                  colours: dict[str, str]) -> None:
    layers = _layer_rows(results)
    width = 0.8 / len(results)
    unit = results[0].unit[:-1]
    for k, r in enumerate(results):
        by_index = {layer.index: layer for layer in r.layers or []}
        total = sum(layer.units for layer in r.layers or []) or 1
        xs = [i + (k - (len(results) - 1) / 2) * width for i in range(len(layers))]
        ran = [by_index.get(layer.index) for layer in layers]
        share_ax.bar(xs, [100 * t.units / total if t else 0 for t in ran], width, color=colours[r.target_name],
                     label=r.target_name)
        rate_ax.bar(xs, [t.macs / t.units if t and t.units else 0 for t in ran], width,
                    color=colours[r.target_name], label=r.target_name)
    names = [f"{layer.index} {layer.type.lower()}" for layer in layers]
    for ax in (share_ax, rate_ax):
        ax.set_xticks(range(len(layers)), names, rotation=60, ha="right", fontsize=7)
        ax.grid(axis="y", alpha=0.3)
    share_ax.set_ylabel(f"% of the {results[0].unit}")
    share_ax.set_title(f"{model}: each layer's share of the {_unit(results)}", fontsize=10)
    rate_ax.set_ylabel(f"MACs per {unit}")
    rate_ax.set_title(f"{model}: MACs per {unit}, per layer", fontsize=10)


def bench_figure(results: list[RunResult], failed: Sequence[tuple[str, str]] = ()) -> Figure:
    """`failed`: (model, board or place) pairs that did not run, marked where their bars would be."""
    models = list(dict.fromkeys([r.model for r in results] + [model for model, _ in failed]))
    boards = list(dict.fromkeys([r.target_name for r in results] + [board for _, board in failed]))
    palette = ["tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown", "tab:pink",
               "tab:olive", "tab:cyan", "tab:gray"]
    colours = {board: palette[k % len(palette)] for k, board in enumerate(boards)}
    by_pair = {(r.model, r.target_name): r for r in results}
    profiled = [m for m in models if any(r.layers for r in results if r.model == m)]
    most_layers = max((len(_layer_rows([r for r in results if r.model == m])) for m in profiled), default=0)
    width = max(10.0, (0.5 + 0.45 * len(boards)) * len(models) + 3,
                2 * most_layers * (0.2 + 0.1 * len(boards)) + 2)   # inches
    fig = Figure(figsize=(width, ROW_HEIGHT * (2 + len(profiled))), dpi=DPI, layout="constrained")
    grid = fig.add_gridspec(2 + len(profiled), 2)

    panels = grid[0, :].subgridspec(1, len(models))
    for k, model in enumerate(models):
        ax = fig.add_subplot(panels[0, k])
        _per_inference_panel(ax, model, boards, colours, by_pair, failed)
        if k == 0:
            ax.set_ylabel(f"{_unit(results)} per inference (median)", fontsize=9)
    fig.axes[-1].legend([Patch(color=colours[b]) for b in boards], boards, title="board", fontsize=8,
                        title_fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
    fig.suptitle("per inference, linear from 0 (QEMU: instructions, exact under -icount; boards: cycles)",
                 fontsize=10)

    for column, (kind, used, limit) in enumerate((("flash", lambda r: r.sizes.flash_bytes, lambda r: r.board.flash_bytes),
                                                  ("RAM", lambda r: r.sizes.ram_bytes, lambda r: r.board.ram_bytes))):
        ax = fig.add_subplot(grid[1, column])
        drawn = _grouped_bars(ax, models, boards, colours, lambda r: used(r) / 1024,
                              lambda r: f"{used(r) / 1024:,.0f}", by_pair)
        _limit_marks(ax, [(bar, r.target_name, limit(r) / 1024) for bar, r in drawn],
                     max((used(r) / 1024 for _, r in drawn), default=1), "KB")
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))
        ax.set_ylabel(f"{kind}, KB")
        ax.set_title(f"{kind} used, against the board's limit", fontsize=9)
        ax.grid(axis="y", alpha=0.3)

    for row, model in enumerate(profiled, start=2):
        _layer_panels(fig.add_subplot(grid[row, 0]), fig.add_subplot(grid[row, 1]), model,
                      [r for r in results if r.model == model and r.layers], colours)
    return fig


def write_bench_png(results: list[RunResult], path: Path, failed: Sequence[tuple[str, str]] = ()) -> None:
    with PLAIN_TEXT():
        fig = bench_figure(results, failed)
    with atomic_output_file(Path(path)) as tmp:
        fig.savefig(tmp, format="png", dpi=DPI)


REGION_COLOURS = ["tab:blue", "tab:orange", "tab:green", "tab:purple"]


def _limit_lines(ax: Axes, limits: list[tuple[str, float, dict]], data_top: float) -> float:
    """Horizontal lines, each labelled on the line itself (right end, or the left when the line below's
    label is too close); a limit above OFF_SCALE times `data_top` is named at the top edge instead. The
    top of the axis that shows them."""
    shown = sorted((limit for limit in limits if limit[1] <= OFF_SCALE * data_top), key=lambda limit: limit[1])
    top = HEADROOM * max([data_top, *(value for _, value, _ in shown)])
    right_at = left_at = -top
    for label, value, style in shown:
        ax.axhline(value, **style)
        near = value - right_at < 0.06 * top
        if near and value - left_at >= 0.06 * top:
            x, ha, left_at = 0.005, "left", value
        else:
            x, ha, right_at = 0.995, "right", value
        ax.text(x, value, label, transform=ax.get_yaxis_transform(), ha=ha, va="bottom", fontsize=7,
                color=style["color"], bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.8, "pad": 1})
    above = [limit for limit in limits if limit not in shown]
    for k, (label, _, style) in enumerate(above):
        ax.text(0.995, 0.985 - 0.06 * k, f"↑ {label}: off the scale", transform=ax.transAxes, ha="right", va="top",
                fontsize=7, color=style["color"],
                bbox={"facecolor": "white", "edgecolor": style["color"], "alpha": 0.9, "pad": 2})
    return top


def memory_figure(compiled: CompiledModel, curves: dict[str, Sequence[int]] | None = None,
                  max_ram: int | None = None) -> Figure:
    """Live arena bytes per op step as filled steps (one band per RAM region); `curves`: more named
    live-bytes lines over the same steps (the untiled plan's); the arena's size, the `max_ram` cap, the
    board's room and each region's as labelled lines, the axis scaled to the data and the cap."""
    mem = compiled.memory
    steps = list(range(len(mem.live_bytes)))
    fig = Figure(figsize=(max(9.0, 0.18 * len(steps) + 3), ROW_HEIGHT * 1.3), dpi=DPI, layout="constrained")
    ax = fig.add_subplot()
    bands = [(r.name, r.live_bytes) for r in mem.regions] or [("arena", mem.live_bytes)]
    base = [0] * len(steps)
    for k, (name, live) in enumerate(bands):
        top = [b + v for b, v in zip(base, live)]
        ax.fill_between(steps, base, top, step="mid", color=REGION_COLOURS[k % len(REGION_COLOURS)], alpha=0.6,
                        label=f"live in {name} (peak {max(live, default=0):,} B)" if mem.regions
                        else f"live bytes (peak {max(live, default=0):,} B)")
        base = top
    for name, live in (curves or {}).items():
        ax.step(steps, live, where="mid", linewidth=1.5, label=f"{name} (peak {max(live, default=0):,} B)")
    limits = [(f"arena {mem.arena_bytes:,} B", mem.arena_bytes, {"color": "black", "linestyle": ":", "linewidth": 1})]
    if max_ram is not None:
        limits.append((f"--max-ram {max_ram:,} B", max_ram, {"color": "tab:purple", "linestyle": "-.",
                                                             "linewidth": 1.5}))
    if mem.arena_limit_bytes is not None:
        limits.append((f"{compiled.target.board or 'the board'}'s room for the arena {mem.arena_limit_bytes:,} B",
                       mem.arena_limit_bytes, {"color": "red", "linewidth": 1.5}))
    limits += [(f"{r.name}'s room {r.limit_bytes:,} B", r.limit_bytes,
                {"color": REGION_COLOURS[k % len(REGION_COLOURS)], "linestyle": "--", "linewidth": 1})
               for k, r in enumerate(mem.regions)]
    data_top = max([*base, *(v for live in (curves or {}).values() for v in live), max_ram or 0, 1])
    ax.set_ylim(0, _limit_lines(ax, limits, data_top))
    types = [op.type.lower() for op in compiled.ops]
    every = max(1, len(steps) // 60)
    ax.set_xticks(steps[::every], [f"{s} {types[s]}" if s < len(types) else str(s) for s in steps[::every]],
                  rotation=60, ha="right", fontsize=7)
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: _short(v)))
    ax.set_ylabel("bytes")
    ax.set_xlabel("op step")
    in_ram = f" (beside the constants copied into RAM: {bytes_by_region(mem.constants_in_ram)})" \
        if mem.constants_in_ram else ""
    ax.set_title(f"{compiled.model}: arena bytes live at each op{in_ram}", fontsize=10)
    ax.grid(axis="y", alpha=0.3)
    _legend_outside(ax)
    return fig


def write_memory_png(compiled: CompiledModel, path: Path, curves: dict[str, Sequence[int]] | None = None,
                     max_ram: int | None = None) -> None:
    with PLAIN_TEXT():
        fig = memory_figure(compiled, curves, max_ram)
    with atomic_output_file(Path(path)) as tmp:
        fig.savefig(tmp, format="png", dpi=DPI)
