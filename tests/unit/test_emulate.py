"""Which QEMU machine runs a physical board's firmware for the cycle model (mtk.cycles.emulate)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from mtk.boards import all_boards, get_board
from mtk.budget import check_fits
from mtk.compiled import CompiledModel
from mtk.cycles.emulate import QEMU_BOARDS_OF_CPU, emulation_board, holds, qemu_board_for
from mtk.cycles.model import CycleModel
from mtk.errors import DoesNotFit, MtkError
from mtk.target import CPUS

from checkout import FAKE

# the architectures whose code each machine's core executes unchanged
EXECUTES = {"armv6-m": {"armv6-m"}, "armv7-m": {"armv6-m", "armv7-m"}, "armv7e-m": {"armv6-m", "armv7-m", "armv7e-m"},
            "armv8-m.main": {"armv6-m", "armv7-m", "armv7e-m", "armv8-m.main"},
            "armv8.1-m.main": {"armv6-m", "armv7-m", "armv7e-m", "armv8-m.main", "armv8.1-m.main"}}


@pytest.mark.parametrize("cpu", sorted(QEMU_BOARDS_OF_CPU))
def test_every_machine_of_a_core_executes_its_code(cpu):
    for name in QEMU_BOARDS_OF_CPU[cpu]:
        machine = get_board(name)
        assert machine.qemu is not None and CPUS[cpu].arch in EXECUTES[machine.cpu.arch], (cpu, name)


def test_every_physical_board_mtk_knows_has_a_machine_that_holds_it():
    for board in all_boards():
        if board.qemu is None:
            machine = emulation_board(board)
            assert machine.qemu is not None and holds(get_board(machine.name), board), board.name


@pytest.mark.parametrize("board", ["nucleo_g0b1re", "rpi_pico"])
def test_a_cortex_m0plus_board_runs_on_the_an385_with_its_core_and_memory(board):
    physical = get_board(board)
    machine = emulation_board(physical)
    assert (machine.name, machine.qemu.machine, machine.cpu.name) == ("mps2/an385", "mps2-an385", "cortex-m0plus")
    assert machine.cpu.gcc_flags[0] == "-mcpu=cortex-m0plus" and not machine.cpu.long_multiply
    assert (machine.flash_bytes, machine.ram_bytes, machine.emulates) == (physical.flash_bytes, physical.ram_bytes, board)
    [region] = machine.ram_regions
    assert (region.name, region.base, region.size, region.system) == ("RAM", 0x20000000, physical.ram_bytes, True)
    assert machine.clock_hz == 25_000_000 and machine.memory_timing == physical.memory_timing   # compiled as for it


def test_the_first_machine_that_holds_the_board_wins():
    small = replace(get_board("nucleo_g0b1re"), name="tiny_m0plus", flash_bytes=0x20000, ram_bytes=0x4000)
    assert emulation_board(small).qemu.machine == "microbit"
    assert emulation_board(replace(small, ram_bytes=0x4001)).qemu.machine == "mps2-an385"
    assert qemu_board_for("cortex-m0plus") == "bbc_microbit"   # instruction sequences: the first


def test_a_board_no_machine_holds_is_named():
    huge = replace(get_board("nucleo_g0b1re"), name="huge_m0plus", ram_bytes=0x1000000)
    with pytest.raises(MtkError, match="no QEMU machine running cortex-m0plus code has huge_m0plus's"):
        emulation_board(huge)
    with pytest.raises(MtkError, match="no QEMU machine runs cortex-m99 code"):
        qemu_board_for("cortex-m99")


def test_a_model_too_large_for_the_emulated_board_is_refused_in_its_name():
    model = CompiledModel.load(FAKE)
    machine = emulation_board(get_board("nucleo_g0b1re"))
    check_fits(model, machine)
    big = replace(model, memory=replace(model.memory, constant_bytes=0x80001))
    with pytest.raises(DoesNotFit, match="does not fit nucleo_g0b1re: .* nucleo_g0b1re has 524,288 B"):
        check_fits(big, machine)


def test_a_boards_code_ram_sits_at_the_top_of_the_machines_code_memory_outside_its_flash():
    """The L4R5's SRAM2 on the code bus (64 KB, beside its 576 KB of data RAM, SRAM1 and SRAM3) emulated on the an386:
    the last 64 KB of its 4 MB code memory, which the cycle model's flash range leaves out (zero wait, no cache); its
    RAM regions one region of their size."""
    l4r5 = get_board("nucleo_l4r5zi")
    assert (l4r5.code_ram.base, l4r5.code_ram.size) == (0x10000000, 0x10000)
    machine = emulation_board(l4r5)
    assert (machine.code_ram.base, machine.code_ram.size) == (0x3F0000, 0x10000)
    assert (machine.qemu.code.base, machine.qemu.code.size) == (0, 0x3F0000)
    assert machine.ram_bytes == machine.system_region.size == l4r5.ram_bytes == 576 * 1024
    assert len(machine.ram_regions) == 1
    model = CycleModel.for_board(machine, l4r5)
    assert ("flash", 0, 0x3F0000) in model.ranges
    assert not [r for r in model.ranges if r[1] <= 0x3F0000 < r[1] + r[2]]
    assert "region 0x0 0x3f0000 5 1 1" in model.table_text()


def test_a_board_without_code_ram_keeps_the_machines_code_memory():
    machine = emulation_board(get_board("nucleo_u575zi_q"))
    assert machine.code_ram is None and machine.qemu == get_board("mps2/an505").qemu
    assert machine.ram_bytes == get_board("nucleo_u575zi_q").ram_bytes
