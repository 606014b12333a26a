"""--weights-in-ram: the option reaches every command that builds a model, the constants go to the fastest
RAM region that holds them (a tightly coupled one first), and a model whose constants, arena and stack do not
fit the board's RAM is refused with the figures (tests/compile/test_weights_in_ram_elf.py links one,
tests/target/test_weights_in_ram_qemu.py runs them)."""

from __future__ import annotations

import dataclasses

import pytest

from mtk.boards import RamRegion, get_board
from mtk.budget import check_emulated_ram, check_fits
from mtk.buildcache import firmware_key
from mtk.cli import build_parser, main
from mtk.codegen.regions import constants_region
from mtk.compiled import CompiledModel, MemoryUse
from mtk.errors import ModelError
from mtk.platforms.zephyr import check_constants_region
from mtk.runoptions import RunOptions

from checkout import FAKE

DTCM = RamRegion("DTCM", 0x20000000, 64 * 1024, tcm=True)
SRAM0 = RamRegion("SRAM0", 0x20010000, 256 * 1024, system=True)
SRAM = RamRegion("SRAM", 0x11000000, 2 * 1024 * 1024)


@pytest.mark.parametrize("command", ["run", "validate", "bench", "serve"])
def test_the_option_reaches_the_run_options(command):
    from mtk.commands._target import run_options

    parser = build_parser(only=command)
    assert run_options(parser.parse_args([command, "m.tflite", "--weights-in-ram"]), "mps2/an386").weights_in_ram
    assert not run_options(parser.parse_args([command, "m.tflite"]), "mps2/an386").weights_in_ram


@pytest.mark.parametrize("command", ["compile", "project"])
def test_compile_and_project_take_it(command):
    args = build_parser(only=command).parse_args([command, "m.tflite", "-o", "out", "--board", "mps2/an386",
                                                  "--weights-in-ram"])
    assert args.weights_in_ram


def test_its_help_says_what_it_costs_in_ram(capsys):
    with pytest.raises(SystemExit):
        main(["compile", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "--weights-in-ram" in help_text
    assert "at the cost of their size in RAM as well as in flash" in help_text
    assert "refused when the constants, the arena and the stack do not fit" in help_text


def test_a_compiled_folder_is_refused_by_project_with_the_option(tmp_path, capsys):
    assert main(["project", str(FAKE), "--board", "nucleo_f746zg", "-o", str(tmp_path / "app"),
                 "--weights-in-ram"]) == 2
    err = capsys.readouterr().err
    assert "--weights-in-ram" in err and "compiled already" in err.splitlines()[0]
    assert not (tmp_path / "app").exists()


def test_the_firmware_cache_tells_the_two_builds_apart(tmp_path):
    model = tmp_path / "m.tflite"
    model.write_bytes(b"model")
    board = get_board("mps2/an386")
    assert firmware_key(model, RunOptions(board)) != firmware_key(model, RunOptions(board, weights_in_ram=True))


def test_tightly_coupled_ram_is_taken_first_when_the_constants_fit_it():
    assert constants_region([DTCM, SRAM0], 40_000, 20_000, "m") == DTCM


def test_the_next_region_takes_constants_the_tcm_cannot_hold():
    assert constants_region([DTCM, SRAM0], 70_000, 20_000, "m") == SRAM0
    # the system region keeps room for the firmware's stack, buffers and data
    assert constants_region([SRAM0, SRAM], 250_000, 20_000, "m") == SRAM


def test_constants_no_region_holds_are_refused_with_the_figures():
    with pytest.raises(ModelError) as err:
        constants_region([DTCM, SRAM0], 300_000, 20_000, "ad.tflite does not fit nucleo_f746zg")
    assert "\n" not in err.value.message
    assert err.value.message == ("ad.tflite does not fit nucleo_f746zg: its constants (300,000 B, --weights-in-ram) "
                                 "fit in none of its RAM regions (room beside the firmware's stack, buffers and data: "
                                 "DTCM 65,536 B, SRAM0 242,144 B)")


def with_constants(region: str | None, constant_bytes: int) -> CompiledModel:
    fake = CompiledModel.load(FAKE)
    memory = dataclasses.replace(fake.memory, constant_bytes=constant_bytes, constants_region=region)
    return dataclasses.replace(fake, memory=memory)


def test_constants_in_ram_count_against_the_boards_ram():
    board = get_board("qemu_cortex_m3")   # 64 KB of RAM
    check_fits(with_constants(None, 60_000), board)
    with pytest.raises(ModelError) as err:
        check_fits(with_constants("RAM", 60_000), board)
    assert "\n" not in err.value.message
    assert "needs at least" in err.value.message and "(constants in RAM (--weights-in-ram) 60,000, arena " \
        in err.value.message and "RAM 65,536 B)" in err.value.message
    assert err.value.hint.startswith("without --weights-in-ram it needs ")


def test_metadata_keeps_where_the_constants_are():
    memory = with_constants("DTCM", 1000).memory
    assert MemoryUse.from_json(memory.to_json()).constants_region == "DTCM"
    assert memory.constants_in_ram_bytes == 1000
    assert with_constants(None, 1000).memory.constants_in_ram_bytes == 0


def test_zephyr_refuses_constants_in_a_region_other_than_its_system_ram():
    board = get_board("nucleo_f746zg")
    check_constants_region(with_constants("SRAM0", 1000), board)
    with pytest.raises(ModelError, match="compiled into RAM region DTCM; a Zephyr application copies them only "
                                         "into SRAM0"):
        check_constants_region(with_constants("DTCM", 1000), board)


def test_under_emulate_the_constants_must_fit_a_region_of_the_emulated_board():
    """AD's 271,000 B fit the STM32F746's 320 KB of RAM in all, but none of its regions (DTCM 64 KB, SRAM0 256 KB)."""
    board = get_board("nucleo_f746zg")
    check_emulated_ram(with_constants("RAM", 200_000), board)
    with pytest.raises(ModelError, match=r"does not fit nucleo_f746zg: its constants \(271,000 B, --weights-in-ram\) "
                                         r"fit in none of its RAM regions .*DTCM 65,536 B, SRAM0 2\d\d,\d{3} B\)\n"):
        check_emulated_ram(with_constants("RAM", 271_000), board)
    check_emulated_ram(with_constants(None, 271_000), board)   # in flash: only the arena and stack count
