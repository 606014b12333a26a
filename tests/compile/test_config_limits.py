"""Config files: tuning JSON and lab YAML are read with limits (UTF-8, size, depth,
aliases, integer digits); every problem is one line and exit 2, including a runner name the board
cannot use."""

from __future__ import annotations

import pytest

from mtk.cli import main
from mtk.errors import MtkError
from mtk.lab import lab_targets, read_hardware_map
from mtk.tuning import read_entries

from checkout import REPO

DIGITS_INT8 = REPO / "models" / "digits_cnn_int8.tflite"


def test_bad_tuning_file_through_the_cli_is_exit_2(tmp_path, capsys):
    path = tmp_path / "t.json"
    path.write_text("[" * 100_000)
    code = main(["compile", str(DIGITS_INT8), "-o", str(tmp_path / "out"), "--tuning", str(path)])
    err = capsys.readouterr().err
    assert code == 2 and "nests more than" in err and "Traceback" not in err


BILLION_LAUGHS = "- &a [x, x, x, x, x, x, x, x, x]\n" + "".join(   # 9^13 x from 1 KB
    f"- &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(12))


BAD_FILES = {   # (reader, file name, content, message)
    "json 100,000 deep": (read_entries, "t.json", "[" * 100_000 + "]" * 100_000, "nests more than 64 levels"),
    "json 5000-digit integer": (read_entries, "t.json", '{"format": "x", "layers": {"a": ' + "9" * 5000 + "}}",
                                "not valid JSON"),
    "json not UTF-8": (read_entries, "t.json", b"\xff\xfe{}", "not UTF-8 text"),
    "json cut": (read_entries, "t.json", "{", "not valid JSON"),
    "json brackets in a string": (read_entries, "t.json", '{"a": "' + "[" * 200 + '"}', "is not an mtk tuning file"),
    "yaml not UTF-8": (read_hardware_map, "map.yaml", b"- id: \xff\n", "not UTF-8 text"),
    "yaml 5000 deep": (read_hardware_map, "map.yaml", "- " * 5000 + "x\n", "nests more than 64 levels"),
    "yaml billion laughs": (read_hardware_map, "map.yaml", BILLION_LAUGHS, "more than 100 YAML aliases"),
    "yaml nested id": (read_hardware_map, "map.yaml",
                       "- {connected: true, id: [1, 2], platform: mps2/an386, product: p, runner: qemu}\n",
                       "'id' must be a single value"),
    "yaml cut": (read_hardware_map, "map.yaml", "- {connected: true, id: 1\n", "cannot read the hardware map"),
}


@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_bad_config_file(case, tmp_path):
    reader, name, content, message = BAD_FILES[case]
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(MtkError, match=message):
        reader(path)


def test_a_runner_the_board_cannot_use_is_bad_input(tmp_path, capsys):
    path = tmp_path / "map.yaml"
    path.write_text("- {connected: true, id: '123', platform: nucleo_f746zg, product: ST-LINK, runner: jlinkk}\n")
    with pytest.raises(MtkError, match="runner 'jlinkk' cannot flash nucleo_f746zg") as err:
        list(lab_targets(path))
    assert err.value.exit_code == 2
    code = main(["bench", str(DIGITS_INT8), "--lab", str(path)])
    assert code == 2 and "jlinkk" in capsys.readouterr().err
