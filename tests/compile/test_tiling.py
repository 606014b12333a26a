"""Tiled execution (codegen/tiling.py): the row and 2-D patch call sequences give every layer
the rows (and columns) it reads where it reads them; tiled random chains and the shared models are
bit-exact with tflite-micro on the host (in QEMU: tests/target/test_tiling_qemu.py); `--max-ram` tiles only when the untiled arena is
above it (2-D patches only where bands cannot reach it) and refuses with figures when nothing fits."""

from __future__ import annotations

import json
from dataclasses import replace
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import modelgen
from checkout import SHARED_MODELS, toolkit_env
from harness import assert_outputs_match, random_samples
from mtk.boards import get_board
from mtk.codegen import tiling
from mtk.codegen.tiling import Rows, patch_sequence, recomputed_sequence, streamed_sequence
from mtk.errors import ModelError

HALO_MODES = {"cached": (True,), "recomputed": (False,), "patches": ()}   # no bands: 2-D patches only


# ---- the call sequences (no TVM) --------------------------------------------------------------

@st.composite
def row_chains(draw) -> list[Rows]:
    height = draw(st.integers(1, 40))
    chain = []
    for _ in range(draw(st.integers(1, 6))):
        extent, stride = draw(st.integers(1, 7)), draw(st.integers(1, 3))
        pad, pad_after = draw(st.integers(0, extent - 1)), draw(st.integers(0, extent - 1))
        out = (height + pad + pad_after - extent) // stride + 1
        if out < 1:
            break
        chain.append(Rows(height, out, extent, stride, pad))
        height = out
    return chain or [Rows(height, height, 1, 1, 0)]


def check_sequence(rows: list[Rows], sequence: tiling.CallSequence, once: bool) -> None:
    """Simulate the calls on buffers of global row numbers: each call finds its input rows where it
    reads them, writes within its buffer, and the last layer's output ends up whole."""
    buffers = [[None] * c for c in sequence.capacity]
    written = [0] * rows[-1].out_h
    for call in sequence.calls:
        j, buf = call.layer, buffers[call.layer]
        if call.keep_rows:
            buf[:call.keep_rows] = buf[call.keep_from:call.keep_from + call.keep_rows]
        if call.hi == call.lo:
            continue
        assert (call.in_lo, call.in_hi) == rows[j].needs(call.lo, call.hi)
        if j == 0:
            assert call.in_at == call.in_lo
        else:
            assert buffers[j - 1][call.in_at:call.in_at + call.in_hi - call.in_lo] == list(range(call.in_lo, call.in_hi))
        if j == len(rows) - 1:
            assert call.at == call.lo
            for r in range(call.lo, call.hi):
                written[r] += 1
        else:
            assert call.at + call.hi - call.lo <= len(buf)
            buf[call.at:call.at + call.hi - call.lo] = range(call.lo, call.hi)
    assert all(written) and (not once or set(written) == {1})
    if once:
        assert all(c <= r.out_h for c, r in zip(sequence.computed, rows))


@settings(max_examples=300, deadline=None)
@given(row_chains(), st.integers(1, 5))
def test_streamed_sequence_computes_each_row_once_where_it_is_read(rows, chunk):
    check_sequence(rows, streamed_sequence(rows, chunk), once=True)


@settings(max_examples=300, deadline=None)
@given(row_chains(), st.integers(1, 5))
def test_recomputed_sequence_gives_each_band_its_halo(rows, band_rows):
    check_sequence(rows, recomputed_sequence(rows, band_rows), once=False)


@settings(max_examples=200, deadline=None)
@given(row_chains(), st.data(), st.integers(1, 5), st.integers(1, 5))
def test_patch_sequence_gives_each_patch_its_rows_and_columns(rows, data, band_rows, band_cols):
    """2-D patches: every call reads the rows × columns its layer needs, which the previous layer's call
    has just written into its (one-patch) buffer; the last layer's output is written once, every pixel."""
    cols = data.draw(st.lists(st.sampled_from(rows), min_size=len(rows), max_size=len(rows)))   # any windows
    width = 40
    cols = [replace(c, in_h=0, out_h=0) for c in cols]
    for j, c in enumerate(cols):   # chain the widths through the column windows
        out = (width + 2 * c.pad - c.extent) // c.stride + 1
        if out < 1:
            c, out = Rows(width, width, 1, 1, 0), width
        cols[j] = replace(c, in_h=width, out_h=out)
        width = out
    sequence = patch_sequence(rows, cols, band_rows, band_cols)
    written, held = {}, [None] * len(rows)
    for call in sequence.calls:
        j = call.layer
        c_lo, c_hi, c_in_lo, c_in_hi = call.cols
        assert (call.in_lo, call.in_hi) == rows[j].needs(call.lo, call.hi)
        assert (c_in_lo, c_in_hi) == cols[j].needs(c_lo, c_hi)
        if j:
            assert held[j - 1] == (call.in_lo, call.in_hi, c_in_lo, c_in_hi)
        assert call.hi - call.lo <= sequence.capacity[j] and c_hi - c_lo <= sequence.widths[j]
        held[j] = (call.lo, call.hi, c_lo, c_hi)
        if j == len(rows) - 1:
            for pixel in [(r, c) for r in range(call.lo, call.hi) for c in range(c_lo, c_hi)]:
                written[pixel] = written.get(pixel, 0) + 1
    assert written == {(r, c): 1 for r in range(rows[-1].out_h) for c in range(cols[-1].out_h)}


def test_streamed_buffers_hold_about_the_next_window():
    """3×3 stride-1 layers: each buffer holds the 3 rows the next layer's window reads, not the image."""
    rows = [Rows(48, 48, 3, 1, 1)] * 4
    assert streamed_sequence(rows, 1).capacity == [3, 3, 3, 0]


@pytest.mark.parametrize("value", ["abc", "-5", "1.5K", "4G"])
def test_max_ram_must_be_a_byte_count(value, tmp_path):
    done = subprocess.run([sys.executable, "-m", "mtk", "compile", "model.tflite", "-o", str(tmp_path / "out"),
                           "--max-ram", value], capture_output=True, text=True, env=toolkit_env())
    assert done.returncode == 2 and "is not a byte count" in done.stderr


# ---- compiled (TVM), host and QEMU -------------------------------------------------------------

def tiled_compile(model: bytes, tmp_path, halos: tuple[bool, ...], monkeypatch):
    from mtk.compiler import compile_model
    path = tmp_path / "model.tflite"
    path.write_bytes(model)
    untiled = compile_model(path, tmp_path / "untiled", force=True)
    monkeypatch.setattr(tiling, "HALOS", halos)
    return untiled, compile_model(path, tmp_path / "tiled", force=True, max_ram=untiled.arena_bytes - 1,
                                  max_recompute=10.0)


def assert_host_bit_exact(model: bytes, folder) -> None:
    from mtk.hostrun import HostModel
    samples = random_samples(model)
    host = HostModel(folder)
    assert_outputs_match(model, samples, [host.run(sample) for sample in samples])


@pytest.mark.slow
@pytest.mark.parametrize("halo, seed", [(halo, seed) for halo in sorted(HALO_MODES) for seed in (1, 3, 4, 7)
                                        if (halo, seed) != ("patches", 3)])   # seed 3's output: 1 column
def test_tiled_random_chains_are_bit_exact(halo, seed, tmp_path, monkeypatch):
    """Chains whose arena tiling lowers (not one a GEMM's scratch sets), tiled each way (no one-layer
    bands): bit-exact."""
    model = modelgen.tiling_chain(modelgen.Draw(np.random.default_rng(seed)))
    monkeypatch.setattr(tiling, "banded_layers", lambda *args: [])
    untiled, tiled = tiled_compile(model, tmp_path, HALO_MODES[halo], monkeypatch)
    assert tiled.arena_bytes < untiled.arena_bytes
    stages = tiled.memory.tiling.stages
    assert stages and all((bool(s.band_cols), s.cached) == (halo == "patches", halo == "cached") for s in stages)
    assert_host_bit_exact(model, tiled.path)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 4, 7])   # seed 3's chain ends in one column of one row: no bands
def test_layers_in_bands_overwriting_their_inputs_are_bit_exact(seed, tmp_path, monkeypatch):
    """The random chains with only one-layer bands (no stage search): each output overlaps its input,
    below it (bands ascending) or above it (descending), and the outputs stay bit-exact."""
    model = modelgen.tiling_chain(modelgen.Draw(np.random.default_rng(seed)))
    monkeypatch.setattr(tiling, "search", lambda *args: None)
    untiled, tiled = tiled_compile(model, tmp_path, tiling.HALOS, monkeypatch)
    assert tiled.arena_bytes < untiled.arena_bytes
    assert all(len(s.ops) == 1 and s.moved_bytes == 0 and s.extra_macs == 0 for s in tiled.memory.tiling.stages)
    assert_host_bit_exact(model, tiled.path)


@pytest.mark.slow
def test_tiled_resnet_block_is_bit_exact_below_its_bound(tmp_path):
    """IC (ResNet-8): the block whose ADD reads the block's input (a side input, read at the output's
    rows) tiled: the arena at most 0.55× the untiled one, outputs bit-exact."""
    from mtk.compiler import compile_model
    path = SHARED_MODELS / "ic_resnet8_int8.tflite"
    if not path.is_file():
        pytest.skip(f"{path} not here")
    untiled = compile_model(path, tmp_path / "untiled", force=True)
    tiled = compile_model(path, tmp_path / "tiled", force=True, max_ram=int(0.55 * untiled.arena_bytes))
    assert tiled.arena_bytes <= 0.55 * untiled.arena_bytes
    assert any("ADD" in s.types for s in tiled.memory.tiling.stages)
    assert_host_bit_exact(path.read_bytes(), tiled.path)


def first_layers_model(seed: int = 0) -> bytes:
    """The first layers of an image network, one of each kernel path tiling drives: a conv over 3
    channels (im2col gathered), a depthwise (C micro-kernel), a 1×1 conv (rows), a conv over 8 channels
    (taps), average pooling and a lookup activation; then a classifier."""
    d = modelgen.Draw(np.random.default_rng(seed))
    net = modelgen.Net("mtk tiling first layers")
    x = net.model_input((1, 24, 10, 3), modelgen.activation_quant(d))
    ws = modelgen.weighted_sum
    x = ws(net, d, x, "CONV_2D", (8, 3, 3, 3), 0, 27, (1, 12, 5, 8), padding="SAME", stride_h=2, stride_w=2)
    x = ws(net, d, x, "DEPTHWISE_CONV_2D", (1, 3, 3, 8), 3, 9, (1, 12, 5, 8), padding="SAME", depth_multiplier=1,
           bias_optional=False)
    x = ws(net, d, x, "CONV_2D", (16, 1, 1, 8), 0, 8, (1, 12, 5, 16), padding="SAME")
    x = ws(net, d, x, "CONV_2D", (8, 3, 3, 16), 0, 144, (1, 12, 5, 8), padding="SAME")
    y = net.tensor("pool", (1, 6, 5, 8), x.quant)
    net.builder.op("AVERAGE_POOL_2D", [x.index], [y.index], padding="SAME", stride_h=2, stride_w=1,
                   filter_height=3, filter_width=3)
    x = modelgen._elementwise("RELU")(net, d, y)
    x = modelgen.flatten(net, d, x)
    return net.build(modelgen.fully_connected(net, d, x))


@pytest.mark.slow
def test_max_ram_tiles_only_when_needed_and_refuses_with_figures(tmp_path):
    from mtk.compiler import compile_model
    path = tmp_path / "model.tflite"
    path.write_bytes(first_layers_model())
    plain = compile_model(path, tmp_path / "plain", force=True)
    roomy = compile_model(path, tmp_path / "roomy", force=True, max_ram=plain.arena_bytes)
    for rel in plain.files:
        if rel.endswith((".c", ".h")):
            assert (plain.path / rel).read_text() == (roomy.path / rel).read_text()
    assert roomy.memory.tiling is None
    tiled = compile_model(path, tmp_path / "tiled", force=True, max_ram=plain.arena_bytes - 1)
    meta = json.loads((tiled.path / "metadata.json").read_text())["memory"]["tiling"]
    assert meta["untiled_arena_bytes"] == plain.arena_bytes and meta["arena_bytes"] == tiled.arena_bytes
    assert tiled.arena_bytes < plain.arena_bytes and meta["stages"]
    assert any(op.tiled for op in tiled.ops)
    assert any(op["impl"].startswith("tiled:") for op in json.loads((tiled.path / "metadata.json").read_text())["ops"])
    assert meta["untiled_live_bytes"] == list(plain.memory.live_bytes)   # the memory plot's "untiled" curve
    assert max(tiled.memory.live_bytes) < max(meta["untiled_live_bytes"])
    plotted = subprocess.run([sys.executable, "-m", "mtk", "compile", str(path), "-o", str(tmp_path / "cli"),
                              "--max-ram", str(plain.arena_bytes - 1), "--plot-memory", str(tmp_path / "memory.png")],
                             capture_output=True, text=True, env=toolkit_env())
    assert plotted.returncode == 0, plotted.stderr
    assert (tmp_path / "memory.png").read_bytes().startswith(b"\x89PNG")
    with pytest.raises(ModelError, match=r"at best [\d,]+ B tiled within 15% extra instructions; --max-ram 64 B"):
        compile_model(path, tmp_path / "tiny", force=True, max_ram=64)
    assert not (tmp_path / "tiny").exists()


@pytest.mark.slow
def test_max_ram_refusal_is_one_line_exit_2(tmp_path):
    path = tmp_path / "model.tflite"
    path.write_bytes(first_layers_model())
    done = subprocess.run([sys.executable, "-m", "mtk", "compile", str(path), "-o", str(tmp_path / "out"),
                           "--max-ram", "64"], capture_output=True, text=True, env=toolkit_env())
    assert done.returncode == 2, done.stderr
    error = [line for line in done.stderr.splitlines() if "--max-ram 64 B" in line]
    assert len(error) == 1 and "untiled" in error[0] and not (tmp_path / "out").exists()


def wide_first_layers_model(seed: int = 0) -> bytes:
    """56×56 image layers whose untiled arena (75,264 B) leaves no room on a 64 KB board."""
    d = modelgen.Draw(np.random.default_rng(seed))
    net = modelgen.Net("mtk tiling wide first layers")
    x = net.model_input((1, 56, 56, 3), modelgen.activation_quant(d))
    ws = modelgen.weighted_sum
    x = ws(net, d, x, "CONV_2D", (8, 3, 3, 3), 0, 27, (1, 56, 56, 8), padding="SAME")
    x = ws(net, d, x, "DEPTHWISE_CONV_2D", (1, 3, 3, 8), 3, 9, (1, 56, 56, 8), padding="SAME", depth_multiplier=1,
           bias_optional=False)
    x = ws(net, d, x, "CONV_2D", (16, 1, 1, 8), 0, 8, (1, 56, 56, 16), padding="SAME")
    y = net.tensor("pool", (1, 28, 28, 16), x.quant)
    net.builder.op("MAX_POOL_2D", [x.index], [y.index], padding="VALID", stride_h=2, stride_w=2,
                   filter_height=2, filter_width=2)
    x = modelgen.flatten(net, d, y)
    return net.build(modelgen.fully_connected(net, d, x))


@pytest.mark.slow
def test_a_board_too_small_for_the_untiled_plan_gets_it_tiled(tmp_path):
    """qemu_cortex_m3 has 64 KB of RAM: the untiled arena (the I/O in it) does not fit beside the stack,
    so compiling for it tiles by default (no --max-ram), and the result fits and is bit-exact."""
    from mtk.compiler import compile_model
    model = wide_first_layers_model()
    path = tmp_path / "model.tflite"
    path.write_bytes(model)
    untiled = compile_model(path, tmp_path / "untiled", force=True, cpu="cortex-m3")
    board = get_board("qemu_cortex_m3")
    assert untiled.arena_bytes + 8192 > board.ram_bytes
    tiled = compile_model(path, tmp_path / "tiled", force=True, board=board.name)
    assert tiled.memory.tiling.arena_bytes == tiled.arena_bytes <= tiled.memory.arena_limit_bytes
    assert_host_bit_exact(model, tiled.path)


def wide_chain(seed: int = 0, height: int = 10, width: int = 64) -> bytes:
    """A short, wide image through conv, depthwise /2, 1×1 and max pooling: whole rows are long, so bands
    of them leave more arena than 2-D patches."""
    d = modelgen.Draw(np.random.default_rng(seed))
    net = modelgen.Net("mtk tiling wide chain")
    x = net.model_input((1, height, width, 3), modelgen.activation_quant(d))
    ws = modelgen.weighted_sum
    half = (1, height // 2, width // 2)
    x = ws(net, d, x, "CONV_2D", (8, 3, 3, 3), 0, 27, (1, height, width, 8), padding="SAME")
    x = ws(net, d, x, "DEPTHWISE_CONV_2D", (1, 3, 3, 8), 3, 9, (*half, 8), padding="SAME", stride_h=2, stride_w=2,
           depth_multiplier=1, bias_optional=False)
    x = ws(net, d, x, "CONV_2D", (16, 1, 1, 8), 0, 8, (*half, 16), padding="SAME")
    y = net.tensor("pool", (1, height // 4, width // 4, 16), x.quant)
    net.builder.op("MAX_POOL_2D", [x.index], [y.index], padding="VALID", stride_h=2, stride_w=2,
                   filter_height=2, filter_width=2)
    return net.build(modelgen.fully_connected(net, d, modelgen.flatten(net, d, y)))


@pytest.mark.slow
def test_patches_where_bands_cannot_reach_the_budget(tmp_path):
    """The wide chain: untiled 7,200 B (its 1,920 B input among them), whole-row bands at best 3,616 B; under
    --max-ram 3,600 the search takes 2-D patches (within the default 15 %), bit-exact."""
    from mtk.compiler import compile_model
    model = wide_chain()
    path = tmp_path / "model.tflite"
    path.write_bytes(model)
    banded = compile_model(path, tmp_path / "banded", force=True, max_ram=4_000)
    assert all(not s.band_cols for s in banded.memory.tiling.stages)
    tiled = compile_model(path, tmp_path / "tiled", force=True, max_ram=3_600)
    assert tiled.arena_bytes <= 3_600 and any(s.band_cols for s in tiled.memory.tiling.stages)
    assert_host_bit_exact(model, tiled.path)


@pytest.mark.slow
def test_kws_layers_in_bands_overwrite_their_inputs_bit_exact(tmp_path):
    """KWS (DS-CNN): every depthwise and pointwise layer in row bands whose output overlaps its input:
    the arena under half TFLM's (22,820 B on the M4), outputs bit-exact. The depthwise layers in 3 bands (9, 8 and
    8 rows: their output 9 rows from their input), the pointwise ones of 8 (40 pixels: whole pairs of the GEMM, the
    last row's 5 as untiled); the extra instructions the compiler expects of their extra calls: the depthwise set-up
    of 64 channels, the pointwise calls alone."""
    from mtk.compiler import compile_model
    path = SHARED_MODELS / "kws_dscnn_int8.tflite"
    if not path.is_file():
        pytest.skip(f"{path} not here")
    tiled = compile_model(path, tmp_path / "tiled", force=True, max_ram=22_820 // 2)
    assert tiled.arena_bytes <= 22_820 // 2
    assert all(len(s.ops) == 1 and s.moved_bytes == 0 for s in tiled.memory.tiling.stages)
    extra = {(s.types[0], s.calls, s.extra_instructions) for s in tiled.memory.tiling.stages}
    assert extra == {("DEPTHWISE_CONV_2D", 3, 2 * (30 + 100 * 64)), ("CONV_2D", 4, 3 * 30)}
    assert_host_bit_exact(path.read_bytes(), tiled.path)


def test_kws_at_half_tflms_ram_bands_take_their_kernels_scratch(tmp_path):
    """KWS at bench/ram_vs_tflm.py's --max-ram on the M4 (11,682 B): a pointwise band's scratch is its band kernel's
    (one row pair a call, 256 B; the whole layer's takes three, 768 B), which leaves the depthwise layers room for
    3 bands (each call sets up every channel again: 4 bands cost 2 % more cycles); the first layer reads its stream
    from flash (conv_few_dsp's leaner variant: the GEMM's would cost 44 K cycles). Bit-exact on the host."""
    from mtk.compiler import compile_model
    path = SHARED_MODELS / "kws_dscnn_int8.tflite"
    if not path.is_file():
        pytest.skip(f"{path} not here")
    tiled = compile_model(path, tmp_path / "tiled", force=True, board="mps2/an386", max_ram=11_682)
    assert tiled.arena_bytes <= 11_682
    stages = {(s.types[0], s.calls, s.scratch_bytes) for s in tiled.memory.tiling.stages}
    assert stages == {("DEPTHWISE_CONV_2D", 3, 0), ("CONV_2D", 4, 256)}
    assert tiled.ops[0].variant == {"kernel": "dsp-few", "lean": True}
    assert_host_bit_exact(path.read_bytes(), tiled.path)


def test_balanced_bands_bring_the_output_closer_to_the_input_both_ways(tmp_path):
    """A 3x3 window (padding 1) in 3 bands: the first band's window starts in the padding, so it may be a row taller
    for the same distance (9, 8, 8 rows: the output 9 rows under its input, not 10 as 9, 9, 7 need); run descending,
    the bands mirrored (8, 8, 9 from the top: the bottom one runs first), 9 rows over it. A 1x1 layer's bands evened
    out (8, 8, 8, 1: 8 rows apart; 7, 7, 7, 4: 7); no band of one row under a 3-row window."""
    from mtk.ops import prepare_ops
    from mtk.reader import read_model
    from mtk.target import get_cpu
    rows = Rows(25, 25, 3, 1, 1)
    assert tiling.balanced_bounds(rows, [0, 9, 18, 25], 320, 320) == [0, 9, 17, 25]
    assert tiling.balanced_bounds(Rows(25, 25, 1, 1, 0), [0, 8, 16, 24, 25], 320, 320) == [0, 7, 14, 21, 25]
    assert tiling.balanced_bounds(Rows(4, 4, 3, 1, 1), [0, 2, 4], 8, 8) == [0, 2, 4]
    d = modelgen.Draw(np.random.default_rng(0))
    net = modelgen.Net("mtk depthwise 25x5")
    x = net.model_input((1, 25, 5, 8), modelgen.activation_quant(d))
    (tmp_path / "dw.tflite").write_bytes(net.build(modelgen.weighted_sum(
        net, d, x, "DEPTHWISE_CONV_2D", (1, 3, 3, 8), 3, 9, (1, 25, 5, 8), padding="SAME", depth_multiplier=1)))
    layer = prepare_ops(read_model(tmp_path / "dw.tflite"), get_cpu("cortex-m4"))[0]
    stage = replace(tiling.make_stage([layer], [0], 9, True, lambda _: 0, lambda _: 1),
                    sequence=tiling.banded_sequence(rows, [0, 9, 17, 25]))
    assert [(c.in_lo, c.in_hi) for c in stage.sequence.calls] == [(0, 10), (8, 18), (16, 25)]
    assert stage.distance(up=False) == stage.reversed().distance(up=True) == 9 * 40
    assert [(c.lo, c.hi) for c in stage.reversed().sequence.calls] == [(16, 25), (8, 16), (0, 8)]


def test_band_heights_keep_the_windows_rows_and_the_gemms_pixel_pairs():
    """About `bands` bands: no last band of one row under a 3-row window; for a GEMM of pixel pairs, bands of
    whole pairs where a few more rows give them (KWS's 25 rows of 5 pixels: 6 rows, the last row's 5 pixels
    leaving one out as the untiled layer does)."""
    assert tiling.band_height(25, 4, 3, 5, 1) == 7
    assert tiling.band_height(25, 4, 1, 5, 2) == 6
    assert tiling.band_height(25, 3, 3, 5, 1) == 9
    assert tiling.band_height(25, 3, 1, 5, 2) == 8
    assert tiling.band_height(21, 4, 1, 5, 2) == 6    # 5 rows: five odd bands; 6, 6, 6, 3: one
    assert tiling.band_height(25, 25, 3, 5, 1) == 1
