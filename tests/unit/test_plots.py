"""`mtk bench --plot` and `--profile`: the chart's panels and what they show, the PNG
opened and looked at (size, not blank, every board's colour), and the per-layer table.

Results are made up here (the charts only read them); test_run.py runs bench --plot in QEMU."""

from __future__ import annotations

import numpy as np
import pytest
from matplotlib.colors import to_rgb
from PIL import Image

from mtk.boards import get_board
from mtk.commands._layers import layer_table
from mtk.elfsize import ElfSizes
from mtk.runresult import LayerTime, RunResult
from mtk.plots import DPI, _short, bench_figure, write_bench_png
from mtk.transport.protocol import CycleStats

from checkout import FAKE

LAYERS = {   # model: (op type, MACs) per layer, a reshape that runs no code among them
    "kws.tflite": [("CONV_2D", 1_000_000), ("DEPTHWISE_CONV_2D", 90_000), ("RESHAPE", 0), ("FULLY_CONNECTED", 768)],
    "ad.tflite": [("FULLY_CONNECTED", 81_920), ("FULLY_CONNECTED", 16_384), ("FULLY_CONNECTED", 81_920)],
}
BOARDS = {"mps2/an386": 1.0, "mps2/an500": 0.8}   # board: instructions relative to the M4


def made_up_result(model: str, board: str, profile: bool = True) -> RunResult:
    layers = [LayerTime(k, op, 0 if op == "RESHAPE" else int(2.2 * macs * BOARDS[board]) + 500 * k, macs)
              for k, (op, macs) in enumerate(LAYERS[model])]
    total = sum(layer.units for layer in layers) + 3_000
    macs = sum(layer.macs for layer in layers)
    return RunResult(get_board(board), model, "instructions", CycleStats(1, total, total, total), macs,
                     arena_bytes=4_096, constant_bytes=macs // 10, sizes=ElfSizes(20_000 + macs // 10, 400, 9_000),
                     inputs=[], outputs=[], int8_model=b"", layers=layers if profile else None)


@pytest.fixture
def results() -> list[RunResult]:
    return [made_up_result(model, board) for board in BOARDS for model in LAYERS]


def test_bench_chart_has_a_linear_panel_per_model_with_values_on_the_bars(results):
    fig = bench_figure(results)
    panels, (flash, ram), layer_axes = fig.axes[:len(LAYERS)], fig.axes[len(LAYERS):len(LAYERS) + 2], \
        fig.axes[len(LAYERS) + 2:]
    for ax, model in zip(panels, LAYERS):
        assert ax.get_title() == model and ax.get_yscale() == "linear" and ax.get_ylim()[0] == 0
        medians = [r.per_inference.median for r in results if r.model == model]
        assert [bar.get_height() for bar in ax.patches] == medians   # lengths in proportion: 2.6 M vs 10.5 M
        assert len({bar.get_facecolor()[:3] for bar in ax.patches}) == len(BOARDS)
        assert [t.get_text() for t in ax.texts] == [_short(m) for m in medians]
    legend = panels[-1].get_legend()
    assert [t.get_text() for t in legend.get_texts()] == list(BOARDS)
    for ax, kind in ((flash, "flash"), (ram, "RAM")):
        assert kind in ax.get_title() and ax.get_yscale() == "linear" and ax.get_ylim()[0] == 0
    assert len(layer_axes) == 2 * len(LAYERS)   # per model: share and MACs per instruction


def test_a_limit_near_the_bars_is_a_labelled_mark_a_far_one_a_note(results):
    """qemu_cortex_m3's 256 KB of flash is drawn across its bar; the AN386's 4 MB would flatten the bars."""
    near = made_up_result("kws.tflite", "mps2/an386", profile=False)
    near.board = get_board("qemu_cortex_m3")
    near.sizes = ElfSizes(200_000, 400, 40_000)
    flash = bench_figure([results[0], near]).axes[1]
    marks = [segment for collection in flash.collections for segment in collection.get_segments()]
    assert [(y0, y1) for (_, y0), (_, y1) in marks] == [(256.0, 256.0)]
    labels = [t.get_text() for t in flash.texts]
    assert "limit 256" in labels
    note = next(text for text in labels if text.startswith("↑ off the scale"))
    assert "4,096 KB: mps2/an386" in note
    assert 256 < flash.get_ylim()[1] < 4096


def test_legends_stand_outside_the_panels(results):
    fig = bench_figure(results)
    fig.canvas.draw()
    panel = fig.axes[len(LAYERS) - 1]
    assert panel.get_legend().get_window_extent().x0 >= panel.get_window_extent().x1


def test_per_layer_panels_are_per_layer_not_per_op_type(results):
    fig = bench_figure(results)
    kws_share, kws_rate = fig.axes[4:6]   # after a panel per model, flash and RAM
    # four layers, the reshape runs no code: three bars per board, layers told apart by index
    assert [t.get_text() for t in kws_share.get_xticklabels()] == \
        ["0 conv_2d", "1 depthwise_conv_2d", "3 fully_connected"]
    m4 = [bar.get_height() for bar in kws_share.patches[:3]]
    layers = made_up_result("kws.tflite", "mps2/an386").layers
    assert m4 == pytest.approx([100 * layer.units / sum(x.units for x in layers) for x in layers
                                for layer in [x] if layer.units])
    rates = [bar.get_height() for bar in kws_rate.patches[:3]]
    assert rates == pytest.approx([x.macs / x.units for x in layers if x.units])
    ad_share = fig.axes[6]
    assert [t.get_text() for t in ad_share.get_xticklabels()] == \
        ["0 fully_connected", "1 fully_connected", "2 fully_connected"]


def test_a_pair_that_failed_is_marked_where_its_bar_would_be(results):
    fig = bench_figure(results[:3], failed=[("ad.tflite", "mps2/an500"), ("ad.tflite", "qemu_cortex_m3")])
    ad_panel = fig.axes[1]
    marks = {t.get_text(): t.get_position()[0] for t in ad_panel.texts if "failed" in t.get_text()}
    assert set(marks) == {"mps2/an500: failed", "qemu_cortex_m3: failed"}
    ad_bars = [bar.get_x() + bar.get_width() / 2 for bar in ad_panel.patches]
    assert len(ad_bars) == 1 and ad_bars[0] < marks["mps2/an500: failed"] < marks["qemu_cortex_m3: failed"]


def test_png_is_the_figure_and_shows_every_board(tmp_path, results):
    png = tmp_path / "bench.png"
    write_bench_png(results, png)
    with Image.open(png) as image:
        assert image.format == "PNG"
        pixels = np.asarray(image.convert("RGB"))
    fig = bench_figure(results)
    width, height = fig.get_size_inches() * DPI
    assert pixels.shape[:2] == (round(height), round(width))
    assert height >= 4 * 4 * DPI   # 2 rows of totals and memory, a row per profiled model
    not_white = np.any(pixels < 250, axis=2).mean()
    assert 0.05 < not_white < 0.8
    for board_colour in ("tab:blue", "tab:orange"):
        rgb = np.round(np.array(to_rgb(board_colour)) * 255)
        assert (np.abs(pixels - rgb).max(axis=2) <= 2).sum() > 500, board_colour


def test_png_without_profile_has_no_layer_rows(tmp_path):
    png = tmp_path / "bench.png"
    write_bench_png([made_up_result("ad.tflite", board, profile=False) for board in BOARDS], png)
    with Image.open(png) as image:
        assert image.size[1] < 2.5 * 4.2 * DPI


def test_layer_table_shows_macs_per_instruction_per_layer():
    result = made_up_result("kws.tflite", "mps2/an386")
    lines = layer_table(result).splitlines()
    assert lines[0].split() == ["layer", "op", "MACs", "instructions", "MACs/instruction", "%"]
    conv = lines[2].split()
    layer = result.layers[0]
    assert conv == ["0", "CONV_2D", f"{layer.macs:,}", f"{layer.units:,}", f"{layer.macs / layer.units:.3f}",
                    f"{100 * layer.units / sum(x.units for x in result.layers):.1f}"]
    assert lines[4].split()[-2:] == ["-", "0.0"]   # the reshape: no code, no rate
    assert lines[-1].split()[0] == "total" and lines[-1].split()[-1] == "100.0"


def fake_compiled_with(**memory):
    from dataclasses import replace

    from mtk.compiled import CompiledModel

    fake = CompiledModel.load(FAKE)
    return replace(fake, memory=replace(fake.memory, **memory), ops=fake.ops * 3)


def test_memory_chart_stacks_live_bytes_by_region_under_labelled_limits(tmp_path):
    """`mtk compile --plot-memory`: one band per RAM region, each limit a line labelled on the chart."""
    from mtk.compiled import RegionUse
    from mtk.plots import memory_figure, write_memory_png

    dtcm, sram = (10, 40, 30), (0, 200, 0)
    compiled = fake_compiled_with(arena_bytes=256, live_bytes=tuple(d + s for d, s in zip(dtcm, sram)),
                                  arena_limit_bytes=400, regions=(RegionUse("DTCM", 48, 60, dtcm),
                                                                   RegionUse("SRAM", 208, 300, sram)))
    ax = memory_figure(compiled, {"untiled": [300, 300, 40]}).axes[0]
    labels = ax.get_legend_handles_labels()[1]
    assert [lab.split(" (")[0] for lab in labels] == ["live in DTCM", "live in SRAM", "untiled"]
    texts = {t.get_text() for t in ax.texts}
    assert {"DTCM's room 60 B", "SRAM's room 300 B", "arena 256 B"} <= texts
    assert any("room for the arena 400 B" in text for text in texts)
    lines = sorted(line.get_ydata()[0] for line in ax.lines if len(set(line.get_ydata())) == 1)
    assert lines == [60, 256, 300, 400]
    write_memory_png(compiled, tmp_path / "m.png")
    assert Image.open(tmp_path / "m.png").size[0] >= 900


def test_memory_chart_names_the_constants_copied_into_each_region():
    from mtk.compiled import RamConstants
    from mtk.plots import memory_figure

    shares = (RamConstants("DTCM", 53_340, ((53_340, 4),)), RamConstants("SRAM0", 217_660, ((217_660, 4),)))
    compiled = fake_compiled_with(arena_bytes=256, live_bytes=(256, 256, 256), constants_in_ram=shares)
    assert memory_figure(compiled).axes[0].get_title().endswith(
        ": arena bytes live at each op (beside the constants copied into RAM: DTCM 53,340 B, SRAM0 217,660 B)")
    assert memory_figure(fake_compiled_with()).axes[0].get_title().endswith(": arena bytes live at each op")


def test_memory_chart_is_scaled_to_the_data_the_untiled_peak_and_the_cap():
    """A 480 KB DTCM over a 50 KB arena is named at the top, not drawn: the curve fills the chart."""
    from mtk.compiled import RegionUse
    from mtk.plots import memory_figure

    live = (20_000, 49_440, 30_000)
    compiled = fake_compiled_with(arena_bytes=49_440, live_bytes=live, arena_limit_bytes=2_610_166,
                                  regions=(RegionUse("DTCM", 49_440, 504_822, live),))
    ax = memory_figure(compiled, {"untiled": [20_000, 55_000, 30_000]}, max_ram=51_200).axes[0]
    assert 55_000 < ax.get_ylim()[1] < 80_000   # the untiled peak and the cap in view, the room off it
    texts = [t.get_text() for t in ax.texts]
    assert "--max-ram 51,200 B" in texts
    assert any(t.startswith("↑ DTCM's room 504,822 B") and "off the scale" in t for t in texts)
    assert any("room for the arena 2,610,166 B: off the scale" in t for t in texts)


def test_profile_shows_the_plain_builds_totals_and_the_profiling_builds_layers():
    """`--profile` runs a profiling build beside the plain one: totals and flash are the plain build's."""
    from dataclasses import replace

    from mtk.commands._layers import layer_heading, run_profiled

    plain = made_up_result("kws.tflite", "mps2/an386", profile=False)
    profiled = replace(made_up_result("kws.tflite", "mps2/an386"), per_inference=CycleStats(1, 9_999, 9_999, 9_999),
                       sizes=ElfSizes(30_000, 400, 9_000))
    result = run_profiled(lambda profile: profiled if profile else plain)
    assert result.per_inference == plain.per_inference and result.sizes == plain.sizes
    assert result.layers == profiled.layers
    heading = layer_heading(result)
    assert heading.startswith("per layer, from a profiling build (9,999 instructions an inference, flash ")
    assert f"the plain build above: {plain.per_inference.median:,}, {plain.sizes.flash_bytes:,} B" in heading
    assert result.to_json()["profiling_build"] == {"per_inference_median": 9_999,
                                                   "flash_bytes": profiled.sizes.flash_bytes}
    assert "its own" in layer_heading(profiled)   # a lab's profiling run alone says so


def test_names_with_mathtext_syntax_are_shown_as_they_are(tmp_path):
    """Model files and boards are named from outside: `$\\frac{a}$` is text, not a TeX error."""
    from dataclasses import replace

    from mtk.compiled import CompiledModel
    from mtk.plots import write_memory_png

    name = "m$\\frac{a}$_^x{$.tflite"
    results = [replace(made_up_result("kws.tflite", "mps2/an386"), model=name)]
    write_bench_png(results, tmp_path / "b.png")
    fake = CompiledModel.load(FAKE)
    write_memory_png(replace(fake, model=name), tmp_path / "m.png")
    assert Image.open(tmp_path / "b.png").size[0] > 0 and Image.open(tmp_path / "m.png").size[0] > 0
