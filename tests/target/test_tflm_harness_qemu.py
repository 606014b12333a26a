"""bench/tflm_harness/tflm_cycles.py's harness: TFLM + CMSIS-NN built from checkouts a user gives, run in QEMU under
the cycle model. It runs when MTK_TFLITE_MICRO names a tflite-micro checkout whose
tensorflow/lite/micro/tools/make/downloads holds cmsis_nn, flatbuffers, gemmlowp and ruy (or MTK_CMSIS_NN,
MTK_FLATBUFFERS, MTK_GEMMLOWP, MTK_RUY name them), and is skipped otherwise; MTK_TFLM_WORK keeps its TFLM build
(tflm_cycles.py --work) between runs: compiling TFLM takes minutes."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from checkout import REPO, SHARED_MODELS

sys.path.insert(0, str(REPO / "bench" / "tflm_harness"))
sys.path.insert(0, str(REPO / "bench"))

import tflm_cycles  # noqa: E402
from mtk.boards import get_board  # noqa: E402

PEER = SHARED_MODELS.parent / "peer" / "tflm_qemu.json"


def _checkouts() -> tflm_cycles.Checkouts | None:
    if not os.environ.get("MTK_TFLITE_MICRO"):
        return None
    given = {name: Path(os.environ[f"MTK_{name.upper()}"]) for name in ("cmsis_nn", "flatbuffers", "gemmlowp", "ruy")
             if os.environ.get(f"MTK_{name.upper()}")}
    return tflm_cycles.Checkouts.of(Path(os.environ["MTK_TFLITE_MICRO"]), **given)


@pytest.mark.qemu
@pytest.mark.skipif(not os.environ.get("MTK_TFLITE_MICRO"), reason="needs a tflite-micro checkout (MTK_TFLITE_MICRO)")
def test_harness_runs_tflm_under_the_cycle_model(tmp_path):
    """AD on the M4: outputs exactly tflite-micro's; instructions within 1 % of the peer file's (other TFLM and
    CMSIS-NN versions, marker calls); more estimated cycles than instructions (loads take 2 on the M4)."""
    build = tflm_cycles.TflmBuild(_checkouts(), Path(os.environ.get("MTK_TFLM_WORK", tmp_path)), 2)
    model = SHARED_MODELS / "ad_fc_int8.tflite"
    row = tflm_cycles.measure(build, model, get_board("mps2/an386"), tflm_cycles.peer_instructions(PEER))
    assert row["exact"]
    assert abs(row["instructions_vs_peer"]) < 0.01
    assert row["instructions"] < row["estimated_cycles"] < 3 * row["instructions"]
