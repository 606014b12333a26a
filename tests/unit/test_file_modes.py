"""Files and folders mtk writes through its atomic helpers get the modes the umask gives an ordinary
create (tempfile alone would leave them 0600/0700: a tuning file or model folder meant to be shared)."""

from __future__ import annotations

import os

import pytest

from mtk.fsutil import atomic_output_dir, atomic_output_file


@pytest.fixture(params=[0o022, 0o002, 0o077])
def mask(request):
    old = os.umask(request.param)
    yield request.param
    os.umask(old)


def test_atomic_outputs_honour_the_umask(tmp_path, mask):
    with atomic_output_dir(tmp_path / "out") as folder:
        (folder / "a.c").write_text("int a;\n")
    with atomic_output_file(tmp_path / "tuning.json") as tmp:
        tmp.write_text("{}\n")
    assert (tmp_path / "out").stat().st_mode & 0o777 == 0o777 & ~mask
    assert (tmp_path / "out" / "a.c").stat().st_mode & 0o777 == 0o666 & ~mask
    assert (tmp_path / "tuning.json").stat().st_mode & 0o777 == 0o666 & ~mask
