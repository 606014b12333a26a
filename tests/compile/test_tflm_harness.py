"""bench/tflm_harness/tflm_cycles.py (TFLM + CMSIS-NN under the cycle model) and bench/peer_compare.py's TFLM cycles:
the parts that need no TFLM tree (the harness's console line, its input and checksum against tflite-micro's Python
interpreter, its JSON as peer_compare.py reads it, the table). The harness itself, given TFLM checkouts:
tests/target/test_tflm_harness_qemu.py."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from checkout import REPO, SHARED_MODELS

sys.path.insert(0, str(REPO / "bench" / "tflm_harness"))
sys.path.insert(0, str(REPO / "bench"))

import peer_compare  # noqa: E402
import tflm_cycles  # noqa: E402
from mtk.reference import run_reference  # noqa: E402

KWS = SHARED_MODELS / "kws_dscnn_int8.tflite"
PEER = SHARED_MODELS.parent / "peer" / "tflm_qemu.json"


@pytest.mark.parametrize("line, expected", [
    ("tflm 0 0x1fd3ed06 2580", tflm_cycles.HarnessLine(0, "0x1fd3ed06", 2580)),
    ("tflm 1 0 0\r", tflm_cycles.HarnessLine(1, "0x0", 0)),
    ("tflm 0 0xzz 2580", None),
    ("tflm 0 0x1 -5", None),
    ("tflm 0 0x1", None),
    ("boot", None),
    (None, None),
])
def test_harness_line(line, expected):
    assert tflm_cycles.parse_line(line) == expected


def test_fnv1a_is_the_published_function():
    assert tflm_cycles.fnv1a([]) == "0x811c9dc5"
    assert tflm_cycles.fnv1a([np.frombuffer(b"a", np.int8)]) == "0xe40c292c"
    assert tflm_cycles.fnv1a([np.frombuffer(b"foobar", np.int8)]) == "0xbf9cf968"


def test_fixed_input_is_main_cc_s_and_runs_in_the_reference():
    (sample,) = tflm_cycles.fixed_inputs(KWS)
    assert sample.dtype == np.int8 and sample.shape == (1, 49, 10, 1)
    k = np.arange(sample.size)
    assert np.array_equal(sample.reshape(-1).view(np.uint8), ((31 * k + 7) % 256).astype(np.uint8))
    assert tflm_cycles.fnv1a(run_reference(KWS, [sample])).startswith("0x")


def test_model_header_holds_the_flatbuffer():
    text = tflm_cycles.model_header(bytes(range(20)))
    assert "tflm_model[20]" in text and "0x00, 0x01" in text and text.rstrip().endswith("0x13\n};")
    assert f"TFLM_ARENA_BYTES {tflm_cycles.ARENA_BYTES}" in text


def test_checkouts_named_when_missing(tmp_path):
    with pytest.raises(SystemExit, match=r"not a cmsis-nn checkout \(no Include/arm_nnfunctions.h\); pass --cmsis-nn"):
        (tmp_path / tflm_cycles.CHECKOUT_MARKS["tflite_micro"]).parent.mkdir(parents=True)
        (tmp_path / tflm_cycles.CHECKOUT_MARKS["tflite_micro"]).touch()
        tflm_cycles.Checkouts.of(tmp_path)


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
    other = peer_compare.with_peer(_mtk_row("ad_fc_int8"), peers, cycles)   # not in the harness's file
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
def test_peer_compare_refuses_a_file_not_the_harness_s(tmp_path, content):
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(SystemExit) as stop:
        peer_compare.tflm_cycles(path)
    assert str(stop.value).startswith(f"{path}: not bench/tflm_harness/tflm_cycles.py's --json output")
    assert "\n" not in str(stop.value)
