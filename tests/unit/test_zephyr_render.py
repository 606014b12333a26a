"""Rendering Zephyr applications (no Zephyr needed): files, Kconfig, names from the model and
the user kept out of C, CMake and Kconfig."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from mtk.compiled import CompiledModel
from mtk.boards import all_boards, get_board
from mtk.errors import ModelError, MtkError
from mtk.paths import ZEPHYR_APP
from mtk.platforms import ProjectOptions, get_platform
from mtk.platforms.zephyr import board_file_name, read_project

from checkout import FAKE

BOARDS = all_boards()
KCONFIG_LINE = re.compile(r'CONFIG_[A-Z0-9_]+=(y|n|-?[0-9]+|0x[0-9a-fA-F]+|"([^"\\\n]|\\.)*")')
HOSTILE = 'ev"il\';name\n#include <stdio.h>\n$(rm -rf x)*/`.tflite'


def render(compiled: Path, board: str, out: Path, **options) -> Path:
    return get_platform("zephyr").render(CompiledModel.load(compiled), get_board(board), out, ProjectOptions(**options))


def kconfig(path: Path) -> dict[str, str]:
    """The assignments of a Kconfig fragment; every other line must be a comment or blank."""
    values = {}
    for line in path.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            assert KCONFIG_LINE.fullmatch(line), f"{path.name}: not a Kconfig assignment: {line!r}"
            name, value = line.split("=", 1)
            values[name] = value
    return values


def declared_symbols(project: Path) -> set[str]:
    return {"CONFIG_" + s for s in re.findall(r"^config (\w+)", (project / "Kconfig").read_text(), flags=re.M)}


def hostile_compiled(tmp_path: Path) -> Path:
    """The fake model with a file name and tensor names no C, CMake or Kconfig file may take as is."""
    compiled = tmp_path / "compiled"
    shutil.copytree(FAKE, compiled)
    meta = json.loads((compiled / "metadata.json").read_text())
    meta["model"] = HOSTILE
    meta["inputs"][0]["name"] = 'in"put;\n}'
    (compiled / "metadata.json").write_text(json.dumps(meta))
    return compiled


@pytest.mark.parametrize("board", [b.name for b in BOARDS if b.in_zephyr])
def test_every_board_renders_a_complete_application(tmp_path, board):
    b = get_board(board)
    project = render(FAKE, board, tmp_path / "app")
    name = board_file_name(b)
    files = sorted(str(p.relative_to(project)) for p in project.rglob("*") if p.is_file())
    assert files == sorted([
        "CMakeLists.txt", "Kconfig", "prj.conf", f"boards/{name}.conf", f"boards/{name}.overlay",
        "src/main.c", "src/mtk_port_zephyr.c", "src/model_glue.c", "mtk-project.json",
        "firmware/mtk_core.c", "firmware/mtk_mlperf.c", "firmware/mtk_core.h", "firmware/mtk_port.h", "firmware/mtk_model.h",
        "firmware/mtk_layer_hook.h", "firmware/mtk_semihosting.h", "model/include/tvmgen_default.h", "model/src/default_lib.c",
        "model/metadata.json"])
    for path in project.rglob("*"):
        if path.is_file():
            assert not re.search(r"\{\{|\{%|\{#|\}\}", path.read_text()), f"{path} holds template syntax"

    prj = kconfig(project / "prj.conf")
    conf = kconfig(project / "boards" / f"{name}.conf")
    assert prj["CONFIG_MAIN_STACK_SIZE"] == "8192" and prj["CONFIG_MTK_PROFILE"] == "n"
    assert prj["CONFIG_INIT_STACKS"] == prj["CONFIG_THREAD_STACK_INFO"] == "y"   # its high-water mark in mtk-info
    assert "CONFIG_NEWLIB_LIBC" not in prj | conf
    assert ("CONFIG_FPU" in conf) == (b.cpu.fpu is not None)
    if b.qemu:
        assert conf["CONFIG_MTK_SEMIHOSTING"] == "y"
        assert int(conf["CONFIG_MTK_QEMU_TICK_NUM"]) >> int(conf["CONFIG_MTK_QEMU_TICK_SHIFT"]) \
            == 10**9 // b.qemu.zephyr_cycle_hz
    else:
        assert conf["CONFIG_MTK_SEMIHOSTING"] == "n" and conf["CONFIG_TIMING_FUNCTIONS"] == "y"
    mtk_symbols = {s for s in prj | conf if s.startswith("CONFIG_MTK_")}
    assert mtk_symbols <= declared_symbols(project)
    overlay = (project / "boards" / f"{name}.overlay").read_text()
    assert f"zephyr,console = &{b.console};" in overlay
    record = read_project(project)
    assert record | {"files": None, "owned": None} == {"platform": "zephyr", "board": b.name,
                                                       "model": "fake_checksum.tflite", "files": None, "owned": None}
    owned = [f for f in files if f.startswith(("model/", "firmware/")) or f == "src/model_glue.c"]
    assert sorted(record["owned"]) == owned
    assert sorted(record["files"]) == [f for f in files if f not in owned and f != "mtk-project.json"]
    cmake = (project / "CMakeLists.txt").read_text()
    assert "find_package(Zephyr REQUIRED HINTS $ENV{ZEPHYR_BASE})" in cmake
    assert "model/src/default_lib.c" in cmake and f"-b {b.name} " in cmake


@pytest.mark.parametrize("board", [b.name for b in BOARDS if not b.in_zephyr])
def test_a_board_zephyr_does_not_have_is_refused_with_the_ones_it_has(tmp_path, board):
    with pytest.raises(MtkError, match=f"{board} is not a Zephyr board") as err:
        render(FAKE, board, tmp_path / "app")
    assert "mps2/an521/cpu0" in err.value.hint and board not in err.value.hint
    assert not (tmp_path / "app").exists()


def test_zephyr_counts_its_own_system_timer_on_qemu(tmp_path):
    """Zephyr's M33 in QEMU (the AN521's CPU0: no FPU, SysTick at 20 MHz) and its M0 (the nRF51's TIMER0 at 1 MHz)."""
    conf = kconfig(render(FAKE, "mps2/an521/cpu0", tmp_path / "m33") / "boards" / "mps2_an521_cpu0.conf")
    assert (conf["CONFIG_MTK_QEMU_TICK_NUM"], conf["CONFIG_MTK_QEMU_TICK_SHIFT"]) == ("50", "0")
    assert "CONFIG_FPU" not in conf and conf["CONFIG_MTK_QEMU_CLOCK_MHZ"] == "20"
    conf = kconfig(render(FAKE, "qemu_cortex_m0", tmp_path / "m0") / "boards" / "qemu_cortex_m0.conf")
    assert (conf["CONFIG_MTK_QEMU_TICK_NUM"], conf["CONFIG_MTK_QEMU_TICK_SHIFT"]) == ("1000", "0")


def test_the_u575_application_keeps_its_icache_2_way(tmp_path):
    """Zephyr 4.2 makes the U575's ICACHE direct-mapped; its boards/<board>.conf (board data `zephyr_config`)
    keeps the 2-way reset mode the cycle model times."""
    conf = kconfig(render(FAKE, "nucleo_u575zi_q", tmp_path / "u5") / "boards" / "nucleo_u575zi_q.conf")
    assert conf["CONFIG_CACHE_STM32_ICACHE_DIRECT_MAPPING"] == "n" and conf["CONFIG_FPU"] == "y"
    assert get_board("nucleo_u575zi_q").memory_timing[0].cache.ways == 2
    conf = kconfig(render(FAKE, "nucleo_l4r5zi", tmp_path / "l4") / "boards" / "nucleo_l4r5zi.conf")
    assert not any(symbol.startswith("CONFIG_CACHE_STM32") for symbol in conf)


def test_the_pico_2_s_m33_is_built_with_its_dsp_and_fpu(tmp_path):
    """Zephyr's RP2350 SoC declares the FPU, not the DSP extension: the app's Kconfig adds it (else the build
    is -mcpu=cortex-m33+nodsp and the DSP kernels the model was packed for are compiled out)."""
    project = render(FAKE, "rpi_pico2", tmp_path / "app")
    assert "config SOC_RP2350A_M33\n\tselect ARMV8_M_DSP\n" in (project / "Kconfig").read_text()
    conf = kconfig(project / "boards" / "rpi_pico2_rp2350a_m33.conf")
    assert conf["CONFIG_FPU"] == "y" and conf["CONFIG_TIMING_FUNCTIONS"] == "y"
    assert "-b rpi_pico2/rp2350a/m33 " in (project / "CMakeLists.txt").read_text()


def test_options_reach_kconfig_and_cmake(tmp_path):
    project = render(FAKE, "mps2/an386", tmp_path / "app", profile=True, stack_bytes=12288, opt_level="O3",
                     semihosting=False)
    assert kconfig(project / "prj.conf")["CONFIG_MTK_PROFILE"] == "y"
    assert kconfig(project / "prj.conf")["CONFIG_MAIN_STACK_SIZE"] == "12288"
    assert kconfig(project / "boards" / "mps2_an386.conf")["CONFIG_MTK_SEMIHOSTING"] == "n"
    assert '"-O3;-fbuiltin"' in (project / "CMakeLists.txt").read_text()


def test_semihosting_never_reaches_silicon(tmp_path):
    project = render(FAKE, "nucleo_f746zg", tmp_path / "app", semihosting=True)
    assert kconfig(project / "boards" / "nucleo_f746zg.conf")["CONFIG_MTK_SEMIHOSTING"] == "n"


def test_hostile_names_stay_out_of_cmake_and_kconfig(tmp_path):
    project = render(hostile_compiled(tmp_path), "qemu_cortex_m3", tmp_path / 'out"dir;\n$(x)')
    for name in ("prj.conf", "boards/qemu_cortex_m3.conf"):
        kconfig(project / name)
    cmake = (project / "CMakeLists.txt").read_text()
    assert all(line.startswith("#") or "ev" not in line for line in cmake.splitlines())
    assert "out\"dir" not in cmake


def test_hostile_model_name_stays_out_of_the_glue_c(tmp_path):
    gcc = shutil.which("gcc")
    if gcc is None:
        pytest.skip("no host gcc to check the C")
    project = render(hostile_compiled(tmp_path), "qemu_cortex_m3", tmp_path / "app")
    subprocess.run([gcc, "-std=c99", "-fsyntax-only", "-Wall", "-Werror", "-Ifirmware", "-Imodel/include",
                    "src/model_glue.c"], cwd=project, check=True, capture_output=True)


def test_model_sources_with_unsafe_names_are_refused(tmp_path):
    compiled = tmp_path / "compiled"
    shutil.copytree(FAKE, compiled)
    (compiled / "src" / "default_lib.c").rename(compiled / "src" / "lib;x.c")
    with pytest.raises(ModelError, match="plain names"):
        render(compiled, "qemu_cortex_m3", tmp_path / "app")


def test_a_model_that_cannot_fit_the_board_is_refused_with_the_numbers(tmp_path):
    """A folder from `mtk compile` may have been compiled for a bigger board: refused at render,
    not after a long Zephyr build whose linker error hides the numbers."""
    compiled = tmp_path / "compiled"
    shutil.copytree(FAKE, compiled)
    meta = json.loads((compiled / "metadata.json").read_text())
    meta["memory"]["constant_bytes"] = get_board("qemu_cortex_m3").flash_bytes + 1
    (compiled / "metadata.json").write_text(json.dumps(meta))
    with pytest.raises(ModelError, match=r"does not fit qemu_cortex_m3: needs 262,145 B of constants") as err:
        render(compiled, "qemu_cortex_m3", tmp_path / "app")
    assert "it fits mps2/an385 (4,096 KB flash, 4,096 KB RAM), mps2/an386" in err.value.hint   # the boards with room
    with pytest.raises(ModelError, match=r"does not fit qemu_cortex_m3: .* stack 65,536; RAM 65,536 B"):
        render(FAKE, "qemu_cortex_m3", tmp_path / "app", stack_bytes=65536)
    assert not (tmp_path / "app").exists()


def test_rerendering_over_a_project_keeps_edits_unless_force(tmp_path):
    project = render(FAKE, "qemu_cortex_m3", tmp_path / "app")
    (project / "src" / "main.c").write_text("/* my edits */\n")
    render(FAKE, "mps2/an385", project)
    assert (project / "src" / "main.c").read_text() == "/* my edits */\n"
    assert read_project(project)["board"] == "mps2/an385"
    assert not (project / "boards" / "qemu_cortex_m3.conf").exists()   # mtk's, unedited, for another board
    render(FAKE, "mps2/an385", project, force=True)
    assert (project / "src" / "main.c").read_text() == (ZEPHYR_APP / "src" / "main.c").read_text()


def test_a_folder_not_rendered_by_mtk_is_not_a_project(tmp_path):
    with pytest.raises(MtkError, match="not a project rendered by `mtk project`"):
        read_project(tmp_path)


def test_the_l4r5_application_runs_the_models_code_from_its_code_ram(tmp_path):
    """The L4R5's SRAM2 on the code bus (devicetree node sram1 at 0x10000000 in Zephyr 4.2's stm32l4r5.dtsi; its
    zephyr,sram, sram0, is SRAM1 alone): the overlay makes it memory region CODERAM, where the model's sources'
    .text is relocated (CONFIG_CODE_DATA_RELOCATION copies it from flash at boot). Other boards: none of it."""
    from dataclasses import replace

    fake = CompiledModel.load(FAKE)
    fake = replace(fake, memory=replace(fake.memory, code_bytes=20_000))
    zephyr = get_platform("zephyr")
    project = zephyr.render(fake, get_board("nucleo_l4r5zi"), tmp_path / "l4", ProjectOptions())
    assert kconfig(project / "boards" / "nucleo_l4r5zi.conf")["CONFIG_CODE_DATA_RELOCATION"] == "y"
    overlay = (project / "boards" / "nucleo_l4r5zi.overlay").read_text()
    assert re.search(r'&sram1 \{\n\tcompatible = "zephyr,memory-region", "mmio-sram";\n'
                     r'\tzephyr,memory-region = "CODERAM";\n\tzephyr,memory-region-flags = "rwx";\n\};', overlay)
    assert "zephyr_code_relocate(FILES ${model_sources} LOCATION CODERAM_TEXT)" in \
        (project / "CMakeLists.txt").read_text()
    too_large = replace(fake, memory=replace(fake.memory, code_bytes=62_000))
    for model, board, name in ((too_large, "nucleo_l4r5zi", "large"), (fake, "nucleo_u575zi_q", "u5")):
        project = zephyr.render(model, get_board(board), tmp_path / name, ProjectOptions())
        assert "CODE_DATA_RELOCATION" not in (project / "boards" / f"{board}.conf").read_text()
        assert "CODERAM" not in (project / "boards" / f"{board}.overlay").read_text()
        assert "zephyr_code_relocate" not in (project / "CMakeLists.txt").read_text()
