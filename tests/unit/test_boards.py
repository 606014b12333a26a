"""Board registry and `mtk boards`."""

from __future__ import annotations

import json
import re

import pytest

from mtk.boards import (DEFAULT_BOARD, _code_ram_from_yaml, _ram_regions_from_yaml, all_boards, boards_that_fit,
                        fitting_boards_hint, get_board)
from mtk.cli import main
from mtk.errors import MtkError
from mtk.runners import get_runner
from mtk.target import CPUS

REQUIRED = ["mps2/an385", "mps2/an386", "mps2/an500", "mps3/corstone300/an547", "qemu_cortex_m3", "bbc_microbit",
            "qemu_cortex_m0", "mps2/an505", "mps2/an521/cpu0", "mps3/an524", "nucleo_f746zg", "nucleo_l4r5zi", "stm32f746g_disco",
            "nucleo_u575zi_q", "nucleo_g0b1re", "rpi_pico", "rpi_pico2/rp2350a/m33", "nucleo_h7a3zi_q"]


def test_required_boards_are_registered():
    assert [b.name for b in all_boards()] == REQUIRED
    assert get_board(DEFAULT_BOARD).cpu.name == "cortex-m4"


@pytest.mark.parametrize("alias, name", [
    ("mps2_an386", "mps2/an386"), ("MPS2/AN386", "mps2/an386"), ("mps3_an547", "mps3/corstone300/an547"),
    ("mps3/an547", "mps3/corstone300/an547"), ("mps3_corstone300_an547", "mps3/corstone300/an547"),
    ("qemu_cortex_m3", "qemu_cortex_m3"), ("microbit", "bbc_microbit"), ("mps2_an505", "mps2/an505"),
    ("mps2/an521", "mps2/an521/cpu0"), ("mps2_an521_cpu0", "mps2/an521/cpu0"), ("mps3_an524", "mps3/an524"),
])
def test_aliases(alias, name):
    assert get_board(alias).name == name


def test_unknown_board_lists_known_ones():
    with pytest.raises(MtkError) as err:
        get_board("mps2/an999")
    assert "mps2/an999" in str(err.value) and "nucleo_f746zg" in str(err.value)


@pytest.mark.parametrize("typo, suggestion", [("mps2/an368", "did you mean mps2/an386"), ("an386", "did you mean mps2/an386"),
                                              ("nucleo_f746", "did you mean nucleo_f746zg")])
def test_a_board_typo_gets_a_suggestion(typo, suggestion, capsys):
    """Refused while the arguments are parsed: exit 2 under the command's usage line, before any work."""
    with pytest.raises(SystemExit) as exit_info:
        main(["compile", "m.tflite", "-o", "out", "--board", typo])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and err.startswith("usage: mtk compile") and suggestion in err


def test_a_runner_typo_gets_a_suggestion():
    with pytest.raises(MtkError, match=r"runner 'openocdd' cannot run nucleo_f746zg; did you mean openocd"):
        get_runner(get_board("nucleo_f746zg"), "openocdd")


def test_no_board_has_room_for_everything():
    assert fitting_boards_hint(1 << 40, 0).startswith("no board mtk knows")
    roomy = [b.name for b in boards_that_fit(0, 300 * 1024)]
    assert "mps2/an386" in roomy and "nucleo_f746zg" in roomy and "qemu_cortex_m3" not in roomy


@pytest.mark.parametrize("board", all_boards(), ids=lambda b: b.name)
def test_board_is_complete(board):
    assert CPUS[board.cpu.name] == board.cpu
    assert board.clock_hz > 1_000_000 and board.flash_bytes > 0 and board.ram_bytes > 0 and board.console
    if board.qemu:
        assert board.usb_vid_pid is None and not board.runners
        assert board.qemu.code.size <= board.flash_bytes and board.qemu.ram.size <= board.ram_bytes
        assert board.qemu.uart_kind in ("cmsdk", "pl011", "nrf51")
    else:
        assert re.fullmatch(r"[0-9a-f]{4}:[0-9a-f]{4}", board.usb_vid_pid) and "openocd" in board.runners
        assert "pyocd" not in board.runners   # pyOCD: pyocd_target
        assert board.pyocd_target and board.zephyr_modules


def test_qemu_memory_maps():
    an547 = get_board("mps3/corstone300/an547").qemu
    assert (an547.machine, an547.code.base, an547.ram.base, an547.uart_base) == \
        ("mps3-an547", 0x10000000, 0x30000000, 0x59303000)
    an505 = get_board("mps2/an505").qemu
    assert (an505.machine, an505.code.base, an505.ram.base, an505.uart_base, an505.timer_hz) == \
        ("mps2-an505", 0x10000000, 0x38000000, 0x50200000, 20_000_000)
    an524 = get_board("mps3/an524").qemu
    assert (an524.code.size, an524.ram.base, an524.ram.size, an524.uart_base, an524.timer_hz) == \
        (0x80000, 0x30000000, 0x20000, 0x51303000, 32_000_000)
    lm3s = get_board("qemu_cortex_m3").qemu
    assert (lm3s.machine, lm3s.uart_kind, lm3s.uart_base, lm3s.ram.size) == ("lm3s6965evb", "pl011", 0x4000C000, 0x10000)


def test_boards_command_json(capsys):
    assert main(["boards", "--json"]) == 0
    boards = json.loads(capsys.readouterr().out)
    assert [b["name"] for b in boards] == REQUIRED
    assert boards[1]["qemu_machine"] == "mps2-an386" and boards[REQUIRED.index("nucleo_f746zg")]["runners"][0] == "stm32cubeprogrammer"


def test_boards_command_table(capsys):
    assert main(["boards"]) == 0
    out = capsys.readouterr().out
    assert "mps2/an386 (default)" in out and "QEMU lm3s6965evb" in out and "USB 0483:374b" in out


@pytest.mark.parametrize("board, cpu, clock_mhz, flash_kb, ram_kb, console, usb, module", [
    ("nucleo_u575zi_q", "cortex-m33", 160, 2048, 768, "usart1", "0483:374e", "hal_stm32"),   # ST-LINK V3E
    ("nucleo_g0b1re", "cortex-m0plus", 64, 512, 144, "usart2", "0483:374b", "hal_stm32"),    # ST-LINK V2-1
    ("rpi_pico", "cortex-m0plus", 125, 2048, 264, "uart0", "2e8a:000c", "hal_rpi_pico"),     # Debug Probe
    ("rpi_pico2/rp2350a/m33", "cortex-m33", 150, 4096, 520, "uart0", "2e8a:000c", "hal_rpi_pico"),
    ("nucleo_h7a3zi_q", "cortex-m7", 280, 2048, 1024, "usart3", "0483:374e", "hal_stm32"),   # ST-LINK V3E
])
def test_curated_m33_and_m0plus_boards(board, cpu, clock_mhz, flash_kb, ram_kb, console, usb, module):
    b = get_board(board)
    assert (b.cpu.name, b.clock_hz // 1_000_000, b.flash_bytes // 1024, b.ram_bytes // 1024, b.console,
            b.usb_vid_pid, b.zephyr_modules) == (cpu, clock_mhz, flash_kb, ram_kb, console, usb, (module,))
    assert get_board(board.split("/")[0]).name == board   # rpi_pico2, as Zephyr's shorthand


def test_zephyr_s_rp2350_gets_the_dsp_extension_its_soc_does_not_declare():
    assert get_board("rpi_pico2").zephyr_selects == (("SOC_RP2350A_M33", ("ARMV8_M_DSP",)),)
    assert get_board("rpi_pico/rp2040").name == "rpi_pico"


@pytest.mark.parametrize("label", ["sram1 { status = \"disabled\"; }; &sram0", "../sram1", "sram1 /*"])
def test_a_zephyr_node_label_that_is_no_c_identifier_is_refused(label):
    """A code RAM's or RAM region's `zephyr_node` is written into the application's devicetree overlay as it is."""
    with pytest.raises(ValueError, match="devicetree node label .* is not a C identifier"):
        _code_ram_from_yaml({"base": 0x10000000, "size": 0x10000, "zephyr_node": label})
    with pytest.raises(ValueError, match="devicetree node label"):
        _ram_regions_from_yaml([{"name": "SRAM1", "base": 0x20000000, "size": 0x1000, "system": True,
                                 "zephyr_node": label}], 0x1000, None)
    assert _code_ram_from_yaml({"base": 0x10000000, "size": 0x10000, "zephyr_node": "sram1"}).zephyr_node == "sram1"
