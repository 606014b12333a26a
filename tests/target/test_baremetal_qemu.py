"""The bare-metal firmware project built by hand with make (real arm-none-eabi-gcc), and a build error shown."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from mtk.compiled import CompiledModel
from mtk.boards import all_boards, get_board
from mtk.errors import TargetError
from mtk.platforms import ProjectOptions, get_platform

from checkout import FAKE

QEMU_BOARDS = [b for b in all_boards() if b.qemu]
CORE_TEXT_LIMIT = 6144  # firmware core + port + startup + glue, without the model (1 KB of it: the


def _text_sizes(elf: Path) -> dict[str, int]:
    """.text bytes per object file, from the link map (an entry may wrap after a long section name)."""
    sizes: dict[str, int] = {}
    section = None
    for line in (elf.parent / "firmware.map").read_text().splitlines():
        parts = line.split()
        if parts and parts[0].startswith((".text", ".rodata")) and line.startswith(" "):
            section, parts = parts[0], parts[1:]
        elif not (section and line.startswith(" " * 16)):
            section = None
            continue
        if section and len(parts) == 3 and parts[1].startswith("0x") and parts[2].endswith(".o"):
            sizes[parts[2]] = sizes.get(parts[2], 0) + int(parts[1], 16)
            section = None
    return sizes


@pytest.mark.qemu
@pytest.mark.parametrize("board", QEMU_BOARDS, ids=lambda b: b.name)
def test_builds_by_hand_with_make(board, tmp_path):
    project = get_platform("baremetal").render(CompiledModel.load(FAKE), board, tmp_path / "p", ProjectOptions())
    subprocess.run(["make", "-s"], cwd=project, check=True, capture_output=True)
    elf = project / "build" / "firmware.elf"
    core = sum(size for obj, size in _text_sizes(elf).items() if "model/src" not in obj)
    assert 0 < core < CORE_TEXT_LIMIT


@pytest.mark.qemu
def test_build_error_shows_compiler_message(tmp_path):
    platform = get_platform("baremetal")
    project = platform.render(CompiledModel.load(FAKE), get_board("mps2/an386"), tmp_path / "p", ProjectOptions())
    (project / "model" / "src" / "default_lib.c").write_text("int broken(void) { return undeclared_thing; }\n")
    with pytest.raises(TargetError, match="undeclared_thing"):
        platform.build(project)
