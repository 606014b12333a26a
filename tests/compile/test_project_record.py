"""`mtk project` over an application: mtk-project.json is data from disk. A record naming files outside
the application (`..`, absolute, through a symlink), of the wrong types or too big is refused in one
line and nothing is touched; edits of the files mtk owns are named when they are replaced."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from mtk.cli import main

from checkout import FAKE

BOARD = "qemu_cortex_m3"


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def app(tmp_path) -> Path:
    assert main(["project", str(FAKE), "--board", BOARD, "-o", str(tmp_path / "app")]) == 0
    return tmp_path / "app"


def edit_record(app: Path, change) -> None:
    record = json.loads((app / "mtk-project.json").read_text())
    change(record)
    (app / "mtk-project.json").write_text(json.dumps(record))


def rerender(app: Path, *extra: str) -> int:
    return main(["project", str(FAKE), "--board", "mps2/an385", "-o", str(app), *extra])


def victim(tmp_path: Path) -> Path:
    path = tmp_path / "model.tflite"
    path.write_bytes(b"the user's model")
    return path


@pytest.mark.parametrize("spelling", ["../model.tflite", "{abs}", "src/../../model.tflite", "./../model.tflite"])
def test_a_record_naming_a_file_outside_is_refused(spelling, app, tmp_path, capsys):
    outside = victim(tmp_path)
    name = spelling.format(abs=outside)
    edit_record(app, lambda r: r["files"].__setitem__(name, sha(outside)))
    capsys.readouterr()
    assert rerender(app, "--force") == 2
    err = capsys.readouterr().err
    assert "is not a plain path inside the application" in err and "Traceback" not in err
    assert outside.read_bytes() == b"the user's model"
    assert json.loads((app / "mtk-project.json").read_text())["board"] == BOARD   # nothing rendered


def test_a_record_naming_a_file_through_a_symlinked_folder_is_refused(app, tmp_path, capsys):
    outside = victim(tmp_path)
    os.symlink(tmp_path, app / "up")
    edit_record(app, lambda r: r["files"].__setitem__("up/model.tflite", sha(outside)))
    assert rerender(app) == 2
    assert "is a symlink or a file: mtk writes only inside the application" in capsys.readouterr().err
    assert outside.read_bytes() == b"the user's model"


@pytest.mark.parametrize("owned", ["model", "firmware", "src"])
def test_an_owned_folder_that_is_a_symlink_out_is_not_followed(owned, app, tmp_path, capsys):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "keep.c").write_text("mine")
    (elsewhere / "model_glue.c").write_text("mine too")
    os.replace(app / owned, tmp_path / "moved")
    os.symlink(elsewhere, app / owned)
    assert rerender(app, "--force") == 2
    assert "symlink" in capsys.readouterr().err
    assert sorted(p.name for p in elsewhere.iterdir()) == ["keep.c", "model_glue.c"]
    assert (elsewhere / "model_glue.c").read_text() == "mine too"


@pytest.mark.parametrize("change, message", [
    (lambda r: r.__setitem__("files", ["CMakeLists.txt"]), "'files' is not a dict"),
    (lambda r: r["files"].__setitem__("prj.conf", 42), "has no sha256"),
    (lambda r: r["files"].__setitem__("model/include/x.h", "0" * 64), "is mtk's own"),
    (lambda r: r["files"].__setitem__("a\nb", "0" * 64), "is not a plain path"),
    (lambda r: r.__setitem__("board", ["x"]), "'board' is not a str"),
    (lambda r: r.update(files={f"f{k}": "0" * 64 for k in range(10_001)}), "lists 10,001 files"),
])
def test_a_record_of_the_wrong_shape_is_refused_in_one_line(change, message, app, capsys):
    edit_record(app, change)
    capsys.readouterr()
    assert rerender(app) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.splitlines()) <= 2


def test_a_huge_or_odd_record_is_refused(app, capsys):
    (app / "mtk-project.json").write_text(" " * (1 << 20) + "{}")
    assert rerender(app) == 2
    assert "at most 1,048,576 bytes" in capsys.readouterr().err
    (app / "mtk-project.json").write_text("[" * 100_000)
    assert rerender(app) == 2
    assert "no valid mtk-project.json" in capsys.readouterr().err


def test_edits_of_the_files_mtk_owns_are_named_when_replaced(app, capsys):
    (app / "src" / "model_glue.c").write_text("/* my glue */\n")
    (app / "firmware" / "mtk_core.c").write_text("/* my core */\n")
    capsys.readouterr()
    assert rerender(app) == 0
    err = capsys.readouterr().err
    assert "replaced your edits of firmware/mtk_core.c, src/model_glue.c: mtk owns them" in err
    assert "my glue" not in (app / "src" / "model_glue.c").read_text()


def test_a_record_from_before_owned_digests_still_refreshes(app, capsys):
    edit_record(app, lambda r: r.pop("owned"))
    (app / "src" / "main.c").write_text("/* mine */\n")
    assert rerender(app) == 0
    assert (app / "src" / "main.c").read_text() == "/* mine */\n"
    assert "kept your edits of src/main.c" in capsys.readouterr().err


def test_files_mtk_did_not_write_stay_even_in_its_folders(app, capsys):
    (app / "model" / "NOTES.md").write_text("mine")
    (app / "firmware" / "my_port.c").write_text("/* mine */")
    edit_record(app, lambda r: r["owned"].__setitem__("model/src/old_kernels.c", "0" * 64))
    (app / "model" / "src" / "old_kernels.c").write_text("/* a source of the last render */")
    capsys.readouterr()
    assert rerender(app) == 0
    assert (app / "model" / "NOTES.md").read_text() == "mine" and (app / "firmware" / "my_port.c").exists()
    assert not (app / "model" / "src" / "old_kernels.c").exists()   # mtk's, and written no more
    assert "kept files mtk did not write in model/, firmware/: firmware/my_port.c, model/NOTES.md" in \
        capsys.readouterr().err


def test_a_folder_where_mtk_writes_a_file_is_refused(app, capsys):
    (app / "src" / "main.c").unlink()
    (app / "src" / "main.c").mkdir()
    assert rerender(app) == 2
    assert "is a folder where mtk writes a file" in capsys.readouterr().err
