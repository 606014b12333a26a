"""Outside strings never run in a generated file: a model file name with newlines, `$(...)` or CMake
commands stays inside its comment of CMakeLists.txt and tvmgen_<module>.mk (make and cmake run on them
here); a metadata.json naming a module, a member, a file or a RAM region that is no plain name is refused;
arguments that land in YAML (a Zephyr revision, a labgrid exporter's name) are plain words or refused."""

from __future__ import annotations

import itertools
import json
import shutil
import subprocess
import tarfile
from pathlib import Path

import jinja2
import pytest
import yaml

from mtk.buildfiles import folder_layout, fragments
from mtk.cli import main
from mtk.compiled import CompiledModel
from mtk.errors import ModelError
from mtk.labgrid_lab.exporter import exporter_config
from mtk.mlf import write_mlf
from mtk.names import c_comment, plain_word, safe_label
from mtk.transport.ports import SerialPort

from checkout import FAKE

HOSTILE_NAMES = [
    "m\n$(shell touch INJECTED)\n#.tflite",
    "m\nfile(TOUCH INJECTED)\n#.tflite",
    "m\\\n$(shell touch INJECTED)\n.tflite",
    "m #[[\nfile(TOUCH INJECTED)\n#]].tflite",
    "m {{ 7 * 7 }} {% if 1 %}INJECTED{% endif %}.tflite",
]


def compiled_as(tmp_path: Path, change) -> Path:
    folder = tmp_path / "compiled"
    shutil.copytree(FAKE, folder)
    meta = json.loads((folder / "metadata.json").read_text())
    change(meta)
    (folder / "metadata.json").write_text(json.dumps(meta))
    return folder


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_a_model_file_name_stays_in_the_comments_of_the_build_fragments(name, tmp_path):
    folder = compiled_as(tmp_path, lambda m: m.update(model=name))
    model = CompiledModel.load(folder)
    for file, text in fragments(model, folder_layout(model)).items():
        (folder / file).write_text(text)
        assert all(line.startswith("#") or "INJECTED" not in line for line in text.splitlines())
    run = tmp_path / "run"
    run.mkdir()
    if shutil.which("make"):
        subprocess.run(["make", "-n", "-f", str(folder / "tvmgen_default.mk")], cwd=run, capture_output=True)
    if shutil.which("cmake"):
        (run / "CMakeLists.txt").write_text(f"cmake_minimum_required(VERSION 3.13)\nproject(p C)\n"
                                           f"add_subdirectory({folder} lib)\n")
        subprocess.run(["cmake", "-S", str(run), "-B", str(run / "build")], capture_output=True)
    assert not list(tmp_path.rglob("INJECTED"))


def test_the_mlf_holds_the_model_under_a_plain_name(tmp_path):
    folder = compiled_as(tmp_path, lambda m: m.update(model="../../m\n.tflite"))
    write_mlf(CompiledModel.load(folder), b"TFL3", tmp_path / "m.tar")
    with tarfile.open(tmp_path / "m.tar") as tar:
        names = tar.getnames()
    assert "./src/_.._.._m_.tflite" in names and all(".." not in n.split("/") and "\n" not in n for n in names)


@pytest.mark.parametrize("change, what", [
    (lambda m: m.update(module='default.h"\n#include "evil'), "module"),
    (lambda m: m["inputs"][0].update(c_name="input = 0; system(\"x\"); //"), "c_name"),
    (lambda m: m.update(files=["../../etc/passwd"]), "files"),
    (lambda m: m.update(files=["/etc/passwd"]), "files"),
    (lambda m: m.update(outputs=[]), "inputs and outputs"),
    (lambda m: m["memory"].update(constants_in_ram=[{"name": "DTCM))\n*(.text", "constant_bytes": 4,
                                                     "arrays": [[4, 4]]}]), "RAM region"),
    (lambda m: m["memory"].update(regions=[{"name": "SRAM\"); x(\"", "arena_bytes": 0, "limit_bytes": 0,
                                            "live_bytes": []}]), "RAM region"),
])
def test_metadata_read_back_is_checked(change, what, tmp_path):
    folder = compiled_as(tmp_path, change)
    with pytest.raises(ModelError, match=f"is not the metadata of a compiled model.*{what}"):
        CompiledModel.load(folder)


@pytest.mark.parametrize("revision", ["v4.2.0\n    - name: evil", "main # x", "", "a..b", "{{ x }}"])
def test_a_zephyr_revision_that_is_no_plain_word_is_refused(revision, capsys):
    assert main(["zephyr-manifest", "--revision", revision]) == 2
    err = capsys.readouterr().err
    assert "is not a plain name" in err and len(err.splitlines()) == 1


def test_a_plain_revision_lands_in_the_manifest(capsys):
    assert main(["zephyr-manifest", "--revision", "v4.2.0-rc1/x_y+z"]) == 0
    assert "revision: v4.2.0-rc1/x_y+z\n" in capsys.readouterr().out


def test_the_labgrid_exporter_yaml_takes_no_outside_string_as_yaml_or_jinja(capsys):
    assert main(["ports", "--labgrid-exporter", "rack\n evil: {{ 1 }}"]) == 2
    assert "is not a plain name" in capsys.readouterr().err
    port = SerialPort(device="/dev/ttyACM0", vid_pid="0483:374b", serial_number="066D{{x}}\nFF",
                      product="ST-LINK\n{% if 1 %}evil{% endif %}", boards=["nucleo_f746zg"])
    good = SerialPort(device="/dev/ttyACM1", vid_pid="0483:374b", serial_number="066DFF49",
                      product="ST-LINK {{ x }}\nevil: 1", boards=["nucleo_f746zg"])
    text = exporter_config([port, good], "rack1")
    rendered = jinja2.Environment(line_statement_prefix="#", line_comment_prefix="##").from_string(text).render()
    assert yaml.safe_load(rendered) == {"nucleo_f746zg-066DFF49": {   # as labgrid-exporter reads it
        "USBSerialPort": {"match": {"ID_SERIAL_SHORT": "066DFF49"}, "speed": 115200},
        "USBDebugger": {"match": {"ID_SERIAL_SHORT": "066DFF49"}}}}
    assert "add-match 'rack1/nucleo_f746zg-066DFF49/*'" in text


@pytest.mark.parametrize("text", ["a */ b", "a\nb", "a\\", "??/", "{{ x }}", "\x00é"])
def test_comment_and_label_text_is_one_inert_line(text):
    comment = c_comment(text)
    assert comment.isascii() and comment.isprintable() and not any(
        s in comment for s in ("*/", "/*", "??", "\\", "{", "}"))
    assert safe_label(text).replace(".", "").replace("_", "").replace("-", "").replace("+", "").isalnum() \
        or set(safe_label(text)) <= set("._-+")


def test_no_comment_delimiter_or_trigraph_is_made_by_escaping_another():
    """A backslash became a slash after the delimiters were escaped ('/*\\' gave '/_*/', closing the comment);
    '???=' gave the trigraph '??='. Every string of up to 4 of these characters:"""
    for size in range(1, 5):
        for chars in itertools.product("/*\\?{}=x", repeat=size):
            comment = c_comment("".join(chars))
            assert not any(pair in comment for pair in ("*/", "/*", "??")), ("".join(chars), comment)


def test_plain_word():
    assert plain_word("v4.2.0", "--revision") == "v4.2.0"
    for bad in ("a b", "-x", "a..b", "x" * 201, ""):
        with pytest.raises(Exception, match="not a plain name"):
            plain_word(bad, "--revision")


def test_no_outside_string_in_a_written_tar_member(tmp_path):
    folder = compiled_as(tmp_path, lambda m: m.update(model="m.tflite"))
    write_mlf(CompiledModel.load(folder), b"TFL3", tmp_path / "m.tar")
    with tarfile.open(tmp_path / "m.tar") as tar:
        assert tar.extractfile("./src/m.tflite").read() == b"TFL3"
