"""--weights-in-ram in QEMU: the firmware copies the constants into RAM at startup and the model reads them
there, bit-exact with tflite-micro (the system region's .data on the AN386; on the AN547, the SRAM region's
own load section, which the reset handler's copy table covers; split across both when neither holds them all)."""

from __future__ import annotations

import pytest

from mtk.boards import get_board
from mtk.commands.run import format_result
from mtk.compiled import CompiledModel
from mtk.pipeline import run_model
from mtk.runoptions import RunOptions

from harness import assert_outputs_match, conv_model, fc_chain, random_samples, split_ram_an547


@pytest.mark.parametrize("board, depth, units, region", [("mps2/an386", 600, 40, "RAM"),
                                                         ("mps3/an547", 1000, 500, "SRAM")])
def test_the_constants_read_from_ram_give_tflite_micros_outputs(tmp_path, board, depth, units, region):
    model = conv_model("FULLY_CONNECTED", (1, depth), (units, depth), (1, units), per_channel=True,
                       fused_activation_function="RELU")
    path = tmp_path / "fc.tflite"
    path.write_bytes(model)
    inputs = random_samples(model)
    result = run_model(path, RunOptions(get_board(board), runs=1, weights_in_ram=True, build_dir=tmp_path / "b"),
                       inputs)
    assert_outputs_match(model, inputs, result.outputs, f"{board}: ")
    assert CompiledModel.load(tmp_path / "b" / "compiled").memory.constants_regions == (region,)
    assert result.sizes.ram_bytes >= result.constant_bytes   # .data (or the region's section) holds them


def test_constants_split_across_two_regions_give_tflite_micros_outputs(tmp_path):
    """Neither the cut-down AN547's DTCM nor its SRAM holds fc_chain()'s constants: each region gets some
    arrays, both copied at startup (DTCM's in .data, SRAM's by its own load section)."""
    model = fc_chain()
    path = tmp_path / "fc.tflite"
    path.write_bytes(model)
    inputs = random_samples(model)
    result = run_model(path, RunOptions(split_ram_an547(), runs=1, weights_in_ram=True, build_dir=tmp_path / "b"),
                       inputs)
    assert_outputs_match(model, inputs, result.outputs, "split: ")
    memory = CompiledModel.load(tmp_path / "b" / "compiled").memory
    assert memory.constants_regions == ("DTCM", "SRAM")
    assert all(share.constant_bytes for share in memory.constants_in_ram)
    shares = result.to_json()["constants_in_ram"]   # bench --json
    assert [s["name"] for s in shares] == ["DTCM", "SRAM"] and sum(s["constant_bytes"] for s in shares) == 61_184
    assert f"copied into RAM: DTCM {shares[0]['constant_bytes']:,} B, SRAM 32,768 B" in format_result(result)
