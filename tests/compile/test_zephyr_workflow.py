"""A Zephyr user's workflow without Zephyr: the minimal west manifest, rendering again over an
application the user edited, flashing from the build folder `west build` left, the AN500's FPU."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import yaml

from mtk.cli import main
from harness import RUNNERS_YAML, executable, zephyr_tree
from checkout import FAKE



def test_the_manifest_imports_only_the_modules_the_boards_need(capsys):
    assert main(["zephyr-manifest"]) == 0
    zephyr = yaml.safe_load(capsys.readouterr().out)["manifest"]["projects"][0]
    assert (zephyr["name"], zephyr["revision"]) == ("zephyr", "v4.2.0")
    assert zephyr["import"]["name-allowlist"] == ["cmsis_6", "hal_stm32", "hal_rpi_pico"]
    assert main(["zephyr-manifest", "--board", "mps2/an386", "--revision", "v4.1.0"]) == 0
    zephyr = yaml.safe_load(capsys.readouterr().out)["manifest"]["projects"][0]
    assert zephyr["import"]["name-allowlist"] == ["cmsis_6"] and zephyr["revision"] == "v4.1.0"


def test_rendering_again_refreshes_what_mtk_owns_and_keeps_the_users_edits(tmp_path, capsys):
    app = tmp_path / "app"
    assert main(["project", str(FAKE), "--board", "qemu_cortex_m3", "-o", str(app)]) == 0
    (app / "prj.conf").write_text((app / "prj.conf").read_text() + "CONFIG_ASSERT=y\n")   # the user's edit
    (app / "src" / "sensor.c").write_text("int sensor;\n")                                 # the user's own file
    (app / "build").mkdir()
    (app / "build" / "CMakeCache.txt").write_text("")
    (app / "model" / "src" / "stale.c").write_text("")   # mtk's, from an earlier render of another model:
    record = json.loads((app / "mtk-project.json").read_text())
    record["owned"]["model/src/stale.c"] = hashlib.sha256(b"").hexdigest()
    (app / "mtk-project.json").write_text(json.dumps(record))
    (app / "model" / "src" / "mine.c").write_text("int mine;\n")   # the user's own, in a folder mtk owns
    capsys.readouterr()

    assert main(["project", str(FAKE), "--board", "qemu_cortex_m3", "-o", str(app), "--profile"]) == 0
    assert "kept your edits of prj.conf (--force replaces them with mtk's)" in capsys.readouterr().err
    assert "CONFIG_ASSERT=y" in (app / "prj.conf").read_text()
    assert (app / "src" / "sensor.c").exists() and (app / "build" / "CMakeCache.txt").exists()
    assert not (app / "model" / "src" / "stale.c").exists() and (app / "src" / "model_glue.c").exists()
    assert (app / "model" / "src" / "mine.c").read_text() == "int mine;\n"
    assert json.loads((app / "mtk-project.json").read_text())["board"] == "qemu_cortex_m3"

    assert main(["project", str(FAKE), "--board", "qemu_cortex_m3", "-o", str(app), "--profile", "--force"]) == 0
    assert "replaced your edits of prj.conf" in capsys.readouterr().err
    prj = (app / "prj.conf").read_text()
    assert "CONFIG_ASSERT=y" not in prj and "CONFIG_MTK_PROFILE=y" in prj
    assert (app / "src" / "sensor.c").exists() and (app / "build").is_dir()


def test_a_folder_mtk_did_not_render_is_still_refused(tmp_path, capsys):
    (tmp_path / "mine.txt").write_text("")
    assert main(["project", str(FAKE), "--board", "qemu_cortex_m3", "-o", str(tmp_path)]) == 2
    assert "not empty" in capsys.readouterr().err and (tmp_path / "mine.txt").exists()


def west_build(folder: Path, app: Path) -> Path:
    """The files `west build -d folder app` leaves that flashing reads."""
    (folder / "zephyr").mkdir(parents=True)
    (folder / "CMakeCache.txt").write_text(f"CMAKE_BUILD_TYPE:STRING=\nAPPLICATION_SOURCE_DIR:PATH={app}\n")
    (folder / "zephyr" / "runners.yaml").write_text(RUNNERS_YAML)
    (folder / "zephyr" / "zephyr.elf").write_bytes(b"\x7fELF")
    return folder.resolve()


def test_flash_finds_the_build_folder_west_build_used(tmp_path, monkeypatch, capsys, one_stlink, fake_west):
    app = tmp_path / "app"
    assert main(["project", str(FAKE), "--board", "nucleo_f746zg", "-o", str(app)]) == 0
    elsewhere = tmp_path / "elsewhere"
    build = west_build(elsewhere / "build", app.resolve())   # `west build -b nucleo_f746zg /abs/app` from there
    monkeypatch.chdir(elsewhere)
    assert main(["flash", "--board", "nucleo_f746zg"]) == 0   # the README's command, from where west ran
    assert main(["flash", str(app)]) == 0
    assert main(["flash", str(app), "-d", str(build)]) == 0
    assert fake_west.read_text().count(f"flash --skip-rebuild -d {build} -r stm32cubeprogrammer") == 3

    other = west_build(tmp_path / "other", tmp_path / "another_app")
    assert main(["flash", str(app), "--build-dir", str(other)]) == 2
    assert f"{other} is a build of {tmp_path / 'another_app'}, not of" in capsys.readouterr().err


def test_the_an500_application_gives_its_cortex_m7_the_fpu(tmp_path):
    assert main(["project", str(FAKE), "--board", "mps2/an500", "-o", str(tmp_path / "app")]) == 0
    kconfig = (tmp_path / "app" / "Kconfig").read_text()
    assert "config SOC_MPS2_AN500\n\tselect CPU_HAS_FPU_DOUBLE_PRECISION\n" in kconfig
    assert "CONFIG_FPU=y" in (tmp_path / "app" / "boards" / "mps2_an500.conf").read_text()
    assert main(["project", str(FAKE), "--board", "mps2/an386", "-o", str(tmp_path / "m4")]) == 0
    assert "CPU_HAS_FPU" not in (tmp_path / "m4" / "Kconfig").read_text()   # Zephyr's SoC has it


WEST_WITH_A_DROPPED_SETTING = """#!/bin/sh
echo '[1/2] Building C object zephyr/CMakeFiles/zephyr.dir/lib/os/printk.c.obj'
echo "warning: FPU (defined at soc/nxp/s32/s32k3/Kconfig.defconfig:15,"
echo "soc/nxp/imx/imx6sx/Kconfig.defconfig.mcimx6x_m4:8, arch/Kconfig:1005) was assigned the value 'y' but"
echo "got the value 'n'. Check these unsatisfied dependencies: ((SOC_SERIES_S32K3 && SOC_FAMILY_NXP_S32) ||"
echo "CPU_HAS_FPU (=n)."
echo '[2/2] Linking C executable zephyr/zephyr.elf'
"""


def test_a_kconfig_setting_zephyr_dropped_is_shown(tmp_path, monkeypatch, capsys):
    """Zephyr 4.2 dropped the AN500's CONFIG_FPU=y with nothing but a warning (wrapped over several lines)
in the build output."""
    app = tmp_path / "app"
    assert main(["project", str(FAKE), "--board", "mps2/an386", "-o", str(app)]) == 0
    base = zephyr_tree(tmp_path / "zephyr")
    executable(tmp_path / "bin", "west", WEST_WITH_A_DROPPED_SETTING)
    executable(tmp_path / "bin", "arm-none-eabi-gcc")
    monkeypatch.setenv("ZEPHYR_BASE", str(base))
    monkeypatch.delenv("ZEPHYR_TOOLCHAIN_VARIANT", raising=False)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:/usr/bin:/bin")
    capsys.readouterr()
    assert main(["build", str(app)]) == 4   # the made-up build leaves no ELF: a target failure
    err = capsys.readouterr().err
    assert "Zephyr set CONFIG_FPU=n, not y as asked: its dependencies are not met on mps2/an386" in err
