"""The DSP cores' GEMM in QEMU against tflite-micro on the Cortex-M4, M7 and M33: first layers packed a kernel row at a
time (c/mtk_im2col_runs_s8.h) and the fused kernels' assembly (c/mtk_dot_biased_s8.h); the models are
tests/compile/test_gemm_dsp.py's."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from harness import assert_bit_exact_on_target, assert_outputs_match, random_samples
from mtk.boards import get_board
from mtk.ops import op_def, prepare_ops
from mtk.ops.conv import FEW_INPUTS
from mtk.ops.variants import Variant
from mtk.pipeline import run_model
from mtk.runoptions import RunOptions
from mtk.reader import read_model
from mtk.tuning import Tuning, layer_key
from test_gemm_dsp import FUSED_MODELS, RUNS_LAYERS, fully_connected, pointwise

pytestmark = pytest.mark.qemu


def kernels_c_of_a_bit_exact_run(model: bytes, board: str, kernel: str, tmp_path: Path) -> str:
    """The generated kernels' C of `model` (one layer) run on `board` with `kernel` asked for by a tuning file, its
    outputs checked against tflite-micro's."""
    path = tmp_path / "model.tflite"
    path.write_bytes(model)
    target = get_board(board)
    data = prepare_ops(read_model(path), target.cpu)[0]
    tuning = Tuning({layer_key(data): Variant(kernel)})
    inputs = random_samples(model)
    result = run_model(path, RunOptions(board=target, runs=1, cache=False, build_dir=tmp_path / "build", tuning=tuning),
                       inputs)
    assert_outputs_match(model, inputs, result.outputs, f"{board}: ")
    return (tmp_path / "build" / "compiled" / "src" / "tvmgen_default_kernels.c").read_text()


@pytest.mark.parametrize("board", ["mps2/an386", "mps2/an500", "mps2/an505"])
@pytest.mark.parametrize("name", ["conv-3ch-3x3-s2", "conv-3ch-3x3-relu", "conv-3ch-5x5-valid", "conv-1ch-3x3-s2",
                                  "dw-1to20-3x3"])
def test_run_packed_layers_are_bit_exact_on_target(name, board, tmp_path):
    """On the GEMM, where the Cortex-M4's and M33's band kernel (ops/conv_few_dsp.py) would take the layer too."""
    path = tmp_path / "model.tflite"
    path.write_bytes(RUNS_LAYERS[name]())
    target = get_board(board)
    data = prepare_ops(read_model(path), target.cpu)[0]
    gemm = next(v for v in op_def(data.op.type).variants(data) if v != FEW_INPUTS)
    inputs = random_samples(path.read_bytes())
    result = run_model(path, RunOptions(board=target, runs=1, tuning=Tuning({layer_key(data): gemm})), inputs)
    assert_outputs_match(path.read_bytes(), inputs, result.outputs, f"{board}: ")


@pytest.mark.parametrize("board", ["mps2/an386", "mps2/an500", "mps2/an505"])
@pytest.mark.parametrize("name", FUSED_MODELS)
def test_fused_kernels_are_bit_exact_on_every_dsp_core(name, board, tmp_path):
    assert_bit_exact_on_target(FUSED_MODELS[name](), board, tmp_path)


@pytest.mark.parametrize("board", ["mps2/an386", "mps2/an500", "mps2/an505"])
@pytest.mark.parametrize("model, variant", [(lambda: RUNS_LAYERS["conv-3ch-3x3-s2"](), "2x2/biased"),
                                            (lambda: fully_connected(150, 12, per_channel=True), "1x4/biased")],
                         ids=["2x2", "1x4"])
def test_biased_kernels_are_bit_exact_on_every_dsp_core(model, variant, board, tmp_path):
    """The biased kernels' assembly (`mtk tune`'s alternatives to the fused ones), its group ordered as the fused."""
    path = tmp_path / "model.tflite"
    path.write_bytes(model())
    target = get_board(board)
    data = prepare_ops(read_model(path), target.cpu)[0]
    assert variant in [v.kernel for v in op_def(data.op.type).variants(data)]
    inputs = random_samples(path.read_bytes())
    result = run_model(path, RunOptions(board=target, runs=1, tuning=Tuning({layer_key(data): Variant(variant)})),
                       inputs)
    assert_outputs_match(path.read_bytes(), inputs, result.outputs, f"{board}: ")


@pytest.mark.parametrize("board", ["mps2/an386", "mps2/an505"])
@pytest.mark.parametrize("model", [FUSED_MODELS["quads-16-groups-133-rows"],
                                   lambda: pointwise(48, 8, "RELU", y_zp=-128, pixels=(7, 5))], ids=["16", "12-relu"])
def test_the_quads_kernels_of_a_pair_a_call_are_bit_exact(model, board, tmp_path, monkeypatch):
    """2x4/fused's kernels of one pair a call (its C's `pairs` 1: a lean variant's, OpDef.leaner's under a RAM limit)
    over 8-16 groups, with the sign term and without, the last call an odd row: the layers' quads of 8 groups or more
    taken as shallower ones (a pair a call); asked for by a tuning file (the band kernel comes first for these
    layers)."""
    from mtk.ops import gemm

    monkeypatch.setattr(gemm, "QUAD_PAIRS_MIN_GROUPS", gemm.QUAD_STRAIGHT + 1)
    kernels_c = kernels_c_of_a_bit_exact_run(model(), board, "2x4/fused", tmp_path)
    assert re.search(r"mtk_gemm_2x4_fused_s8\(.*, 1, -128, 127, [01]\);", kernels_c)


@pytest.mark.parametrize("board", ["mps2/an386", "mps2/an505"])
@pytest.mark.parametrize("model", ["quads-1-group-relu", "quads-3-groups", "quads-16-groups-133-rows",
                                   "quads-18-groups", "quads-33-groups-relu", "quads-live-relu",
                                   "pointwise-relu-clamped", "pointwise-3-groups"])
def test_the_compact_quads_kernel_is_bit_exact(model, board, tmp_path):
    """2x4/compact (2x4/fused's products a pair a call in a loop of 4 groups a pass, its C's `pairs` 0, its stream's
    quads head first at any depth), asked for by a tuning file: entered 0-3 groups in, one pass to several, the last
    call an odd row, constant channels left out, clamped outputs and a partial quad (6 channels) in C."""
    kernels_c = kernels_c_of_a_bit_exact_run(FUSED_MODELS[model](), board, "2x4/compact", tmp_path)
    assert re.search(r"mtk_gemm_2x4_fused_(live_)?s8\(.*, 0, -?\d+, \d+, [01]", kernels_c)
