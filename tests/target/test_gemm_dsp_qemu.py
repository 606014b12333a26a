"""The DSP cores' GEMM in QEMU against tflite-micro on the Cortex-M4, M7 and M33: first layers packed a kernel row at a
time (c/mtk_im2col_runs_s8.h) and the fused kernels' assembly (c/mtk_dot_biased_s8.h); the models are
tests/compile/test_gemm_dsp.py's."""

from __future__ import annotations

import pytest

from harness import assert_bit_exact_on_target
from test_gemm_dsp import FUSED_MODELS, RUNS_LAYERS

pytestmark = pytest.mark.qemu


@pytest.mark.parametrize("board", ["mps2/an386", "mps2/an500", "mps2/an505"])
@pytest.mark.parametrize("name", ["conv-3ch-3x3-s2", "conv-3ch-3x3-relu", "conv-3ch-5x5-valid", "conv-1ch-3x3-s2",
                                  "dw-1to8-3x3"])
def test_run_packed_layers_are_bit_exact_on_target(name, board, tmp_path):
    assert_bit_exact_on_target(RUNS_LAYERS[name](), board, tmp_path)


@pytest.mark.parametrize("board", ["mps2/an386", "mps2/an500", "mps2/an505"])
@pytest.mark.parametrize("name", FUSED_MODELS)
def test_fused_kernels_are_bit_exact_on_every_dsp_core(name, board, tmp_path):
    assert_bit_exact_on_target(FUSED_MODELS[name](), board, tmp_path)
