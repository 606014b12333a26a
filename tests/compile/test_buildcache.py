"""Builds reused across runs: a second `mtk run` of the same model takes the firmware from the cache
($XDG_CACHE_HOME/mtk, its own folder per test: conftest.py), a changed option builds again, and a
Zephyr application is built again in the same folder, so that `west build` is incremental."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path


from mtk.boards import get_board
from mtk.buildcache import cache_root, firmware_key, sync_tree
from mtk.compiled import CompiledModel
from mtk.cycles.emulate import emulation_board
from mtk.ops.variants import Variant
from mtk.pipeline import build_project
from mtk.runoptions import RunOptions
from mtk.tuning import Tuning

from harness import zephyr_tree
from checkout import FAKE, REPO

DIGITS_INT8 = REPO / "models" / "digits_cnn_int8.tflite"


def test_the_key_changes_with_every_input_of_the_build(tmp_path):
    options = RunOptions(get_board("mps2/an386"))
    key = firmware_key(DIGITS_INT8, options)
    assert firmware_key(DIGITS_INT8, RunOptions(get_board("mps2/an386"))) == key
    edited = tmp_path / "edited.tflite"
    edited.write_bytes(DIGITS_INT8.read_bytes()[:-1] + b"\0")
    changed = [firmware_key(edited, options)] + [
        firmware_key(DIGITS_INT8, RunOptions(get_board("mps2/an386"), **change)) for change in (
            {"profile": True}, {"max_ram": 32768}, {"max_recompute": 0.2}, {"mlperf_tiny": "auto"},
            {"tuning": Tuning({"CONV_2D in=1x28x28x1 cortex-m4": Variant("1x4/int8")})}, {"calib": str(DIGITS_INT8)})]
    changed.append(firmware_key(DIGITS_INT8, RunOptions(get_board("mps2/an500"))))
    l4r5 = get_board("nucleo_l4r5zi")   # emulated with and without its code RAM: the same QEMU board's name
    changed += [firmware_key(DIGITS_INT8, RunOptions(emulation_board(board)))
                for board in (l4r5, replace(l4r5, code_ram=None))]
    assert key not in changed and len(set(changed)) == len(changed)


def test_the_key_changes_with_the_boards_definition():
    """A board edited in boards.yaml (or the Zephyr workspace) keeps its name but builds again."""
    l4r5 = get_board("nucleo_l4r5zi")
    slower = replace(l4r5, memory_timing=(replace(l4r5.memory_timing[0], wait_states=9), *l4r5.memory_timing[1:]))

    def key(board, emulated=False):
        return firmware_key(DIGITS_INT8, RunOptions(emulation_board(board), emulate=board) if emulated
                            else RunOptions(board))

    assert key(l4r5) == key(get_board("nucleo_l4r5zi")) and key(l4r5, True) == key(get_board("nucleo_l4r5zi"), True)
    assert key(slower) != key(l4r5) and key(slower, True) != key(l4r5, True)
    assert key(replace(l4r5, clock_hz=l4r5.clock_hz // 2), True) != key(l4r5, True)   # in the emulated board only


def test_sync_replaces_only_what_changed(tmp_path):
    source, target = tmp_path / "new", tmp_path / "kept"
    for folder, text in ((source, "same"), (target, "same")):
        (folder / "src").mkdir(parents=True)
        (folder / "src" / "same.c").write_text(text)
    (source / "src" / "changed.c").write_text("new")
    (target / "src" / "changed.c").write_text("old")
    (target / "src" / "gone.c").write_text("gone")
    (target / "build").mkdir()
    (target / "build" / "zephyr.elf").write_text("elf")
    os.utime(target / "src" / "same.c", ns=(1, 1))
    sync_tree(source, target, keep=("build",))
    assert (target / "src" / "same.c").stat().st_mtime_ns == 1   # unchanged: `west build` sees nothing new
    assert (target / "src" / "changed.c").read_text() == "new"
    assert not (target / "src" / "gone.c").exists()
    assert (target / "build" / "zephyr.elf").read_text() == "elf"


def test_a_zephyr_app_is_built_again_in_the_same_folder(tmp_path, monkeypatch, fake_west):
    monkeypatch.setenv("ZEPHYR_BASE", str(zephyr_tree(tmp_path / "zephyr")))
    monkeypatch.setenv("ZEPHYR_TOOLCHAIN_VARIANT", "gnuarmemb")
    monkeypatch.setenv("FAKE_WEST_ELF", "ELF")
    monkeypatch.setenv("PATH", f"{os.environ['PATH']}{os.pathsep}/usr/bin")   # env(1), which runs west
    options = RunOptions(get_board("qemu_cortex_m3"), platform="zephyr")
    compiled = CompiledModel.load(FAKE)
    elves = [build_project(compiled, None, options, tmp_path / f"work{k}") for k in range(2)]
    builds = fake_west.read_text().splitlines()
    assert len(builds) == 2 and builds[0] == builds[1]
    app = Path(builds[0].split()[-1])
    assert app.parent == cache_root() / "zephyr"
    assert f"build --pristine auto -b qemu_cortex_m3 -d {app / 'build'} {app}" in builds[0]
    assert [elf.read_text() for elf in elves] == ["ELF", "ELF"]   # each run its own copy of the ELF


