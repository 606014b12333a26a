"""Flash and RAM a firmware ELF uses, from its section headers (what `size` reports, by role)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from elftools.common.exceptions import ELFError
from elftools.elf.constants import SH_FLAGS
from elftools.elf.elffile import ELFFile

from .errors import TargetError

# The code copied into a board's code RAM: the bare-metal linker script's section (baremetal_app/linker.ld.j2), and
# the one Zephyr's CONFIG_CODE_DATA_RELOCATION makes for the region CODERAM (platforms/zephyr.CODE_RAM_REGION)
CODE_RAM_SECTIONS = (".code_ram", ".coderam_text_reloc")


@dataclass(frozen=True)
class ElfSizes:
    text_bytes: int    # code and read-only data (flash)
    data_bytes: int    # initialised data (flash image, copied to RAM)
    bss_bytes: int     # zeroed RAM: arena, buffers, stack, heap reservations
    stack_bytes: int | None = None   # the main stack's reservation (section .stack), within bss_bytes
    code_ram_bytes: int = 0   # code copied from flash into the code bus's RAM (CODE_RAM_SECTIONS), within text_bytes

    @property
    def flash_bytes(self) -> int:
        return self.text_bytes + self.data_bytes

    @property
    def ram_bytes(self) -> int:
        """The RAM the firmware takes: its data and the code it runs from RAM."""
        return self.data_bytes + self.bss_bytes + self.code_ram_bytes


def elf_sizes(elf: Path) -> ElfSizes:
    text = data = bss = 0
    stack = None
    code_ram = 0
    try:
        with open(elf, "rb") as f:
            for section in ELFFile(f).iter_sections():
                flags = section["sh_flags"]
                if not flags & SH_FLAGS.SHF_ALLOC:
                    continue
                if section.name == ".stack":
                    stack = section["sh_size"]
                if section.name in CODE_RAM_SECTIONS:
                    code_ram += section["sh_size"]
                if section["sh_type"] == "SHT_NOBITS":
                    bss += section["sh_size"]
                elif flags & SH_FLAGS.SHF_WRITE:
                    data += section["sh_size"]
                else:
                    text += section["sh_size"]
    except (OSError, ELFError) as err:
        raise TargetError(f"cannot read the firmware {elf} ({err})") from None
    return ElfSizes(text, data, bss, stack, code_ram)
