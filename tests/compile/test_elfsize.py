"""Flash and RAM of a firmware ELF by its sections (mtk.elfsize): the code copied into a board's code RAM counts in
both, the bare-metal linker script's .code_ram and Zephyr's CONFIG_CODE_DATA_RELOCATION section alike."""

from __future__ import annotations

import subprocess

import pytest

from armbuild import arm_gcc
from mtk.elfsize import elf_sizes

SECTIONS = """
    .section .text, "ax"
    .space 64
    .section .data, "aw"
    .space 8
    .section .bss, "aw", %nobits
    .space 32
"""


@pytest.mark.parametrize("section", [".code_ram", ".coderam_text_reloc"])
def test_code_in_code_ram_counts_in_flash_and_in_ram(tmp_path, section):
    source, obj = tmp_path / "sections.s", tmp_path / "sections.o"
    source.write_text(SECTIONS + f'    .section {section}, "ax"\n    .space 16\n')
    subprocess.run([arm_gcc(), "-mcpu=cortex-m4", "-mthumb", "-c", str(source), "-o", str(obj)], check=True)
    sizes = elf_sizes(obj)
    assert (sizes.text_bytes, sizes.data_bytes, sizes.bss_bytes, sizes.code_ram_bytes) == (80, 8, 32, 16)
    assert (sizes.flash_bytes, sizes.ram_bytes) == (88, 56)
    source.write_text(SECTIONS)
    subprocess.run([arm_gcc(), "-mcpu=cortex-m4", "-mthumb", "-c", str(source), "-o", str(obj)], check=True)
    assert (elf_sizes(obj).code_ram_bytes, elf_sizes(obj).ram_bytes) == (0, 40)
