"""Tiled execution in QEMU: the tiled first layers and shared models under --max-ram bit-exact on target."""

from __future__ import annotations

import numpy as np
import pytest

import modelgen
from checkout import SHARED_MODELS
from harness import assert_bit_exact_on_target, assert_outputs_match, random_samples
from mtk.boards import get_board
from mtk.codegen import tiling
from mtk.pipeline import run_model
from mtk.runoptions import RunOptions

from test_tiling import HALO_MODES, first_layers_model

TARGETS = ("mps2/an386", "mps2/an500", "mps2/an505", "mps3/corstone300/an547")
SHARED_BUDGETS = {   # bench/ram_vs_tflm.py's --max-ram on the M4: the arena that brings the firmware to half TFLM's RAM
    "ic_resnet8_int8": 27_002,    # untiled 52,320 / 49,440 B (M4 / M55)
    "kws_dscnn_int8": 11_682,     # untiled 16,768 / 16,000 B
    "ad_fc_int8": 1_606,          # untiled 1,792 / 768 B: no layer tiles, the first packs its row in smaller chunks
}


@pytest.mark.qemu
@pytest.mark.parametrize("board, halo", [("mps2/an386", "cached"), ("mps2/an386", "recomputed"),
                                         ("mps2/an386", "patches"), ("mps3/corstone300/an547", "cached"),
                                         ("mps3/corstone300/an547", "patches")])
def test_tiled_first_layers_bit_exact_on_target(board, halo, tmp_path, monkeypatch):
    model = first_layers_model()
    path = tmp_path / "model.tflite"
    path.write_bytes(model)
    monkeypatch.setattr(tiling, "HALOS", HALO_MODES[halo])
    samples = random_samples(model)
    from mtk.compiler import compile_model
    untiled_arena = compile_model(path, tmp_path / "untiled", board=board).arena_bytes
    result = run_model(path, RunOptions(board=get_board(board), runs=1, max_ram=untiled_arena - 1, max_recompute=10.0),
                       samples)
    assert result.arena_bytes < untiled_arena
    assert_outputs_match(model, samples, result.outputs, f"{board}: ")


@pytest.mark.qemu
@pytest.mark.parametrize("board", TARGETS)
@pytest.mark.parametrize("name", [*SHARED_BUDGETS, "random-chain"])
def test_tiled_models_bit_exact_on_target(name, board, tmp_path):
    """The shared models and a random chain, compiled under a --max-ram only a tiled plan meets, run
    in QEMU (one inference): outputs equal tflite-micro's."""
    if name == "random-chain":
        from mtk.compiler import compile_model
        model = modelgen.tiling_chain(modelgen.Draw(np.random.default_rng(1)))
        (tmp_path / "chain.tflite").write_bytes(model)
        max_ram = compile_model(tmp_path / "chain.tflite", tmp_path / "untiled", board=board).arena_bytes - 1
    else:
        path = SHARED_MODELS / f"{name}.tflite"
        if not path.is_file():
            pytest.skip(f"{path} not here")
        model, max_ram = path.read_bytes(), SHARED_BUDGETS[name]
    assert assert_bit_exact_on_target(model, board, tmp_path, random_samples(model, 1), max_ram=max_ram) <= max_ram
