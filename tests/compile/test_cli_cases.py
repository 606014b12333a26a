"""The CLI fuzz cases of bench/cli_cases.py (`fuzz_campaign.py --cli-inputs`): a few of each family
pass, and the checks they make find what they look for (a marker outside a comment, a file changed)."""

from __future__ import annotations

import random
import sys

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
