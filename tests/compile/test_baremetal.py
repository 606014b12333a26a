"""Rendering and building the bare-metal firmware project (real arm-none-eabi-gcc and make)."""

from __future__ import annotations

import json
import shutil

import pytest

from mtk.compiled import CompiledModel
from mtk.boards import get_board
from mtk.errors import ModelError, MtkError, TargetError
from mtk.platforms import ProjectOptions, get_platform

from checkout import FAKE, REPO

#                         MLPerf Tiny reference API's help text and replies)


def test_rendered_project(tmp_path):
    project = get_platform("baremetal").render(CompiledModel.load(FAKE), get_board("mps3_an547"), tmp_path / "p", ProjectOptions())
    names = {p.name for p in project.iterdir()}
    assert {"Makefile", "linker.ld", "mtk_board.h", "startup.c", "mtk_port_baremetal.c", "model_glue.c",
            "firmware", "model"} <= names
    assert "-mcpu=cortex-m55" in (project / "Makefile").read_text()
    linker = (project / "linker.ld").read_text()
    assert "ORIGIN = 0x10000000, LENGTH = 0x80000" in linker and "ORIGIN = 0x30000000" in linker
    # the AN547's second RAM region, where a model's arena pool in section "SRAM" goes (test_regions.py)
    assert "SRAM (rw) : ORIGIN = 0x11000000, LENGTH = 0x200000" in linker
    assert ".sram (NOLOAD)" in linker and "KEEP(*(SRAM))" in linker and "} > SRAM" in linker
    board_h = (project / "mtk_board.h").read_text()
    assert "MTK_UART_CMSDK 1" in board_h and "0x59303000u" in board_h
    assert "MTK_TICK_NUM 125u" in board_h and "MTK_TICK_SHIFT 2u" in board_h  # 32 MHz: 31.25 ns a tick


def test_refuses_physical_board(tmp_path):
    with pytest.raises(MtkError, match="QEMU boards only"):
        get_platform("baremetal").render(CompiledModel.load(FAKE), get_board("nucleo_f746zg"), tmp_path / "p", ProjectOptions())


def test_refuses_model_too_big_before_building(tmp_path):
    big = tmp_path / "big"
    shutil.copytree(FAKE, big)
    meta = json.loads((big / "metadata.json").read_text())
    meta["memory"]["arena_bytes"] = 70_000
    (big / "metadata.json").write_text(json.dumps(meta))
    with pytest.raises(ModelError, match=r"arena 70,000.*RAM 65,536"):
        get_platform("baremetal").render(CompiledModel.load(big), get_board("qemu_cortex_m3"), tmp_path / "p", ProjectOptions())
    assert not (tmp_path / "p").exists()


@pytest.mark.slow
def test_refuses_a_model_compiled_for_other_kernels(tmp_path):
    """Weight layouts follow the CPU's DSP/Helium/long-multiply features: an M4 model is not M3 code."""
    from mtk.compiler import compile_model

    model = REPO / "models" / "digits_cnn_int8.tflite"
    compiled = compile_model(model, tmp_path / "m4", cpu="cortex-m4")
    with pytest.raises(ModelError, match="(?s)compiled for cortex-m4.*--board mps2/an385"):
        get_platform("baremetal").render(compiled, get_board("mps2/an385"), tmp_path / "p", ProjectOptions())
    assert not (tmp_path / "p").exists()
    get_platform("baremetal").render(compiled, get_board("mps2/an500"), tmp_path / "m7", ProjectOptions())


def test_build_failure_keeps_the_linkers_overflow_line(tmp_path):
    from mtk.platforms.base import run_build

    script = "echo compiling; echo \"ld: region \\`FLASH' overflowed by 4096 bytes\"; echo 'collect2: error: ld returned 1'; exit 1"
    with pytest.raises(TargetError) as err:
        run_build(["sh", "-c", script], cwd=tmp_path)
    assert "overflowed by 4096 bytes" in err.value.message and "compiling" not in err.value.message


@pytest.mark.parametrize("board, opt", [("mps3_an547", "-O2"), ("mps3_an547", "-Os"), ("mps2/an385", "-O2"),
                                        ("microbit", "-O2")])
def test_the_stack_paint_writes_nothing_of_its_own_frame(tmp_path, board, opt):
    """stack_paint paints up to the stack pointer it reads: it saves nothing below it (gcc -O2 on the Cortex-M55 saved
    lr there for a C loop's low-overhead loop and painted over it, whatever program linked the port: a hang at reset)."""
    import subprocess

    target = get_board(board)
    project = get_platform("baremetal").render(CompiledModel.load(FAKE), target, tmp_path / "p", ProjectOptions())
    obj = tmp_path / "port.o"
    subprocess.run(["arm-none-eabi-gcc", *target.cpu.gcc_flags, opt, "-I", str(project), "-I", str(project / "firmware"),
                    "-c", str(project / "mtk_port_baremetal.c"), "-o", str(obj)], check=True)
    listing = subprocess.run(["arm-none-eabi-objdump", "-d", "--disassemble=stack_paint", str(obj)], check=True,
                             capture_output=True, text=True).stdout
    code = [line.split("\t")[2:] for line in listing.splitlines() if line.startswith(" ") and "\t" in line]
    mnemonics = [" ".join(part).strip() for part in code if part]
    assert any(m.startswith("mov") and m.endswith("sp") for m in mnemonics)
    assert not [m for m in mnemonics if m.startswith(("push", "stmdb", "sub")) or "sp" in m.split(None, 1)[-1]
                and not m.startswith("mov")], mnemonics


def test_a_boards_code_ram_takes_the_models_code_when_it_fits(tmp_path):
    """The emulated L4R5's code RAM (its SRAM2 on the code bus, at the top of the an386's code memory): the model's
    objects' code is linked there and copied from flash at startup, unless it would fill more than 15/16 of it."""
    from dataclasses import replace

    from mtk.cycles.emulate import emulation_board

    fake = CompiledModel.load(FAKE)
    machine = emulation_board(get_board("nucleo_l4r5zi"))

    def linker(code_bytes, board, name):
        model = replace(fake, memory=replace(fake.memory, code_bytes=code_bytes))
        return (get_platform("baremetal").render(model, board, tmp_path / name, ProjectOptions()) / "linker.ld").read_text()

    fits = linker(20_000, machine, "fits")
    assert "CODE (rx)  : ORIGIN = 0x00000000, LENGTH = 0x3f0000" in fits
    assert "CODE_RAM (rwx) : ORIGIN = 0x003f0000, LENGTH = 0x10000" in fits
    assert "EXCLUDE_FILE(*/model/src/*.o) *(.text .text.*)" in fits
    assert "*/model/src/*.o(.text .text.*)" in fits and "} > CODE_RAM AT > CODE" in fits
    assert "LONG(LOADADDR(.code_ram)) LONG(ADDR(.code_ram)) LONG(SIZEOF(.code_ram))" in fits
    for too_large in (linker(62_000, machine, "large"), linker(None, machine, "unknown"),
                      linker(20_000, get_board("mps2/an386"), "an386")):
        assert "CODE_RAM" not in too_large and ".code_ram" not in too_large
        assert "\n        *(.text .text.*)" in too_large
