"""--weights-in-ram links the model's constants into RAM, loaded from flash: the firmware ELF's constant arrays
sit in the board's RAM (the system region's .data, or a region of their own with its own load section, or split
across both), and a model whose constants the board's RAM cannot hold is refused before anything is built; a
compiled folder whose constants' region is no C identifier (it names Zephyr's linker snippet) is refused too."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from elftools.elf.elffile import ELFFile
from elftools.elf.sections import SymbolTableSection

from mtk.boards import Board, get_board
from mtk.cli import main
from mtk.compiler import compile_model
from mtk.platforms import ProjectOptions, get_platform

from checkout import FAKE
from harness import conv_model, fc_chain, split_ram_an547


def fc_model(depth: int, units: int) -> bytes:
    return conv_model("FULLY_CONNECTED", (1, depth), (units, depth), (1, units), per_channel=True,
                      fused_activation_function="NONE")


def constant_arrays(elf: Path) -> dict[str, int]:
    """The ELF's constant arrays of the model (tvmgen_default_c<N>_...): name -> address."""
    with open(elf, "rb") as f:
        symbols = next(s for s in ELFFile(f).iter_sections() if isinstance(s, SymbolTableSection))
        return {s.name: s["st_value"] for s in symbols.iter_symbols() if s.name.startswith("tvmgen_default_c")}


def load_sections(elf: Path) -> dict[str, tuple[int, int]]:
    """Loaded sections: name -> (address, load address)."""
    with open(elf, "rb") as f:
        e = ELFFile(f)
        segments = [seg for seg in e.iter_segments() if seg["p_type"] == "PT_LOAD"]
        out = {}
        for section in e.iter_sections():
            seg = next((g for g in segments if g.section_in_segment(section) and section["sh_type"] != "SHT_NOBITS"),
                       None)
            if seg is not None and section["sh_size"]:
                out[section.name] = (section["sh_addr"], section["sh_addr"] - seg["p_vaddr"] + seg["p_paddr"])
        return out


def firmware(model: bytes, board: str | Board, tmp: Path, weights_in_ram: bool) -> tuple[Path, object]:
    tmp.mkdir(exist_ok=True)
    path = tmp / "fc.tflite"
    path.write_bytes(model)
    board = board if isinstance(board, Board) else get_board(board)
    compiled = compile_model(path, tmp / "compiled", board=board, weights_in_ram=weights_in_ram)
    platform = get_platform("baremetal")
    return platform.build(platform.render(compiled, board, tmp / "project", ProjectOptions())), compiled


def within(address: int, base: int, size: int) -> bool:
    return base <= address < base + size


@pytest.mark.slow
def test_the_constants_link_into_ram_loaded_from_flash(tmp_path):
    qemu = get_board("mps2/an386").qemu
    model = fc_model(600, 40)
    flash_elf, in_flash = firmware(model, "mps2/an386", tmp_path / "flash", weights_in_ram=False)
    ram_elf, in_ram = firmware(model, "mps2/an386", tmp_path / "ram", weights_in_ram=True)
    assert (in_flash.memory.constants_regions, in_ram.memory.constants_regions) == ((), ("RAM",))
    assert in_ram.constant_bytes == in_flash.constant_bytes >= 24_000
    flash_arrays, ram_arrays = constant_arrays(flash_elf), constant_arrays(ram_elf)
    assert flash_arrays.keys() == ram_arrays.keys() and ram_arrays
    assert all(within(a, qemu.code.base, qemu.code.size) for a in flash_arrays.values())
    assert all(within(a, qemu.ram.base, qemu.ram.size) for a in ram_arrays.values())
    address, load = load_sections(ram_elf)[".data"]   # copied at startup from its image in flash
    assert within(address, qemu.ram.base, qemu.ram.size) and within(load, qemu.code.base, qemu.code.size)


@pytest.mark.slow
def test_constants_the_tcm_cannot_hold_go_to_the_next_region_with_a_load_section_of_their_own(tmp_path):
    """The AN547's DTCM (512 KB, the system region, tightly coupled) cannot hold 510 KB of constants beside the firmware: SRAM does."""
    board = get_board("mps3/an547")
    sram = next(r for r in board.ram_regions if r.name == "SRAM")
    elf, compiled = firmware(fc_model(1000, 500), "mps3/an547", tmp_path, weights_in_ram=True)
    assert compiled.memory.constants_regions == ("SRAM",)
    assert all(within(a, sram.base, sram.size) for a in constant_arrays(elf).values())
    address, load = load_sections(elf)[".sram_constants"]
    assert address == sram.base and within(load, board.qemu.code.base, board.qemu.code.size)
    source = (tmp_path / "compiled" / "src" / "tvmgen_default.c").read_text()
    assert 'TVMGEN_SECTION(".mtk_constants.SRAM")' in source


@pytest.mark.slow
def test_constants_no_region_holds_are_split_each_array_whole_in_one_region(tmp_path):
    """The cut-down AN547 (DTCM 48 KB with the firmware, SRAM 40 KB) holds fc_chain()'s 61 KB of constants only
    split: SRAM's arrays in its load section, DTCM's in .data; the C names each array's section."""
    board = split_ram_an547()
    dtcm, sram = board.ram_regions
    elf, compiled = firmware(fc_chain(), board, tmp_path, weights_in_ram=True)
    shares = {share.name: share for share in compiled.memory.constants_in_ram}
    assert list(shares) == ["DTCM", "SRAM"]
    assert sum(s.constant_bytes for s in shares.values()) == compiled.constant_bytes
    arrays = constant_arrays(elf)
    in_sram = {name for name, address in arrays.items() if within(address, sram.base, sram.size)}
    in_dtcm = {name for name, address in arrays.items() if within(address, dtcm.base, dtcm.size)}
    assert in_sram and in_dtcm and in_sram | in_dtcm == arrays.keys()
    assert len(in_sram) == len(shares["SRAM"].arrays) and len(in_dtcm) == len(shares["DTCM"].arrays)
    sections = load_sections(elf)
    assert sections[".sram_constants"][0] == sram.base and ".data" in sections
    source = (tmp_path / "compiled" / "src" / "tvmgen_default.c").read_text()
    assert source.count('TVMGEN_SECTION(".mtk_constants.SRAM")') == len(in_sram)
    assert "copied from flash into RAM regions DTCM, SRAM (each array into one) at startup" in source


def test_a_small_model_on_the_an547_keeps_its_constants_in_the_dtcm(tmp_path):
    path = tmp_path / "fc.tflite"
    path.write_bytes(fc_model(600, 40))
    compiled = compile_model(path, tmp_path / "c", board="mps3/an547", weights_in_ram=True)
    assert compiled.memory.constants_regions == ("DTCM",)
    assert "TVMGEN_SECTION" not in (tmp_path / "c" / "src" / "tvmgen_default.c").read_text()


def test_constants_the_boards_ram_cannot_hold_are_refused_in_one_line(tmp_path, capsys):
    """qemu_cortex_m3: 64 KB of RAM, 56 KB of weights and the firmware's stack and data beside them."""
    path = tmp_path / "fc.tflite"
    path.write_bytes(fc_model(1000, 56))
    out = tmp_path / "out"
    assert main(["compile", str(path), "--board", "qemu_cortex_m3", "-o", str(out)]) == 0
    assert main(["compile", str(path), "--board", "qemu_cortex_m3", "-o", str(tmp_path / "out2"),
                 "--weights-in-ram"]) == 2
    error = capsys.readouterr().err.splitlines()
    refusal = next(line for line in error if line.startswith("mtk compile: error:"))
    assert re.search(r"fc.tflite does not fit qemu_cortex_m3: its constants \(5\d,\d{3} B, --weights-in-ram\) fit in "
                     r"none of its RAM regions \(room beside the firmware's stack, buffers and data: RAM 4\d,\d{3} B\)$",
                     refusal)
    assert not (tmp_path / "out2").exists()


def test_ad_on_the_stm32f746_splits_its_constants_across_dtcm_and_sram0(tmp_path, capsys, shared_model_paths):
    """MLPerf Tiny AD: 271,000 B of constants, in neither the DTCM (64 KB) nor SRAM0 (256 KB less the firmware's)."""
    ad = next(p for p in shared_model_paths if p.name.startswith("ad_"))
    assert main(["compile", str(ad), "--board", "stm32f746g_disco", "--weights-in-ram", "-o", str(tmp_path / "c"),
                 "--json"]) == 0
    shares = json.loads(capsys.readouterr().out)["constants_in_ram"]
    assert [s["name"] for s in shares] == ["DTCM", "SRAM0"]
    assert sum(s["constant_bytes"] for s in shares) == 271_000 and shares[0]["constant_bytes"] <= 64 * 1024


@pytest.mark.parametrize("region", ["DTCM))\n*(.text", "../../DTCM", "DTCM */"])
def test_a_constants_region_that_is_no_c_identifier_writes_no_snippet(tmp_path, capsys, region):
    """metadata.json's constants_in_ram names the snippet, its section and CMake's lines: a name that is no C
    identifier is refused in one line, exit 2, and nothing is written."""
    folder = tmp_path / "compiled"
    shutil.copytree(FAKE, folder)
    meta = json.loads((folder / "metadata.json").read_text())
    meta["memory"]["constants_in_ram"] = [{"name": region, "constant_bytes": 4, "arrays": [[4, 4]]}]
    (folder / "metadata.json").write_text(json.dumps(meta))
    assert main(["project", str(folder), "--board", "stm32f746g_disco", "-o", str(tmp_path / "app")]) == 2
    err = capsys.readouterr().err
    assert "RAM region" in err and "is not a C identifier" in err.splitlines()[0]
    assert not (tmp_path / "app").exists() and not list(tmp_path.rglob("mtk_constants_*"))
