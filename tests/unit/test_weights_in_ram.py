"""--weights-in-ram: the option reaches every command that builds a model, the constants go to the fastest
RAM region that holds them (a tightly coupled one first), split across the regions, each array whole, when
none does, and a model whose constants, arena and stack do not fit the board's RAM is refused with the
figures (tests/compile/test_weights_in_ram_elf.py links them, tests/target/test_weights_in_ram_qemu.py runs them)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from mtk.boards import RamRegion, get_board
from mtk.budget import check_emulated_ram, check_fits, emulated_constants
from mtk.buildcache import firmware_key
from mtk.cli import build_parser, main
from mtk.codegen.regions import constants_regions, footprint
from mtk.compiled import CompiledModel, MemoryUse, RamConstants
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


# AD's constant arrays as the M7's kernels pack them (bytes each, its alignment's padding included)
AD_ARRAYS = {"op0_w": 82_447, **{f"op{i}_w": 16_911 for i in (1, 2, 3, 6, 7, 8)}, "op4_w": 1_071, "op5_w": 1_551,
             "op9_w": 84_495}


def placed(arrays: dict[str, int], regions: list[RamRegion], reserved: int = 20_000) -> dict[str, str]:
    return constants_regions(arrays, sum(arrays.values()), regions, reserved, "m")


def test_tightly_coupled_ram_is_taken_first_when_the_constants_fit_it():
    assert placed({"a": 30_000, "b": 10_000}, [DTCM, SRAM0]) == {"a": "DTCM", "b": "DTCM"}


def test_the_next_region_takes_constants_the_tcm_cannot_hold_whole():
    assert placed({"a": 40_000, "b": 30_000}, [DTCM, SRAM0]) == {"a": "SRAM0", "b": "SRAM0"}
    # the system region keeps room for the firmware's stack, buffers and data
    assert set(placed({"a": 250_000}, [SRAM0, SRAM]).values()) == {"SRAM"}


def test_constants_no_region_holds_are_split_each_array_whole_the_largest_first_into_the_fastest_room():
    """AD on the STM32F746: 271,000 B in none of DTCM (64 KB) and SRAM0 (256 KB less the firmware's); split,
    DTCM takes the largest arrays it holds, SRAM0 the rest."""
    where = placed(AD_ARRAYS, [DTCM, SRAM0], 12_224)
    in_dtcm = {name for name, region in where.items() if region == "DTCM"}
    assert in_dtcm == {"op1_w", "op2_w", "op3_w", "op4_w", "op5_w"}
    assert sum(AD_ARRAYS[n] for n in in_dtcm) <= DTCM.size
    assert sum(AD_ARRAYS[n] for n in AD_ARRAYS.keys() - in_dtcm) <= SRAM0.size - 12_224
    assert where.keys() == AD_ARRAYS.keys()


def test_the_fastest_region_is_filled_first_whatever_order_the_board_lists_them():
    assert placed({"a": 60_000, "b": 50_000}, [SRAM0, DTCM], 200_000) == {"a": "DTCM", "b": "SRAM0"}


def test_constants_that_do_not_fit_even_split_are_refused_in_one_line_with_the_figures():
    with pytest.raises(ModelError) as err:
        constants_regions({"a": 200_000, "b": 100_000, "c": 10_000}, 310_000, [DTCM, SRAM0], 20_000,
                          "ad.tflite does not fit nucleo_f746zg")
    assert err.value.message == ("ad.tflite does not fit nucleo_f746zg: its constants (310,000 B, --weights-in-ram) "
                                 "fit in none of its RAM regions, whole or split across them (room beside the "
                                 "firmware's stack, buffers and data: DTCM 65,536 B, SRAM0 242,144 B)")
    assert err.value.hint == "leave out --weights-in-ram: the constants are then read from flash"


def test_an_array_no_region_holds_is_refused_though_the_total_would_fit():
    with pytest.raises(ModelError, match=r"its constants \(250,000 B, --weights-in-ram\) fit in none of its RAM "
                                         r"regions, whole or split"):
        placed({"a": 245_000, "b": 5_000}, [DTCM, SRAM0])


def test_a_board_with_one_region_says_so_without_a_split():
    ram = RamRegion("RAM", 0x20000000, 64 * 1024, system=True)
    with pytest.raises(ModelError) as err:
        placed({"a": 50_000}, [ram])
    assert err.value.message.endswith("fit in none of its RAM regions (room beside the firmware's stack, buffers "
                                      "and data: RAM 45,536 B)")


def test_a_footprint_counts_the_padding_its_alignment_may_take():
    assert footprint(16_908, 4) == 16_911
    assert footprint(1_024, 32) == 1_055


def with_constants(*shares: RamConstants, constant_bytes: int | None = None) -> CompiledModel:
    fake = CompiledModel.load(FAKE)
    total = sum(s.constant_bytes for s in shares) if constant_bytes is None else constant_bytes
    memory = dataclasses.replace(fake.memory, constant_bytes=total, constants_in_ram=shares)
    return dataclasses.replace(fake, memory=memory)


def share(region: str, nbytes: int, arrays: tuple[tuple[int, int], ...] | None = None) -> RamConstants:
    return RamConstants(region, nbytes, arrays or ((nbytes, 4),))


def test_constants_in_ram_count_against_the_boards_ram():
    board = get_board("qemu_cortex_m3")   # 64 KB of RAM
    check_fits(with_constants(constant_bytes=60_000), board)
    with pytest.raises(ModelError) as err:
        check_fits(with_constants(share("RAM", 60_000)), board)
    assert "\n" not in err.value.message
    assert "needs at least" in err.value.message and "(constants in RAM (--weights-in-ram) 60,000, arena " \
        in err.value.message and "RAM 65,536 B)" in err.value.message
    assert err.value.hint.startswith("without --weights-in-ram it needs ")


def test_metadata_keeps_where_the_constants_are():
    memory = with_constants(share("DTCM", 1000, ((600, 4), (400, 16))), share("SRAM0", 5000)).memory
    again = MemoryUse.from_json(memory.to_json())
    assert again.constants_in_ram == memory.constants_in_ram
    assert again.constants_regions == ("DTCM", "SRAM0")
    assert memory.constants_in_ram_bytes == 6000
    assert with_constants(constant_bytes=1000).memory.constants_in_ram_bytes == 0


def test_a_model_compiled_for_a_region_the_board_lacks_is_refused():
    with pytest.raises(ModelError, match="compiled for RAM region DTCM, which qemu_cortex_m3 does not have"):
        check_fits(with_constants(share("DTCM", 100)), get_board("qemu_cortex_m3"))


def test_zephyr_takes_constants_in_its_system_ram_and_dtcm_and_refuses_another_region():
    f746 = get_board("nucleo_f746zg")
    check_constants_region(with_constants(share("SRAM0", 1000)), f746)
    check_constants_region(with_constants(share("DTCM", 53_340), share("SRAM0", 217_660)), f746)
    with pytest.raises(ModelError) as err:
        check_constants_region(with_constants(share("DTCM", 1000), share("SRAM", 500_000)), get_board("mps3/an547"))
    assert err.value.message.endswith(": its constants were compiled into RAM regions DTCM, SRAM; a Zephyr "
                                      "application copies them only into DTCM, its system RAM")


def render_zephyr(model: CompiledModel, board: str, tmp: Path) -> Path:
    from mtk.platforms import ProjectOptions, get_platform

    return get_platform("zephyr").render(model, get_board(board), tmp / "app", ProjectOptions())


def test_the_zephyr_app_puts_dtcm_constants_in_the_data_zephyr_copies_there(tmp_path):
    """Zephyr 4.2 copies the chosen zephyr,dtcm node's .dtcm_data from flash at boot (kernel/xip.c z_data_copy);
    zephyr_linker_sources(DTCM_SECTION) puts a snippet inside it. (Built by hand for stm32f746g_disco with AD
    split: the five DTCM arrays at 0x20000000 in .dtcm_data, loaded from flash, the five others in .data.)"""
    project = render_zephyr(with_constants(share("DTCM", 53_340), share("SRAM0", 217_660)), "stm32f746g_disco",
                            tmp_path)
    cmake = (project / "CMakeLists.txt").read_text()
    assert "zephyr_linker_sources(DTCM_SECTION mtk_constants_dtcm.ld)" in cmake
    assert "zephyr_link_libraries(-Wl,--require-defined=__dtcm_data_start)" in cmake
    assert (project / "mtk_constants_dtcm.ld").read_text().endswith("\nKEEP(*(.mtk_constants.DTCM))\n")


def test_constants_in_zephyrs_system_ram_need_no_snippet(tmp_path):
    project = render_zephyr(with_constants(share("SRAM0", 1000)), "nucleo_f746zg", tmp_path)
    assert "DTCM_SECTION" not in (project / "CMakeLists.txt").read_text()
    assert not list(project.glob("mtk_constants_*.ld"))


def test_under_emulate_the_constants_must_fit_the_emulated_boards_regions_split_if_need_be():
    """AD's 271,000 B fit the STM32F746's 320 KB of RAM in all and, split, its regions (DTCM 64 KB, SRAM0 256 KB):
    the QEMU build's one region is checked against that split; one array of them all does not fit."""
    board = get_board("nucleo_f746zg")
    check_emulated_ram(with_constants(share("RAM", 200_000)), board)
    check_emulated_ram(with_constants(share("RAM", 271_000, tuple((n - 3, 4) for n in AD_ARRAYS.values()))), board)
    with pytest.raises(ModelError, match=r"does not fit nucleo_f746zg: its constants \(271,000 B, --weights-in-ram\) "
                                         r"fit in none of its RAM regions, whole or split across them .*DTCM "
                                         r"65,536 B, SRAM0 2\d\d,\d{3} B\)\n"):
        check_emulated_ram(with_constants(share("RAM", 271_000)), board)
    check_emulated_ram(with_constants(constant_bytes=271_000), board)   # in flash: only the arena and stack count


def test_the_compile_summary_gives_each_regions_constants():
    from mtk.commands.compile import constants_where, summary

    split = with_constants(share("DTCM", 53_340), share("SRAM0", 217_660))
    assert summary(split)["constants_in_ram"] == [{"name": "DTCM", "constant_bytes": 53_340},
                                                  {"name": "SRAM0", "constant_bytes": 217_660}]
    assert constants_where(split.memory.constants_in_ram) == ("flash, copied into RAM at startup: DTCM 53,340 B, "
                                                              "SRAM0 217,660 B")
    one = with_constants(share("DTCM", 100)).memory.constants_in_ram
    assert constants_where(one) == "flash, copied into RAM region DTCM at startup"
    assert constants_where(()) == "flash"


def test_under_emulate_a_run_reports_where_the_emulated_boards_build_copies_the_constants():
    """The QEMU build keeps AD's constants in its one RAM; the run says where a build for the STM32F746 puts them:
    as `mtk compile --board stm32f746g_disco --weights-in-ram` does."""
    ad = with_constants(share("RAM", 271_000, tuple((n - 3, 4) for n in AD_ARRAYS.values())))
    shares = emulated_constants(ad, get_board("stm32f746g_disco"))
    assert [(s.name, s.constant_bytes, len(s.arrays)) for s in shares] == [("DTCM", 53_340, 5), ("SRAM0", 217_660, 5)]
    assert emulated_constants(with_constants(constant_bytes=271_000), get_board("stm32f746g_disco")) == ()
