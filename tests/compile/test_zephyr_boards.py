"""Any board of a Zephyr workspace (mtk.zephyr_boards), on a small Zephyr tree the tests write: a board
(hardware model v2, one SoC of two CPU clusters) with its devicetree, twister YAML, Kconfig and
board.cmake; a module holding a devicetree include; Zephyr's devicetree library (the `devicetree`
package, Zephyr's python-devicetree) and kconfiglib from PyPI where Zephyr has them under scripts/.
Zephyr's list_boards.py, list_hardware.py and zephyr_module.py are stand-ins printing what the real
ones print for this tree, with the arguments Zephyr's CMake gives them."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

from mtk import boards
from mtk.boards import get_board, require_clock
from mtk.cli import main
from mtk.compiled import CompiledModel
from mtk.errors import MtkError, TargetError
from mtk.runners import get_runner
from mtk.platforms import ProjectOptions, get_platform
from mtk.platforms.zephyr import read_project
from checkout import FAKE, toolkit_env
from harness import executable, zephyr_tree

BOARDS = [  # what list_boards.py --cmakeformat prints for the tree (DIR filled in by the fixture)
    {"name": "testboard", "socs": ["testsoc"], "qualifiers": ["testsoc/cpuapp", "testsoc/cpunet"]},
    {"name": "fastboard", "socs": ["fastsoc"], "qualifiers": ["fastsoc"]},
    {"name": "riscboard", "socs": ["riscsoc"], "qualifiers": ["riscsoc"]},
]
LIST_BOARDS = """\
import argparse, json, pathlib
parser = argparse.ArgumentParser()
for root in ("arch", "board", "soc"):
    parser.add_argument(f"--{root}-root", action="append", required=True)
parser.add_argument("--cmakeformat", required=True)
args = parser.parse_args()
for b in json.loads((pathlib.Path(__file__).parent / "boards.json").read_text()):
    print(args.cmakeformat.format(NAME="NAME;" + b["name"], HWM="HWM;v2", DIR="DIR;" + b["dir"],
                                  SOCS="SOCS;" + ";".join(b["socs"]), QUALIFIERS="QUALIFIERS;" + ";".join(b["qualifiers"])))
"""
LIST_HARDWARE = """\
import argparse, pathlib
parser = argparse.ArgumentParser()
parser.add_argument("--soc-root", action="append", required=True)
parser.add_argument("--socs", action="store_true", required=True)
parser.add_argument("--cmakeformat", required=True)
args = parser.parse_args()
for soc in ("testsoc", "fastsoc", "riscsoc"):
    folder = pathlib.Path(args.soc_root[0]) / "soc" / "testvendor"
    print(args.cmakeformat.format(TYPE="TYPE;soc", NAME="NAME;" + soc, DIR="DIR;" + str(folder)))
"""
ZEPHYR_MODULE = """\
import argparse, pathlib
parser = argparse.ArgumentParser()
parser.add_argument("--zephyr-base", required=True)
parser.add_argument("--settings-out", required=True)
args = parser.parse_args()
module = pathlib.Path(args.zephyr_base).parent / "modules" / "hal_test"
pathlib.Path(args.settings_out).write_text(f'"DTS_ROOT":"{module}"\\n')
"""
BINDINGS = {   # compatible: its properties besides reg
    "arm,cortex-m33f": {"clock-frequency": "int"},
    "arm,cortex-m33": {"clock-frequency": "int"},
    "arm,cortex-m7": {"clock-frequency": "int"},
    "mmio-sram": {"zephyr,memory-region": "string", "zephyr,memory-attr": "int"},
    "arm,dtcm": {"zephyr,memory-region": "string"},
    "zephyr,memory-region": {"zephyr,memory-region": "string", "zephyr,memory-attr": "int"},
    "soc-nv-flash": {},
    "testvendor,uart": {"current-speed": "int"},
    "testvendor,rcc": {"clock-frequency": "int"},
}
DTS = """\
/dts-v1/;
#include <mem.h>
%(include)s
/ {
	cpus {
		#address-cells = <1>;
		#size-cells = <0>;
		cpu@0 {
			device_type = "cpu";
			compatible = "%(cpu)s";
			reg = <0>;
			%(clock)s
		};
	};
	chosen {
		zephyr,sram = &sram0;
		zephyr,flash = &flash0;
		zephyr,console = &uart0;
	};
	soc {
		#address-cells = <1>;
		#size-cells = <1>;
%(soc)s
	};
};
"""
TESTBOARD_SOC = """\
		sram0: memory@20000000 {
			compatible = "mmio-sram";
			reg = <0x20000000 DT_SIZE_K(%(sram_k)d)>;
		};
		flash0: flash@0 {
			compatible = "soc-nv-flash";
			reg = <0x0 DT_SIZE_K(1024)>;
		};
"""
FASTBOARD_SOC = """\
		dtcm: memory@20000000 {
			compatible = "zephyr,memory-region", "arm,dtcm";
			reg = <0x20000000 DT_SIZE_K(128)>;
			zephyr,memory-region = "DTCM";
		};
		sram0: memory@24000000 {
			compatible = "mmio-sram";
			reg = <0x24000000 DT_SIZE_K(256)>;
		};
		sram1: memory@24040000 {
			compatible = "zephyr,memory-region", "mmio-sram";
			reg = <0x24040000 DT_SIZE_K(384)>;
			zephyr,memory-region = "SRAM1";
		};
		sram4: memory@38000000 {
			compatible = "zephyr,memory-region", "mmio-sram";
			reg = <0x38000000 DT_SIZE_K(64)>;
			zephyr,memory-region = "SRAM4";
			status = "disabled";
		};
		qspi: memory@90000000 {
			compatible = "zephyr,memory-region", "mmio-sram";
			reg = <0x90000000 DT_SIZE_M(256)>;
			zephyr,memory-region = "QSPI";
			zephyr,memory-attr = <0x2000000>;
		};
		rcc: rcc@58024400 {
			compatible = "testvendor,rcc";
			reg = <0x58024400 0x400>;
			clock-frequency = <280000000>;
		};
		flash0: flash@8000000 {
			compatible = "soc-nv-flash";
			reg = <0x08000000 DT_SIZE_M(2)>;
		};
		uart0: serial@40011000 {
			compatible = "testvendor,uart";
			reg = <0x40011000 0x400>;
		};
"""


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))


def installed_package(name: str) -> Path:
    """Where PyPI's `name` is installed (found, not imported: mtk must import the tree's copy)."""
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None:
        pytest.skip(f"the '{name}' package is not installed (pip install -e .[test])")
    return Path(spec.origin).parent if spec.submodule_search_locations else Path(spec.origin)


def board_tree(root: Path) -> Path:
    """A Zephyr workspace at `root` (zephyr/ and modules/hal_test/); returns ZEPHYR_BASE."""
    base = zephyr_tree(root / "zephyr")
    scripts = base / "scripts"
    for name, text in (("list_boards.py", LIST_BOARDS), ("list_hardware.py", LIST_HARDWARE),
                       ("zephyr_module.py", ZEPHYR_MODULE)):
        write(scripts / name, text)
    shutil.copytree(installed_package("devicetree"), scripts / "dts" / "python-devicetree" / "src" / "devicetree")
    write(scripts / "kconfig" / "kconfiglib.py", installed_package("kconfiglib").read_text())
    boards = [{**b, "dir": str(base / "boards" / "testvendor" / b["name"])} for b in BOARDS]
    write(scripts / "boards.json", json.dumps(boards))
    for compatible, properties in BINDINGS.items():
        lines = [f'description: {compatible} for the tests', f'compatible: "{compatible}"', "properties:"]
        lines += [f"  {name}:\n    type: {kind}" for name, kind in {"reg": "array", **properties}.items()]
        write(base / "dts" / "bindings" / f"{compatible}.yaml", "\n".join(lines) + "\n")
    write(base / "dts" / "common" / "mem.h", "#define DT_SIZE_K(x) ((x) * 1024)\n#define DT_SIZE_M(x) (DT_SIZE_K(x) * 1024)\n")
    write(root / "modules" / "hal_test" / "dts" / "testvendor" / "testsoc.dtsi", """\
        / { soc { uart0: serial@40008000 { compatible = "testvendor,uart"; reg = <0x40008000 0x1000>; }; }; };
        """)
    soc = base / "soc" / "testvendor"
    write(soc / "Kconfig.soc", """\
        config SOC_TESTSOC
        \tbool
        config SOC_TESTSOC_CPUAPP
        \tbool
        \tselect SOC_TESTSOC
        config SOC_TESTSOC_CPUNET
        \tbool
        \tselect SOC_TESTSOC
        config SOC_FASTSOC
        \tbool
        """)
    write(soc / "Kconfig", """\
        config SOC_TESTSOC_CPUAPP
        \tselect CPU_CORTEX_M33
        \tselect CPU_HAS_FPU
        \tselect ARMV8_M_DSP
        \tselect HAS_SEGGER_RTT if ZEPHYR_SEGGER_MODULE
        config SOC_TESTSOC_CPUNET
        \tselect CPU_CORTEX_M33
        config SOC_FASTSOC
        \tselect CPU_CORTEX_M7
        \tselect CPU_HAS_FPU
        """)
    common = base / "boards" / "common"
    write(common / "jlink.board.cmake", "board_set_flasher_ifnset(jlink)\nboard_finalize_runner_args(jlink \"--dt-flash=y\")\n")
    write(common / "openocd.board.cmake", "board_finalize_runner_args(openocd)  # no default arguments\n")
    write(common / "nrfutil.board.cmake", "board_finalize_runner_args(nrfutil)\n")
    testboard = base / "boards" / "testvendor" / "testboard"
    write(testboard / "board.yml", "board:\n  name: testboard\n  socs:\n  - name: testsoc\n")
    write(testboard / "Kconfig.testboard", """\
        config BOARD_TESTBOARD
        \tselect SOC_TESTSOC_CPUAPP if BOARD_TESTBOARD_TESTSOC_CPUAPP
        \tselect SOC_TESTSOC_CPUNET if BOARD_TESTBOARD_TESTSOC_CPUNET
        """)
    write(testboard / "board.cmake", """\
        board_runner_args(jlink "--device=TESTSOC")
        # include(${ZEPHYR_BASE}/boards/common/nrfutil.board.cmake)
        include(${ZEPHYR_BASE}/boards/common/jlink.board.cmake)
        include(${ZEPHYR_BASE}/boards/common/openocd.board.cmake)
        """)
    for cluster, cpu, sram_k in (("cpuapp", "arm,cortex-m33f", 448), ("cpunet", "arm,cortex-m33", 64)):
        write(testboard / f"testboard_testsoc_{cluster}.dts",
              DTS % {"include": "#include <testvendor/testsoc.dtsi>", "cpu": cpu,
                     "clock": "clock-frequency = <128000000>;", "soc": TESTBOARD_SOC % {"sram_k": sram_k}})
        write(testboard / f"testboard_testsoc_{cluster}.yaml",
              f"identifier: testboard/testsoc/{cluster}\narch: arm\nram: {sram_k}\nflash: {1024 if cluster == 'cpuapp' else 256}\n")
    fastboard = base / "boards" / "testvendor" / "fastboard"
    write(fastboard / "board.yml", "board:\n  name: fastboard\n  socs:\n  - name: fastsoc\n")
    write(fastboard / "Kconfig.fastboard", "config BOARD_FASTBOARD\n\tselect SOC_FASTSOC\n")
    write(fastboard / "board.cmake", "include(${ZEPHYR_BASE}/boards/common/openocd.board.cmake)\n")
    write(fastboard / "fastboard.dts", DTS % {"include": "", "cpu": "arm,cortex-m7", "clock": "", "soc": FASTBOARD_SOC})
    write(fastboard / "fastboard.yaml", "identifier: fastboard\narch: arm\nram: 256\n")
    riscboard = base / "boards" / "testvendor" / "riscboard"
    write(riscboard / "riscboard.yaml", "identifier: riscboard\narch: riscv\nram: 256\nflash: 1024\n")
    return base


@pytest.fixture
def workspace(tmp_path, monkeypatch) -> Path:
    base = board_tree(tmp_path / "ws")
    monkeypatch.setenv("ZEPHYR_BASE", str(base))
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}:/usr/bin:/bin")   # a C preprocessor; no west
    return base


def test_a_board_s_core_memory_and_runners_come_from_its_zephyr_files(workspace):
    board = get_board("testboard/testsoc/cpuapp")
    assert board.name == "testboard/testsoc/cpuapp"
    assert (board.cpu.name, board.cpu.dsp, board.cpu.fpu) == ("cortex-m33", True, "fpv5-sp-d16")
    assert board.clock_hz == 128_000_000
    assert (board.flash_bytes, board.ram_bytes) == (1024 * 1024, 448 * 1024)
    assert [(r.name, r.base, r.size, r.system) for r in board.ram_regions] == [("RAM", 0x20000000, 448 * 1024, True)]
    assert board.console == "uart0"   # from the module's devicetree include
    assert board.runners == ("jlink", "openocd")   # the include commented out is not one
    assert board.qemu is None and board.usb_vid_pid is None


def test_the_soc_s_kconfig_decides_the_extensions_zephyr_builds_with(workspace):
    net = get_board("testboard/testsoc/cpunet")
    assert (net.cpu.name, net.cpu.dsp, net.cpu.fpu) == ("cortex-m33+nodsp+nofp", False, None)   # target.CPUS's
    assert net.cpu.kernel_features != get_board("testboard/testsoc/cpuapp").cpu.kernel_features
    assert (net.flash_bytes, net.ram_bytes) == (256 * 1024, 64 * 1024)


def test_a_board_of_one_soc_and_its_ram_regions(workspace):
    board = get_board("fastboard")
    assert get_board("fastboard/fastsoc") == board.__class__(**{**board.__dict__, "name": "fastboard/fastsoc"})
    assert (board.cpu.name, board.cpu.fpu) == ("cortex-m7", "fpv5-d16")
    assert board.clock_hz == 280_000_000   # the clock controller's, the CPU node giving none
    assert board.flash_bytes == 2 * 1024 * 1024   # no flash in its twister YAML: the chosen zephyr,flash
    # the DTCM first (tightly coupled), the chosen SRAM, SRAM1; not the disabled SRAM4 nor the QSPI window
    assert [(r.name, r.size // 1024, r.system, r.tcm) for r in board.ram_regions] == [
        ("DTCM", 128, False, True), ("RAM", 256, True, False), ("SRAM1", 384, False, False)]
    assert board.ram_bytes == (128 + 256 + 384) * 1024


@pytest.mark.parametrize("region", ["SRAM1 */ x", "../SRAM1", "SRAM1)) *(.text", "SRAM1\\n#include"])
def test_a_ram_region_whose_name_is_no_c_identifier_is_refused_in_one_line(workspace, region):
    """A zephyr,memory-region names the library's sections and pools, the linker snippets and the symbols CMake
    requires: one that is no C identifier is refused before it reaches them."""
    dts = workspace / "boards" / "testvendor" / "fastboard" / "fastboard.dts"
    dts.write_text(dts.read_text().replace('"SRAM1"', f'"{region}"'))
    with pytest.raises(MtkError, match=r"^board 'fastboard': /soc/memory@24040000: its RAM region '.*' is not a C "
                                       r"identifier$") as err:
        get_board("fastboard")
    assert err.value.exit_code == 2 and "\n" not in err.value.message


@pytest.mark.parametrize("name, message", [
    ("riscboard", r"board 'riscboard' is a Zephyr riscv board, not a Cortex-M"),
    ("testboard/testsoc", r"testboard has no target 'testsoc'.*\n  hint: its targets: testboard/testsoc/cpuapp, "
                          r"testboard/testsoc/cpunet"),
    ("testbaord/testsoc/cpuapp", r"unknown board 'testbaord/testsoc/cpuapp'; did you mean testboard"),
    ("testboard@2.0/testsoc/cpuapp", r"board revisions are not supported"),
])
def test_boards_mtk_cannot_build_for_are_refused_in_one_line(workspace, name, message):
    with pytest.raises(MtkError, match=message) as err:
        get_board(name)
    assert err.value.exit_code == 2 and "\n" not in err.value.message


def test_without_a_workspace_an_unknown_board_says_to_set_zephyr_base(monkeypatch, tmp_path, capsys):
    monkeypatch.delenv("ZEPHYR_BASE", raising=False)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(MtkError) as err:
        get_board("nrf5340dk/nrf5340/cpuapp")
    assert err.value.message == "unknown board 'nrf5340dk/nrf5340/cpuapp'" and "ZEPHYR_BASE" in err.value.hint and err.value.exit_code == 2
    assert get_board("nucleo_f746zg").name == "nucleo_f746zg"   # the curated boards need no Zephyr
    assert main(["boards", "--zephyr", "nrf53"]) == 3
    assert "ZEPHYR_BASE is not set" in capsys.readouterr().err


def test_a_curated_board_wins_over_the_workspace_s(workspace):
    assert get_board("mps2/an386").qemu is not None


def test_mtk_project_renders_an_application_for_a_derived_board(workspace, tmp_path):
    project = get_platform("zephyr").render(CompiledModel.load(FAKE), get_board("testboard/testsoc/cpuapp"),
                                            tmp_path / "app", ProjectOptions())
    assert read_project(project)["board"] == "testboard/testsoc/cpuapp"
    conf = (project / "boards" / "testboard_testsoc_cpuapp.conf").read_text()
    assert "CONFIG_FPU=y" in conf and "CONFIG_TIMING_FUNCTIONS=y" in conf
    assert "zephyr,console = &uart0;" in (project / "boards" / "testboard_testsoc_cpuapp.overlay").read_text()
    net = get_platform("zephyr").render(CompiledModel.load(FAKE), get_board("testboard/testsoc/cpunet"),
                                        tmp_path / "net", ProjectOptions())
    assert "CONFIG_FPU" not in (net / "boards" / "testboard_testsoc_cpunet.conf").read_text()


def mtk(*args: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mtk", *args], capture_output=True, text=True,
                          env={**toolkit_env(), **env})


def test_mtk_boards_zephyr_lists_the_workspace_s_cortex_m_boards(workspace):
    env = {"ZEPHYR_BASE": str(workspace), "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin"}
    listed = mtk("boards", "--zephyr", "board", env=env)
    assert listed.returncode == 0, listed.stderr
    rows = [line.split() for line in listed.stdout.splitlines()[2:]]
    assert rows == [["fastboard", "cortex-m7", "280", "MHz", "2048", "KB", "768", "KB", "flash:", "openocd"],
                    ["testboard/testsoc/cpuapp", "cortex-m33", "128", "MHz", "1024", "KB", "448", "KB", "flash:",
                     "jlink,", "openocd"],
                    ["testboard/testsoc/cpunet", "cortex-m33+nodsp+nofp", "128", "MHz", "256", "KB", "64", "KB",
                     "flash:", "jlink,", "openocd"]]
    as_json = json.loads(mtk("boards", "--zephyr", "cpuapp", "--json", env=env).stdout)
    assert [b["name"] for b in as_json] == ["testboard/testsoc/cpuapp"] and as_json[0]["runners"] == ["jlink", "openocd"]
    refused = mtk("boards", "--zephyr", "riscboard/riscsoc", env=env)
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1 and "not a Cortex-M" in refused.stderr
    none = mtk("boards", "--zephyr", "nothing_like_it", env=env)
    assert none.returncode == 2 and "no Cortex-M board" in none.stderr


def test_run_and_bench_need_the_clock_the_devicetree_may_not_give(workspace):
    board = get_board("testboard/testsoc/cpuapp")
    assert require_clock(board) is board
    with pytest.raises(MtkError, match="its devicetree gives no CPU clock"):
        require_clock(dataclasses.replace(board, clock_hz=0))


@pytest.fixture
def derived_build(workspace, tmp_path, fake_west, monkeypatch) -> Path:
    """An application rendered for testboard/testsoc/cpuapp and the build folder `west build` would leave,
    its runners.yaml as Zephyr writes it from the board's board.cmake; a fake west on PATH."""
    monkeypatch.setenv("PATH", f"{os.environ['PATH']}:/usr/bin:/bin")   # the fake west, then a preprocessor
    app = tmp_path / "app"
    assert main(["project", str(FAKE), "--board", "testboard/testsoc/cpuapp", "-o", str(app)]) == 0
    (app / "build" / "zephyr").mkdir(parents=True)
    (app / "build" / "CMakeCache.txt").write_text(f"APPLICATION_SOURCE_DIR:PATH={app.resolve()}\n")
    runners = {"runners": list(get_board("testboard/testsoc/cpuapp").runners), "flash-runner": "jlink"}
    (app / "build" / "zephyr" / "runners.yaml").write_text(yaml.safe_dump(runners))
    (app / "build" / "zephyr" / "zephyr.elf").write_bytes(b"\x7fELF")
    return app


def test_mtk_flash_flashes_a_derived_board_with_its_board_cmake_s_runners(derived_build, fake_west, usb_ports):
    usb_ports()   # no port to find: west flashes the probe attached, or the one the serial number names
    build = derived_build / "build"
    assert main(["flash", str(derived_build)]) == 0   # the one probe attached
    assert main(["flash", str(derived_build), "--serial-number", "000683123456"]) == 0   # jlink: --dev-id
    assert main(["flash", str(derived_build), "--runner", "openocd", "--serial-number", "E6614C31"]) == 0
    assert fake_west.read_text().splitlines() == [
        f"flash --skip-rebuild -d {build} -r jlink",
        f"flash --skip-rebuild -d {build} -r jlink --dev-id 000683123456",
        f"flash --skip-rebuild -d {build} -r openocd --cmd-pre-init adapter serial E6614C31"]


def test_run_finds_a_derived_board_s_port_by_its_probe_s_serial_number(derived_build, fake_west, usb_ports,
                                                                        board_tty):
    board = get_board("testboard/testsoc/cpuapp")
    usb_ports(("/dev/ttyACM0", "1366:1051", "000683000001"), (board_tty[0], "1366:1051", "000683123456"))
    elf = derived_build / "build" / "zephyr" / "zephyr.elf"
    with get_runner(board, serial_number="000683123456").start(elf):
        assert fake_west.read_text().split()[-2:] == ["--dev-id", "000683123456"]
    with pytest.raises(TargetError, match="does not know the USB ids of testboard/testsoc/cpuapp's probe"):
        get_runner(board).start(elf)
    with pytest.raises(TargetError, match="no serial port with serial number 999"):
        get_runner(board, serial_number="999").start(elf)


def test_zephyr_s_scripts_run_with_the_python_west_runs_on(workspace, tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    python = executable(bin_dir, "python3-zephyr", f'#!/bin/sh\necho "$2" >> {tmp_path / "used"}\nexec {sys.executable} "$@"')
    executable(bin_dir, "west", f"#!{python}")
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    assert get_board("fastboard").cpu.name == "cortex-m7"
    assert sorted((tmp_path / "used").read_text().split()) == sorted(
        ["--zephyr-base", "--arch-root", "--soc-root"])   # zephyr_module.py, list_boards.py, list_hardware.py


@pytest.fixture
def boards_file(tmp_path, monkeypatch):
    """boards.yaml with extra entries: add(name, entry)."""
    data = yaml.safe_load(boards.BOARDS_FILE.read_text())
    path = tmp_path / "boards.yaml"
    monkeypatch.setattr(boards, "BOARDS_FILE", path)

    def add(name: str, entry: dict) -> None:
        data["boards"][name] = entry
        path.write_text(yaml.safe_dump(data))
        for cached in (boards._entries, boards._registry, boards._names):
            cached.cache_clear()
    yield add
    for cached in (boards._entries, boards._registry, boards._names):
        cached.cache_clear()


def test_boards_yaml_overrides_what_zephyr_s_files_do_not_say(workspace, boards_file):
    boards_file("testboard/testsoc/cpunet", {"clock_hz": 64_000_000, "usb_vid_pid": "1366:1051"})
    net = get_board("testboard/testsoc/cpunet")
    assert (net.clock_hz, net.usb_vid_pid, net.ram_bytes) == (64_000_000, "1366:1051", 64 * 1024)
    assert "testboard/testsoc/cpunet" not in [b.name for b in boards.all_boards()]   # not a board by itself
    boards_file("fastboard", {"clock_hz": 1, "flash_bytes": 4096})
    with pytest.raises(MtkError, match="board 'fastboard' overrides flash_bytes, which mtk reads from Zephyr"):
        get_board("fastboard")


def test_an_external_flash_s_size_is_its_code_partition_s(workspace):
    dts = workspace / "boards" / "testvendor" / "fastboard" / "fastboard.dts"
    flash = """\
		flash0: flash@8000000 {
			compatible = "soc-nv-flash";
			reg = <0x08000000 DT_SIZE_M(2)>;
		};
"""
    ospi = """\
		ospi@5802a000 {
			reg = <0x5802a000 0x1000>;
			#address-cells = <1>;
			#size-cells = <0>;
			flash0: flash@0 {
				reg = <0>;
				partitions {
					compatible = "fixed-partitions";
					#address-cells = <1>;
					#size-cells = <1>;
					slot0: partition@10000 {
						reg = <0x10000 DT_SIZE_K(1536)>;
					};
				};
			};
		};
"""
    dts.write_text(dts.read_text().replace(flash, ospi) + "/ { chosen { zephyr,code-partition = &slot0; }; };\n")
    assert get_board("fastboard").flash_bytes == 1536 * 1024


def test_a_core_without_an_extension_of_its_kind_is_listed_as_gcc_spells_it(workspace, capsys):
    kconfig = workspace / "soc" / "testvendor" / "Kconfig"
    kconfig.write_text(kconfig.read_text().replace("config SOC_TESTSOC_CPUNET\n", "config SOC_TESTSOC_CPUNET\n\tselect CPU_HAS_FPU\n"))
    net = get_board("testboard/testsoc/cpunet")
    assert (net.cpu.name, net.cpu.dsp, net.cpu.fpu) == ("cortex-m33", False, "fpv5-sp-d16")
    assert main(["boards", "--zephyr", "cpunet"]) == 0
    assert capsys.readouterr().out.splitlines()[2].split()[:2] == ["testboard/testsoc/cpunet", "cortex-m33+nodsp"]


def test_a_devicetree_without_cpus_is_no_cortex_m(workspace):
    dts = workspace / "boards" / "testvendor" / "fastboard" / "fastboard.dts"
    text = dts.read_text()
    dts.write_text(text[:text.index("\tcpus {")] + text[text.index("\tchosen {"):])
    with pytest.raises(MtkError, match="its devicetree has no CPU under /cpus, so no Cortex-M") as err:
        get_board("fastboard")
    assert err.value.exit_code == 2


def test_a_twister_yaml_that_is_not_yaml_is_named(workspace):
    (workspace / "boards" / "testvendor" / "fastboard" / "fastboard.yaml").write_text("identifier: [fastboard\n")
    with pytest.raises(MtkError, match=r"board 'fastboard': .*fastboard.yaml is not YAML"):
        get_board("fastboard")


def test_the_listing_shows_a_board_as_board_takes_it(workspace, boards_file, capsys):
    boards_file("fastboard", {"clock_hz": 300_000_000, "usb_vid_pid": "0483:3754"})
    assert main(["boards", "--zephyr", "fastboard"]) == 0
    assert capsys.readouterr().out.splitlines()[2].split() == [
        "fastboard", "cortex-m7", "300", "MHz", "2048", "KB", "768", "KB", "USB", "0483:3754,", "flash:", "openocd"]
