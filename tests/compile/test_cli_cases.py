"""The CLI fuzz cases of bench/cli_cases.py (`fuzz_campaign.py --cli-inputs`): a few of each family
pass, and the checks they make find what they look for (a marker outside a comment, a file changed)."""

from __future__ import annotations

import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from checkout import REPO

sys.path.insert(0, str(REPO / "bench"))
import cli_cases  # noqa: E402


@pytest.mark.slow
@pytest.mark.parametrize("family", sorted(cli_cases.FAMILIES))
def test_each_family_of_cases_passes(family, tmp_path):
    for k in range(2):
        work = tmp_path / str(k)
        work.mkdir()
        case = cli_cases.FAMILIES[family][1](random.Random(f"test:{family}:{k}"), work)
        assert cli_cases.run_case(case, work, timeout=300) == ("ok", ""), case.describe


def test_the_injection_check_finds_a_marker_outside_comments(tmp_path):
    (tmp_path / "CMakeLists.txt").write_text("# m INJECTED\nadd_library(x)\n")
    assert cli_cases.injection_in(tmp_path) is None
    (tmp_path / "tvmgen_default.mk").write_text("# m\n$(shell touch INJECTED)\n")
    assert "tvmgen_default.mk" in cli_cases.injection_in(tmp_path)
    (tmp_path / "tvmgen_default.mk").unlink()
    (tmp_path / "tvmgen_default.h").write_text('/* #error */\n#include <stdint.h>\n#error "x"\n')
    assert "a directive mtk does not write" in cli_cases.injection_in(tmp_path)


def test_the_snapshot_sees_a_file_changed_in_a_folder(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a").write_text("x")
    before = cli_cases.snapshot([tmp_path / "sub"])
    (tmp_path / "sub" / "a").write_text("y")
    assert cli_cases.snapshot([tmp_path / "sub"]) != before


@pytest.fixture(scope="module")
def forked_mtk() -> cli_cases.ForkedMtk:
    return cli_cases.ForkedMtk()


@pytest.mark.parametrize("argv", [["boards", "--board", "x"], ["zephyr-manifest", "--revision", "a\rb\n$(x)"],
                                  ["compile", "missing.tflite", "-o", "out"], ["boards", "--json"]])
def test_a_forked_mtk_answers_as_a_fresh_one(forked_mtk, argv, tmp_path):
    assert forked_mtk(argv, tmp_path, 60) == cli_cases.fresh_mtk(argv, tmp_path, 60)


@pytest.mark.slow
def test_a_forked_compile_writes_what_a_fresh_one_does(forked_mtk, tmp_path):
    model = tmp_path / "m\n.tflite"
    model.write_bytes(cli_cases.tiny_model(("a", "b", "y")))
    results = {}
    for name, mtk in (("fresh", cli_cases.fresh_mtk), ("forked", forked_mtk)):
        status, _ = mtk(["compile", str(model), "-o", name], tmp_path, 120)
        results[name] = status, cli_cases.snapshot([tmp_path / name])
    fresh, forked = results["fresh"], results["forked"]
    assert fresh[0] == forked[0] == 0
    assert sorted(fresh[1].values()) == sorted(forked[1].values()) and len(fresh[1]) > 3


def test_a_forked_mtk_past_its_timeout_is_stopped_with_its_process_group(forked_mtk, tmp_path):
    model = tmp_path / "m.tflite"
    model.write_bytes(cli_cases.tiny_model(("a", "b", "y")))
    start = time.monotonic()
    with pytest.raises(subprocess.TimeoutExpired):
        forked_mtk(["compile", str(model), "-o", "out"], tmp_path, 0.05)
    assert time.monotonic() - start < 5


def test_the_forked_child_leaves_the_parents_temporary_folders_alone(forked_mtk):
    with tempfile.TemporaryDirectory() as tmp:
        assert forked_mtk(["boards"], Path(tmp), 60)[0] == 0
        assert Path(tmp).is_dir()
