"""The band kernel's assembly ("2x4/band": c/dsp/mtk_gemm_band_fused.h) in QEMU against tflite-micro on the Cortex-M4,
M7 and M33, asked for by a tuning file (the M7 takes it only so); and "2x4/fused" on the few-group layers whose
default on the M4 and M33 the band kernel became. The models are tests/compile/test_gemm_band.py's and
test_gemm_dsp.py's."""

from __future__ import annotations

import pytest

from harness import assert_outputs_match, random_samples
from mtk.boards import get_board
from mtk.ops import prepare_ops
from mtk.ops.variants import Variant
from mtk.pipeline import run_model
from mtk.reader import read_model
from mtk.runoptions import RunOptions
from mtk.tuning import Tuning, layer_key
from test_gemm_band import BAND_MODELS
from test_gemm_dsp import FUSED_MODELS

pytestmark = pytest.mark.qemu


def assert_bit_exact_as(model: bytes, variant: str, board: str, tmp_path) -> None:
    path = tmp_path / "model.tflite"
    path.write_bytes(model)
    target = get_board(board)
    data = prepare_ops(read_model(path), target.cpu)[0]
    inputs = random_samples(model)
    result = run_model(path, RunOptions(board=target, runs=1, tuning=Tuning({layer_key(data): Variant(variant)})),
                       inputs)
    assert_outputs_match(model, inputs, result.outputs, f"{board}: ")


@pytest.mark.parametrize("board", ["mps2/an386", "mps2/an500", "mps2/an505"])
@pytest.mark.parametrize("name", BAND_MODELS)
def test_the_band_kernel_is_bit_exact_on_every_dsp_core(name, board, tmp_path):
    assert_bit_exact_as(BAND_MODELS[name](), "2x4/band", board, tmp_path)


@pytest.mark.parametrize("board", ["mps2/an386", "mps2/an505"])
@pytest.mark.parametrize("name", ["band-1-group-relu", "band-2-groups", "band-3-groups-relu", "band-8-groups"])
def test_the_quads_kernel_stays_bit_exact_where_the_band_kernel_is_the_default(name, board, tmp_path):
    assert_bit_exact_as(BAND_MODELS[name](), "2x4/fused", board, tmp_path)


@pytest.mark.parametrize("name", ["quads-8-groups-128-rows", "quads-9-groups-150-rows-relu", "quads-16-groups-133-rows"])
def test_the_quads_kernels_row_pairs_stay_bit_exact_on_the_m33(name, tmp_path):
    """Its two pairs a call over 8-16 groups, which the band kernel took over as the M33's default for such layers."""
    assert_bit_exact_as(FUSED_MODELS[name](), "2x4/fused", "mps2/an505", tmp_path)
