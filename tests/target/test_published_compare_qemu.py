"""bench/published_compare.py's one real comparison: AD on the L4R5 model, in QEMU."""

from __future__ import annotations

import json
import sys

import pytest

from checkout import REPO, SHARED_MODELS

sys.path.insert(0, str(REPO / "bench"))

import published_compare  # noqa: E402


@pytest.mark.qemu
def test_ad_on_the_l4r5_model(capsys):
    model = SHARED_MODELS / "ad_fc_int8.tflite"
    assert published_compare.main([str(model), "--board", "nucleo_l4r5zi", "--json"]) == 0
    [row, in_ram] = json.loads(capsys.readouterr().out)
    assert (row["board"], row["benchmark"], row["clock_hz"], row["weights"]) == ("nucleo_l4r5zi", "ad", 120_000_000,
                                                                                  "flash")
    assert row["published"]["cycles"] == 486196 and row["mtk_estimated_cycles"] > row["instructions"]
    assert row["ratio"] == round(row["mtk_estimated_cycles"] / 486196, 3)
    assert published_compare.markdown([row]).splitlines()[2].startswith("| nucleo_l4r5zi (120 MHz) | ad | flash | ")
    # above 0.70: its weights' flash reads wait; the two 640-wide dense layers take the most cycles
    limits = row["limits"]
    assert limits["memory_wait_cycles"]["data"] > 0.2 * row["mtk_estimated_cycles"]
    assert limits["core_cycles"] == row["mtk_estimated_cycles"] - sum(limits["memory_wait_cycles"].values())
    assert {layer["index"] for layer in limits["top_layers"][:2]} == {0, 9}
    # Bosch HALE's weights-in-RAM row beside mtk --weights-in-ram: the same instructions, no flash wait states
    assert (in_ram["weights"], in_ram["published"]["cycles"]) == ("RAM", 567397)
    assert in_ram["instructions"] == row["instructions"] and in_ram["mtk_estimated_cycles"] < row["mtk_estimated_cycles"]
    assert "limits" not in in_ram and in_ram["estimate"]["memory_wait_cycles"]["data"] == 0   # its weights in RAM
