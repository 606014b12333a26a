"""`mtk bench --plot`: one PNG of the results (matplotlib, Agg backend, no display needed).

  row 1   per inference, grouped by model, one colour per board, log axis, values on the bars
  row 2   flash and RAM used, in KB on a log axis, each bar marked at its board's limit
  then    with --profile, per model: each layer's share of the instructions (or cycles) and its
          MACs per instruction, layer by layer as the firmware ran them, one colour per board

`mtk compile --plot-memory`: the arena's live bytes at each op step (stacked by RAM region on a board
with several), against the arena's size, the board's room for it and each region's.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Callable, Sequence

from matplotlib import rc_context
from matplotlib.axes import Axes
from matplotlib.figure import Figure   # the object API: no pyplot state, no GUI backend
from matplotlib.patches import Rectangle
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from .compiled import CompiledModel
from .fsutil import atomic_output_file
from .pipeline import LayerTime, RunResult

ROW_HEIGHT = 4.2     # inches per row of panels
DPI = 100
# Names from outside (model files, boards, places) are shown as they are: `$...$` is no mathtext.
PLAIN_TEXT = partial(rc_context, {"text.parse_math": False})


def _short(value: float) -> str:
    for limit, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= limit:
            return f"{value / limit:.3g}{suffix}"
    return f"{value:.3g}"


def _unit(results: list[RunResult]) -> str:
    return " / ".join(sorted({r.unit for r in results}))


def _grouped_bars(ax: Axes, models: list[str], boards: list[str], colours: dict[str, str],
                  value: Callable[[RunResult], float], label: Callable[[RunResult], str],
                  by_pair: dict[tuple[str, str], RunResult]) -> None:
    """Bars per model (groups on the x axis), one per board that ran it, labelled on top."""
    width = 0.8 / len(boards)
    for b, board in enumerate(boards):
        pairs = [(m, by_pair[model, board]) for m, model in enumerate(models) if (model, board) in by_pair]
        if not pairs:
            continue
        xs = [m + (b - (len(boards) - 1) / 2) * width for m, _ in pairs]
        bars = ax.bar(xs, [value(r) for _, r in pairs], width, color=colours[board], label=board)
        ax.bar_label(bars, [label(r) for _, r in pairs], fontsize=7, padding=2,
                     rotation=90 if len(boards) > 3 else 0)
    ax.set_xticks(range(len(models)), models, fontsize=8)
    ax.set_xlim(-0.5, len(models) - 0.5)   # every group's slots, those of pairs that failed too


def _bar_results(models: list[str], boards: list[str], by_pair: dict[tuple[str, str], RunResult]) -> list[RunResult]:
    """The results in the order _grouped_bars draws their bars."""
    return [by_pair[model, board] for board in boards for model in models if (model, board) in by_pair]


def _limit_marks(ax: Axes, marks: list[tuple[Rectangle, float]]) -> None:
    """A black line across each bar at the board's limit."""
    for k, (bar, limit) in enumerate(marks):
        ax.hlines(limit, bar.get_x(), bar.get_x() + bar.get_width(), colors="black", linewidth=2.5,
                  label="board's limit" if k == 0 else None)
    ax.legend(fontsize=7, loc="best")


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
    share_ax.legend(fontsize=7)


def _mark_failures(ax: Axes, models: list[str], boards: list[str], colours: dict[str, str],
                   failed: Sequence[tuple[str, str]]) -> None:
    """"<board>: failed" where the bar of a pair that did not run would be."""
    width = 0.8 / len(boards)
    for model, board in failed:
        x = models.index(model) + (boards.index(board) - (len(boards) - 1) / 2) * width
        ax.text(x, 0.03, f"{board}: failed", transform=ax.get_xaxis_transform(), rotation=90, ha="center", va="bottom",
                fontsize=8, color=colours[board])


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
    width = max(9.0, 1.2 * len(results) + 4, 2 * most_layers * (0.2 + 0.1 * len(boards)) + 2)   # inches
    fig = Figure(figsize=(width, ROW_HEIGHT * (2 + len(profiled))), dpi=DPI)
    grid = fig.add_gridspec(2 + len(profiled), 2)

    ax = fig.add_subplot(grid[0, :])
    _grouped_bars(ax, models, boards, colours, lambda r: r.per_inference.median,
                  lambda r: _short(r.per_inference.median), by_pair)
    _mark_failures(ax, models, boards, colours, failed)
    ax.set_yscale("log")
    ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: _short(v)))
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_ylabel(f"{_unit(results)} per inference (median)")
    ax.set_title("per inference, log scale (QEMU: instructions, exact under -icount; boards: cycles)", fontsize=10)
    ax.margins(y=0.25)
    ax.legend(title="board", fontsize=8)
    ax.grid(axis="y", which="both", alpha=0.3)

    for column, (kind, used, limit) in enumerate((("flash", lambda r: r.sizes.flash_bytes, lambda r: r.board.flash_bytes),
                                                  ("RAM", lambda r: r.sizes.ram_bytes, lambda r: r.board.ram_bytes))):
        ax = fig.add_subplot(grid[1, column])
        _grouped_bars(ax, models, boards, colours, lambda r: used(r) / 1024, lambda r: f"{used(r) / 1024:,.0f} KB",
                      by_pair)
        _limit_marks(ax, [(bar, limit(r) / 1024) for bar, r in zip(ax.patches, _bar_results(models, boards, by_pair))])
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}" if v >= 1 else f"{v:g}"))
        ax.yaxis.set_minor_formatter(NullFormatter())
        ax.set_ylabel(f"{kind}, KB (log scale)")
        ax.set_title(f"{kind} used (bars) against the board's (black marks)", fontsize=10)
        ax.margins(y=0.3)
        ax.grid(axis="y", which="major", alpha=0.3)

    for row, model in enumerate(profiled, start=2):
        _layer_panels(fig.add_subplot(grid[row, 0]), fig.add_subplot(grid[row, 1]), model,
                      [r for r in results if r.model == model and r.layers], colours)
    fig.tight_layout()
    return fig


def write_bench_png(results: list[RunResult], path: Path, failed: Sequence[tuple[str, str]] = ()) -> None:
    with PLAIN_TEXT():
        fig = bench_figure(results, failed)
    with atomic_output_file(Path(path)) as tmp:
        fig.savefig(tmp, format="png", dpi=DPI)


REGION_COLOURS = ["tab:blue", "tab:orange", "tab:green", "tab:purple"]


def memory_figure(compiled: CompiledModel, curves: dict[str, Sequence[int]] | None = None) -> Figure:
    """Live arena bytes per op step as filled steps (one band per RAM region), the arena's size and the
    board's room as lines; `curves`: more named live-bytes lines over the same steps (e.g. another
    variant of the same model)."""
    mem = compiled.memory
    steps = list(range(len(mem.live_bytes)))
    fig = Figure(figsize=(max(9.0, 0.18 * len(steps) + 3), ROW_HEIGHT * 1.3), dpi=DPI)
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
    ax.axhline(mem.arena_bytes, color="black", linestyle=":", linewidth=1, label=f"arena {mem.arena_bytes:,} B")
    if mem.arena_limit_bytes is not None:
        ax.axhline(mem.arena_limit_bytes, color="red", linewidth=1.5,
                   label=f"{compiled.target.board}'s room for the arena {mem.arena_limit_bytes:,} B")
    for k, r in enumerate(mem.regions):
        ax.axhline(r.limit_bytes, color=REGION_COLOURS[k % len(REGION_COLOURS)], linestyle="--", linewidth=1,
                   label=f"{r.name}'s room {r.limit_bytes:,} B")
    types = [op.type.lower() for op in compiled.ops]
    every = max(1, len(steps) // 60)
    ax.set_xticks(steps[::every], [f"{s} {types[s]}" if s < len(types) else str(s) for s in steps[::every]],
                  rotation=60, ha="right", fontsize=7)
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: _short(v)))
    ax.set_ylabel("bytes")
    ax.set_xlabel("op step")
    ax.set_title(f"{compiled.model}: arena bytes live at each op", fontsize=10)
    ax.set_ylim(0, 1.15 * max([mem.arena_bytes, *(r.limit_bytes for r in mem.regions),
                               *([] if mem.arena_limit_bytes is None or mem.arena_limit_bytes > 4 * mem.arena_bytes
                                 else [mem.arena_limit_bytes])], default=1))
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=7, loc="upper right")
    fig.tight_layout()
    return fig


def write_memory_png(compiled: CompiledModel, path: Path, curves: dict[str, Sequence[int]] | None = None) -> None:
    with PLAIN_TEXT():
        fig = memory_figure(compiled, curves)
    with atomic_output_file(Path(path)) as tmp:
        fig.savefig(tmp, format="png", dpi=DPI)
