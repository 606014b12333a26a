"""A model whose arena no single region holds runs split across the AN547's regions, bit-exact in QEMU."""

from __future__ import annotations

import numpy as np
import pytest

from mtk.boards import get_board
from mtk.tflite_builder import ModelBuilder


def pointwise_chain(hw: int, channels: list[int], seed: int = 0) -> bytes:
    """Input hw×hw×channels[0] through 1×1 convolutions to each next channel count: the tensor between
    two convolutions is as large as the widest layer makes it."""
    rng = np.random.default_rng(seed)
    b = ModelBuilder(description="mtk test pointwise chain")
    x = b.tensor("x", (1, hw, hw, channels[0]), "int8", scale=0.05, zero_point=-7)
    b.inputs([x])
    for i, (cin, cout) in enumerate(zip(channels, channels[1:])):
        w_scale = rng.uniform(0.002, 0.02, cout)
        w = b.const(f"w{i}", rng.integers(-127, 128, (cout, 1, 1, cin)).astype(np.int8), scale=w_scale,
                    zero_point=np.zeros(cout, np.int64), axis=0)
        bias = b.const(f"b{i}", rng.integers(-2000, 2000, cout).astype(np.int32), scale=0.05 * w_scale,
                       zero_point=np.zeros(cout, np.int64), axis=0)
        y = b.tensor(f"y{i}", (1, hw, hw, cout), "int8", scale=0.05, zero_point=-7)
        b.op("CONV_2D", [x, w, bias], [y], padding="VALID", stride_h=1, stride_w=1,
             fused_activation_function="NONE")
        x = y
    b.outputs([x])
    return b.build()


@pytest.mark.qemu
def test_an_arena_larger_than_any_region_runs_bit_exact_on_the_an547(tmp_path):
    """128×128: 1 → 105 → 24 → 1 channels. The 1,720,320 B and 393,216 B tensors live at once: an arena
    of more than the SRAM's 2 MB and the DTCM's 512 KB; the larger goes to SRAM, the rest stays in
    DTCM, and the firmware runs it bit-exact with tflite-micro."""
    from mtk.commands.validate import compare
    from mtk.compiled import CompiledModel
    from mtk.pipeline import run_model
    from mtk.runoptions import RunOptions

    model = tmp_path / "chain.tflite"
    model.write_bytes(pointwise_chain(128, [1, 105, 24, 1]))
    result = run_model(model, RunOptions(get_board("mps3/an547"), runs=1, random_samples=2, build_dir=tmp_path / "b"))
    assert [r["mismatches"] for r in compare(result)] == [0, 0]
    compiled = CompiledModel.load(tmp_path / "b" / "compiled")
    assert compiled.memory.arena_bytes > 2 * 1024 * 1024
    (dtcm, sram) = compiled.memory.regions
    assert dtcm.name == "DTCM" and 393216 <= dtcm.arena_bytes <= dtcm.limit_bytes
    assert (sram.name, sram.arena_bytes) == ("SRAM", 1720320)
    assert {b.name: b.pool for b in compiled.memory.plan}["y0"] == "SRAM"
    source = (tmp_path / "b" / "compiled" / "src" / "tvmgen_default.c").read_text()
    assert 'tvmgen_default_arena_sram[1720320] TVMGEN_ALIGNED(16) TVMGEN_SECTION("SRAM")' in source
