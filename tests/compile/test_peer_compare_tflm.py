"""bench/peer_compare.py's TFLM cycles: the hand-measured file it reads by default (bench/tflm_cycles.json), another
file as it reads it, the table."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from checkout import REPO, SHARED_MODELS

sys.path.insert(0, str(REPO / "bench"))

import peer_compare  # noqa: E402

PEER = SHARED_MODELS.parent / "peer" / "tflm_qemu.json"


def test_measured_tflm_cycles_cover_the_peer_boards_and_match_the_peer_file():
    cycles = peer_compare.tflm_cycles(peer_compare.TFLM_CYCLES)
    rows = json.loads(peer_compare.TFLM_CYCLES.read_text())["rows"]
    assert {board for board, _ in cycles} == {"mps2/an386", "mps2/an500", "mps2/an505", "mps3/corstone300/an547"}
    assert all(r["exact"] for r in rows)
    assert all(abs(r["instructions_vs_peer"]) < 0.05 for r in rows if (r["board"], r["model"]) != (
        "mps3/corstone300/an547", "ad_fc_int8"))


def _harness_json(path: Path, rows: list[dict]) -> Path:
    path.write_text(json.dumps({"what": "test", "rows": rows}))
    return path


def _mtk_row(model: str = "kws_dscnn_int8", cycles: int | None = 5_000_000) -> dict:
    return {"model": model, "board": "mps2/an386", "cpu": "cortex-m4", "instructions": 3_000_000,
            "estimated_cycles": cycles, "arena_bytes": 10_000, "arena_lower_bound_bytes": 9_000, "code_bytes": 20_000,
            "model_code_bytes": 8_000, "constant_bytes": 30_000, "flash_bytes": 60_000, "compile_s": 1.0,
            "output_mismatches": 0, "layers": None}


def test_peer_compare_reads_tflm_cycles_and_compares(tmp_path, capsys):
    cycles = peer_compare.tflm_cycles(_harness_json(tmp_path / "t.json", [
        {"model": "kws_dscnn_int8", "board": "mps2/an386", "estimated_cycles": 10_000_000, "instructions": 7_700_000}]))
    assert cycles == {("mps2/an386", "kws_dscnn_int8"): 10_000_000}
    peers = peer_compare.peer_rows(PEER)
    row = peer_compare.with_peer(_mtk_row(), peers, cycles)
    assert row["peer"]["estimated_cycles"] == 10_000_000
    assert row["ratios"]["estimated_cycles"] == pytest.approx(0.5)
    other = peer_compare.with_peer(_mtk_row("ad_fc_int8"), peers, cycles)   # not in the file
    assert other["peer"]["estimated_cycles"] is None and other["ratios"]["estimated_cycles"] is None
    bare = peer_compare.with_peer(_mtk_row(cycles=None), peers)
    peer_compare.print_table([row, other, bare])
    lines = capsys.readouterr().out.splitlines()
    assert "est. cycles" in lines[0]
    assert "5,000,000 10,000,000   0.50 │" in lines[1]
    assert "5,000,000          -      - │" in lines[2]
    assert "        -          -      - │" in lines[3]


@pytest.mark.parametrize("content", ["{", '{"rows": [{"model": "x"}]}', '{"rows": [{"model": "x", "board": "b", '
                                     '"estimated_cycles": "many"}]}', "[]"])
def test_peer_compare_refuses_a_file_not_tflm_cycles(tmp_path, content):
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(SystemExit) as stop:
        peer_compare.tflm_cycles(path)
    assert str(stop.value).startswith(f"{path}: not TFLM cycles as bench/tflm_cycles.json holds them")
    assert "\n" not in str(stop.value)
