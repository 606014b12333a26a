"""A 16x8 quantized digits model validated in QEMU with the float test set."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from mtk.cli import main
from mtk.paths import MODELS

from test_quantize import digits_16x8  # noqa: F401 (a fixture)

DIGITS_TEST = MODELS / "digits_test.npz"


@pytest.mark.qemu
def test_16x8_model_validates_on_target(digits_16x8, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """mtk validate with the float test set: quantized to the int16 input, bit-exact on an386, TFLM's accuracy."""
    out, _ = digits_16x8
    with np.load(DIGITS_TEST) as data:
        np.savez(tmp_path / "test40.npz", x=data["x"][:40], y=data["y"][:40])
    assert main(["validate", str(out), "--board", "mps2/an386", "--input", str(tmp_path / "test40.npz"), "--json",
                 "-q"]) == 0
    result = json.loads(capsys.readouterr().out)
    target, tflm = result["evaluation"]["accuracy"]
    assert result["bit_exact"] and target["top1"] == tflm["top1"] >= 0.95
