"""A layer whose weights are staged into the arena on the NUCLEO-L4R5ZI (codegen/staging.py), emulated on the
an386: bit-exact with tflite-micro, and fewer estimated cycles than the same build with the weights read from flash
(an arena limit under the copy leaves it out). 64 -> 64 pointwise on 12x12, as KWS's (4.6 KB of the GEMM's
stream read once a pair of pixels)."""

from __future__ import annotations

import json

import pytest

from harness import conv
from mtk.cli import main


@pytest.mark.qemu
def test_a_staged_layer_is_bit_exact_and_waits_less_on_the_l4r5(tmp_path, capsys):
    model = tmp_path / "pw64.tflite"
    model.write_bytes(conv((1, 12, 12, 64), (1, 1), 64, (12, 12)))
    emulated = [str(model), "--board", "nucleo_l4r5zi", "--emulate", "--json"]
    assert main(["validate", *emulated]) == 0
    assert json.loads(capsys.readouterr().out)["bit_exact"]
    assert main(["bench", *emulated, "-n", "1"]) == 0
    [staged] = json.loads(capsys.readouterr().out)
    assert main(["bench", *emulated, "-n", "1", "--max-ram", str(staged["arena_bytes"] - 1)]) == 0
    [unstaged] = json.loads(capsys.readouterr().out)
    assert unstaged["arena_bytes"] < staged["arena_bytes"]
    # 72 pairs of pixels each reading 4.6 KB from flash (~575 fills of 5 wait states a pair, less the data cache's
    # hits), against the copy's ~4.6 k cycles: 110 k fewer with the code in the L4R5's code RAM (2x4/fused)
    assert staged["estimated_cycles"]["median"] < unstaged["estimated_cycles"]["median"] - 100_000
