"""boards.yaml `memory_timing` (mtk.cycles.memory): a shared cache, sequential fills, and the plugin lines of
the boards whose flash sits behind one (the Picos' XIP cache, the G0B1's flash instruction cache, the L4R5's ART,
the U575's ICACHE)."""

from __future__ import annotations

import pytest

from mtk.boards import get_board
from mtk.cycles import memory

RANGES = {"flash": [(0, 0x400000)], "ram": [(0x20000000, 0x1000)]}


def test_a_shared_cache_serves_fetches_and_loads_and_a_sequential_fill_has_its_own_waits():
    timing = memory.memory_timing_from_yaml({
        "flash": {"wait_states": 100, "sequential_wait_states": 40, "cache": {"bytes": 4096, "line": 8, "ways": 2}},
        "ram": {"wait_states": 0}})
    assert timing[0].fill_waits() == (100, 40) and timing[1].fill_waits() == (0, 0)
    assert memory.plugin_lines(timing, RANGES) == [
        "region 0x0 0x400000 100 1 1 40", "region 0x20000000 0x20001000 0 0 0", "cache 4096 8 2"]


def test_without_sequential_waits_the_region_line_is_as_before():
    timing = memory.memory_timing_from_yaml({"flash": {"wait_states": 2, "icache": {"bytes": 16, "line": 8, "ways": 2}},
                                             "ram": {"wait_states": 0}})
    assert memory.plugin_lines(timing, RANGES) == [
        "region 0x0 0x400000 2 1 0", "region 0x20000000 0x20001000 0 0 0", "icache 16 8 2"]


@pytest.mark.parametrize("entry", [
    {"flash": {"wait_states": 1, "cache": {"bytes": 64, "line": 8, "ways": 2}, "icache": {"bytes": 64, "line": 8,
                                                                                        "ways": 2}}},
    {"flash": {"wait_states": 1, "cache": {"bytes": 64, "line": 8, "ways": 2}},
     "ram": {"wait_states": 1, "dcache": {"bytes": 64, "line": 8, "ways": 2}}},
])
def test_a_shared_cache_and_split_caches_are_exclusive(entry):
    with pytest.raises(ValueError, match="exclusive"):
        memory.memory_timing_from_yaml(entry)


@pytest.mark.parametrize("board, lines", [
    ("nucleo_g0b1re", ["region 0x0 0x400000 2 1 0", "region 0x20000000 0x20001000 0 0 0", "icache 16 8 2",
                       "param prefetch 1"]),
    ("rpi_pico", ["region 0x0 0x400000 112 1 1", "region 0x20000000 0x20001000 0 0 0", "cache 16384 8 2"]),
    ("rpi_pico2/rp2350a/m33", ["region 0x0 0x400000 108 1 1 48", "region 0x20000000 0x20001000 0 0 0",
                               "cache 16384 8 2"]),
    # the ART's caches fill a 64-bit flash read at a time (dual-bank mode, as Zephyr runs the flash)
    ("nucleo_l4r5zi", ["region 0x0 0x400000 5 1 1", "region 0x20000000 0x20001000 0 0 0", "icache 1024 8 128",
                       "dcache 256 8 32", "param prefetch 1"]),
    # the ICACHE on the C-AHB bus: one cache for fetches and loads, 2-way as mtk's applications keep it, no prefetch
    ("nucleo_u575zi_q", ["region 0x0 0x400000 4 1 1", "region 0x20000000 0x20001000 0 0 0", "cache 8192 16 2"]),
])
def test_boards_plugin_lines(board, lines):
    timing = get_board(board).memory_timing
    assert all(t.source for t in timing if t.wait_states)
    assert memory.plugin_lines(timing, RANGES) == lines


def test_board_json_carries_the_shared_cache_and_sequential_waits():
    flash = get_board("rpi_pico2/rp2350a/m33").to_json()["memory_timing"]["flash"]
    assert flash["cache"] == {"bytes": 16384, "line": 8, "ways": 2} and flash["icache"] is None
    assert (flash["wait_states"], flash["sequential_wait_states"]) == (108, 48)
