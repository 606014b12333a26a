"""Builds reused across runs: a second `mtk run` of the same model in QEMU takes the firmware from the cache
($XDG_CACHE_HOME/mtk, its own folder per test: conftest.py), a changed option builds again."""

from __future__ import annotations

import json

import pytest

from mtk.buildcache import cache_root
from mtk.cli import main

from checkout import REPO

DIGITS_INT8 = REPO / "models" / "digits_cnn_int8.tflite"


@pytest.mark.qemu
def test_a_second_run_reuses_the_firmware_and_a_changed_option_builds_again(capsys):
    def run(*extra: str) -> tuple[dict, str]:
        assert main(["run", str(DIGITS_INT8), "-n", "1", "--json", *extra]) == 0
        out, err = capsys.readouterr()
        return json.loads(out), err

    first, err = run()
    assert "reusing the firmware" not in err and "building baremetal firmware" in err
    second, err = run()
    assert "reusing the firmware built before" in err and "building" not in err
    assert second["outputs"] == first["outputs"] and second["flash_bytes"] == first["flash_bytes"]
    _, err = run("--max-recompute", "0.2")
    assert "reusing the firmware" not in err
    _, err = run("--no-cache")
    assert "reusing the firmware" not in err
    assert len(list((cache_root() / "firmware").iterdir())) == 2
