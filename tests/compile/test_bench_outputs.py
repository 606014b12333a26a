"""The bench scripts' --json never replaces one of their inputs: refused before any work (exit 2, the error naming
both), the input left as it was; and a --json file is written whole, never half."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from checkout import REPO, toolkit_env
from mtk.fsutil import write_output_text

BENCH = REPO / "bench"


@pytest.mark.parametrize("script, argv", [
    ("mobilenetv2_anchor.py", ["--model", "{input}", "--json", "{input}"]),
    ("ram_vs_tflm.py", ["{input}", "--json", "{input}"]),
    ("peer_compare.py", ["--tuning", "{input}", "--json", "{input}"]),
    ("layer_compare.py", ["--work", "{folder}", "--json", "{folder}"]),
])
def test_json_output_onto_an_input_is_refused_before_any_work(script, argv, tmp_path):
    model, folder = tmp_path / "m.tflite", tmp_path / "work"
    model.write_bytes(b"not rewritten")
    folder.mkdir()
    args = [a.format(input=model, folder=folder) for a in argv]
    done = subprocess.run([sys.executable, str(BENCH / script), *args], capture_output=True, text=True,
                          env=toolkit_env(), timeout=120)
    assert done.returncode == 2, done.stderr
    assert "an input of this command: it would be replaced" in done.stderr and "Traceback" not in done.stderr
    assert model.read_bytes() == b"not rewritten" and list(folder.iterdir()) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.tflite", "work"]


def test_write_output_text_replaces_whole(tmp_path):
    out = tmp_path / "rows.json"
    out.write_text("old")
    write_output_text(out, "[1, 2]\n")
    assert out.read_text() == "[1, 2]\n" and [p.name for p in tmp_path.iterdir()] == ["rows.json"]
