"""Memory regions: boards list their RAM regions (boards.yaml), the plan places
arena buffers in them (codegen/regions.py: the fastest region first, the largest buffers moving on),
the library puts each region's pool in its linker section, the bare-metal linker script and the
Zephyr overlay say where; a model whose arena no single region holds is split across them
(tests/target/test_regions_qemu.py runs one)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from mtk.boards import RamRegion, get_board
from mtk.codegen.memory_plan import Buffer, plan_memory
from mtk.codegen.regions import live_bytes, place_in_regions
from mtk.errors import ModelError

from checkout import FAKE, REPO

DTCM = RamRegion("DTCM", 0x30000000, 1000, system=True, tcm=True)
SRAM = RamRegion("SRAM", 0x11000000, 4000)


def buffers() -> list[Buffer]:
    return [Buffer("big", 2500, 0, 1), Buffer("mid", 700, 1, 2), Buffer("scratch", 100, 1, 1), Buffer("out", 50, 2, 3)]


def test_an_arena_that_fits_the_first_region_stays_there():
    plan = plan_memory(buffers()[1:])
    pools = place_in_regions(plan, [DTCM, SRAM], system_reserved=0, what="m")
    assert [(p.region, p.section) for p in pools] == [("DTCM", None)]
    assert {b.pool for b in plan.buffers} == {"DTCM"}


def test_the_largest_buffers_move_on_and_an_arena_larger_than_any_region_is_split():
    plan = plan_memory(buffers())
    assert plan.arena_bytes == 3328   # more than either region holds
    pools = place_in_regions(plan, [DTCM, RamRegion("SRAM", 0x11000000, 2600)], system_reserved=100, what="m")
    assert {b.name: b.pool for b in plan.buffers} == {"big": "SRAM", "mid": "DTCM", "scratch": "DTCM", "out": "DTCM"}
    assert [(p.region, p.nbytes, p.capacity, p.section) for p in pools] == [("DTCM", 816, 900, None),
                                                                            ("SRAM", 2512, 2600, "SRAM")]
    for pool in pools:   # no two buffers of a pool live at once overlap
        mine = [b for b in plan.buffers if b.pool == pool.region]
        assert max(b.offset + b.nbytes for b in mine) <= pool.nbytes
        assert max(live_bytes(mine, 4)) <= pool.nbytes


def test_an_arena_too_big_for_all_regions_is_refused_with_figures():
    with pytest.raises(ModelError, match=r"m: the arena does not fit .*DTCM 900 B.*SRAM 2,000 B.*'big' alone needs 2,500 B"):
        place_in_regions(plan_memory(buffers()), [DTCM, RamRegion("SRAM", 0, 2000)], system_reserved=100, what="m")


def test_board_regions_add_up_to_the_boards_ram():
    an547 = get_board("mps3/an547")
    assert [(r.name, r.size, r.system) for r in an547.ram_regions] == [("DTCM", 512 * 1024, True),
                                                                        ("SRAM", 2 * 1024 * 1024, False)]
    assert an547.system_region.base == an547.qemu.ram.base
    f746 = get_board("nucleo_f746zg")
    assert [(r.name, r.size // 1024, r.tcm) for r in f746.ram_regions] == [("DTCM", 64, True), ("SRAM0", 256, False)]
    # the RAM their Zephyr applications have (zephyr,sram and the nodes beside it), not the chip's total
    l4r5 = get_board("nucleo_l4r5zi")
    assert [(r.name, r.base, r.size // 1024, r.system, r.zephyr_node) for r in l4r5.ram_regions] == [
        ("SRAM1", 0x20000000, 192, True, None), ("SRAM3", 0x20040000, 384, False, "sram2")]
    h7a3 = get_board("nucleo_h7a3zi_q")
    assert [(r.name, r.size // 1024, r.system) for r in h7a3.ram_regions] == [
        ("SRAM0", 256, True), ("SRAM1", 384, False), ("SRAM2", 384, False)]
    assert len(get_board("mps2/an386").ram_regions) == 1


def with_regions(tmp_path: Path, regions: list[dict]) -> Path:
    """The fake compiled model as if its arena had pools in `regions`."""
    compiled = tmp_path / "compiled"
    shutil.copytree(FAKE, compiled)
    meta = json.loads((compiled / "metadata.json").read_text())
    meta["memory"]["regions"] = regions
    (compiled / "metadata.json").write_text(json.dumps(meta))
    return compiled


def region_use(name: str, nbytes: int = 32) -> dict:
    return {"name": name, "arena_bytes": nbytes, "limit_bytes": 65536, "live_bytes": [nbytes]}


@pytest.mark.parametrize("board_name, regions, placed", [
    ("nucleo_f746zg", ["DTCM"], {"DTCM": "0x20000000, 64 KB"}),               # the TCM; the system SRAM0 is .bss
    ("nucleo_f746zg", ["DTCM", "SRAM0"], {"DTCM": "0x20000000, 64 KB"}),
    ("mps3/an547", ["DTCM", "SRAM"], {"SRAM": "0x11000000, 2048 KB"}),         # the system DTCM is .bss
    ("mps3/an547", ["DTCM"], {}),
    ("nucleo_l4r5zi", ["SRAM1", "SRAM3"], {"SRAM3": "0x20040000, 384 KB"}),  # the system SRAM1 is .bss
    ("nucleo_h7a3zi_q", ["SRAM0", "SRAM1", "SRAM2"], {"SRAM1": "0x24040000, 384 KB", "SRAM2": "0x240a0000, 384 KB"}),
])
def test_the_zephyr_app_places_each_pool_outside_the_system_ram_in_its_region(tmp_path, board_name, regions, placed):
    """Zephyr's linker puts input section NAME in the devicetree node whose zephyr,memory-region is NAME
    (LINKER_DT_SECTIONS, defining __NAME_start); the app says so in its overlay and fails to link, rather
    than leave the pool an orphan section, on a board without that node. (Built with Zephyr 4.2 by hand:
    the AN547's SRAM pool at 0x11000000 and the F746's DTCM pool at 0x20000000.)"""
    from mtk.compiled import CompiledModel
    from mtk.platforms import ProjectOptions, get_platform
    from mtk.platforms.zephyr import board_file_name

    compiled = CompiledModel.load(with_regions(tmp_path, [region_use(r) for r in regions]))
    board = get_board(board_name)
    project = get_platform("zephyr").render(compiled, board, tmp_path / "app", ProjectOptions())
    overlay = (project / "boards" / f"{board_file_name(board)}.overlay").read_text()
    cmake = (project / "CMakeLists.txt").read_text()
    for region, where in placed.items():
        assert f'input section "{region}"' in overlay and f"{region} ({where})" in overlay
    required = [line for line in cmake.splitlines() if "--require-defined" in line]
    assert required == ([f"zephyr_link_libraries({' '.join(f'-Wl,--require-defined=__{r}_start' for r in placed)})"]
                        if placed else [])
    assert overlay.count("input section") == len(placed)
    for region in board.ram_regions:   # a node Zephyr's devicetree names no region gets the name in the overlay
        named = (f'&{region.zephyr_node} {{\n\tcompatible = "zephyr,memory-region", "mmio-sram";\n'
                 f'\tzephyr,memory-region = "{region.name}";\n}};')
        assert (named in overlay) == (region.name in placed and region.zephyr_node is not None)


def test_a_pool_in_a_region_the_board_lacks_is_refused(tmp_path):
    from mtk.compiled import CompiledModel
    from mtk.platforms import ProjectOptions, get_platform

    compiled = CompiledModel.load(with_regions(tmp_path, [region_use("DTCM")]))
    with pytest.raises(ModelError, match="compiled for RAM region DTCM, which mps2/an386 does not have"):
        get_platform("baremetal").render(compiled, get_board("mps2/an386"), tmp_path / "p", ProjectOptions())


@pytest.mark.slow
def test_compile_reports_regions_and_plots_live_bytes(tmp_path, capsys):
    """`mtk compile -v --plot-memory` for the STM32F746: the digits CNN's arena in DTCM (tightly coupled,
    not the system region: its own linker section), each buffer's region, the live bytes op by op."""
    from mtk.cli import main

    digits = REPO / "models" / "digits_cnn_int8.tflite"
    assert main(["compile", str(digits), "--board", "nucleo_f746zg", "-o", str(tmp_path / "out"), "-v",
                 "--plot-memory", str(tmp_path / "mem.png")]) == 0
    out = capsys.readouterr().out
    assert "region" in out.splitlines()[0] and "of the arena (800 B)" in out
    assert "arena      800 B (lower bound 800 B, room on the board" in out and "; DTCM 800 B of 65,536" in out
    source = (tmp_path / "out" / "src" / "tvmgen_default.c").read_text()
    assert 'tvmgen_default_arena_dtcm[800] TVMGEN_ALIGNED(16) TVMGEN_SECTION("DTCM")' in source
    assert (tmp_path / "mem.png").stat().st_size > 10_000
