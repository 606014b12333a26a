"""Zephyr applications: rendered from zephyr_app/ for any board of the registry, built with west.

The rendered folder is an ordinary Zephyr application (CMakeLists.txt, Kconfig, prj.conf,
boards/<board>.conf and .overlay, src/) holding the firmware core, the Zephyr port layer and
the compiled model; `mtk-project.json` records the board it was rendered for.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import jinja2

from .. import ui
from ..boards import Board, all_boards, get_board
from ..codegen.regions import constants_section
from ..budget import DEFAULT_STACK_BYTES, check_fits_once, check_runs_on, code_ram_for
from ..compiled import CompiledModel
from ..errors import ModelError, MtkError
from ..fsutil import atomic_output_dir
from ..names import safe_label
from ..paths import ZEPHYR_APP
from ..zephyr_env import Zephyr, find_zephyr
from .base import Platform, ProjectOptions, run_build
from .baremetal import icount_tick
from .firmware import write_firmware_sources
from .record import PROJECT_FILE, read_project, refresh_project, written_files

KCONFIG_DROPPED = re.compile(   # Zephyr's kconfig.py, its lines wrapped anywhere
    r"warning: (\w+) \(defined at [^)]*\)\s+was\s+assigned\s+the\s+value\s+'([^']*)'\s+but\s+got\s+the\s+value\s+'([^']*)'")
BUILD_DIR = "build"
ELF_IN_BUILD = Path("zephyr") / "zephyr.elf"
ELF = BUILD_DIR / ELF_IN_BUILD
SOURCE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+-]*\.c")
TEMPLATES = {   # template -> rendered file; "{board}" is the board's file name
    "CMakeLists.txt.j2": "CMakeLists.txt",
    "Kconfig.j2": "Kconfig",
    "prj.conf.j2": "prj.conf",
    "board.conf.j2": "boards/{board}.conf",
    "board.overlay.j2": "boards/{board}.overlay",
}
COPIED = ("src/main.c", "src/mtk_port_zephyr.c")
CODE_RAM_REGION = "CODERAM"   # the overlay's memory region for a code RAM node (gen_relocate_app.py takes "_" for an alignment)


@dataclass(frozen=True)
class CopiedRegion:
    """A RAM region besides the system one whose initialised data Zephyr's start-up code copies from flash:
    the zephyr_linker_sources location whose snippet lands in that data's output section, and a symbol the
    section defines (the link requires it: a board without the section fails there, not at run time)."""

    location: str
    symbol: str


# The chosen zephyr,dtcm node's .dtcm_data, which kernel/xip.c's z_data_copy copies (Zephyr 4.2, Cortex-M).
ZEPHYR_COPIED_REGIONS = {"DTCM": CopiedRegion("DTCM_SECTION", "__dtcm_data_start")}


def check_constants_region(model: CompiledModel, board: Board) -> None:
    """Zephyr copies initialised data into its system RAM and its DTCM only (the other regions' sections are
    NOLOAD): refuse constants compiled into another region (--weights-in-ram where a region of another kind
    holds them, or some of them)."""
    copied = [board.system_region.name, *(r for r in ZEPHYR_COPIED_REGIONS if r != board.system_region.name)]
    if any(name not in copied for name in model.memory.constants_regions):
        regions = model.memory.constants_regions
        also = f", and a {' or '.join(copied[1:])} region" if copied[1:] else ""
        raise ModelError(f"{model.name}: its constants were compiled into RAM region{'s' * (len(regions) > 1)} "
                         f"{', '.join(regions)}; a Zephyr application copies them only into "
                         f"{board.system_region.name}, its system RAM{also}",
                         hint="run it bare metal, or leave out --weights-in-ram")


def copied_constants(model: CompiledModel, board: Board) -> list[dict[str, str]]:
    """The model's constants in a region Zephyr copies besides its system RAM: each region's linker snippet
    (file, location, input section) and the symbol its link requires."""
    return [{"file": f"mtk_constants_{name.lower()}.ld", "location": ZEPHYR_COPIED_REGIONS[name].location,
             "symbol": ZEPHYR_COPIED_REGIONS[name].symbol, "section": constants_section(name), "region": name}
            for name in model.memory.constants_regions if name != board.system_region.name]


def board_file_name(board: Board) -> str:
    """How Zephyr names a board's files in an application's boards/: "mps2/an386" -> "mps2_an386"."""
    return board.name.replace("/", "_")


def model_sources(model: CompiledModel) -> list[str]:
    names = sorted(p.name for p in (model.path / "src").glob("*.c"))
    bad = [n for n in names if not SOURCE_NAME.fullmatch(n)]
    if bad or not names:
        raise ModelError(f"{model.path}/src: expected C sources with plain names, found {bad or 'none'}")
    return names


def built_application(build_dir: Path) -> Path | None:
    """The application a Zephyr build folder was configured for, read from its CMakeCache.txt as
    `west build` reads it, if it is one."""
    try:
        cache = (Path(build_dir) / "CMakeCache.txt").read_text(errors="replace")
    except OSError:
        return None
    entries = dict(re.findall(r"^([A-Za-z_]+):\w+=(.*)$", cache, flags=re.M))
    source = next((entries[k] for k in ("APP_DIR", "APPLICATION_SOURCE_DIR", "CMAKE_HOME_DIRECTORY") if entries.get(k)),
                  None)
    return Path(source.strip()).resolve() if source else None


def find_build(project: Path | None, build_dir: Path | None) -> tuple[Path, Path]:
    """(application, its build folder): `build_dir` if given (west build's -d), else the
    application's build/ (`mtk build`'s), else ./build (`west build`'s default, wherever it ran).
    Without `project`: the application ./build was built from, else the current folder."""
    here = Path("build")
    if build_dir is not None:
        app = built_application(build_dir)
        if app is None:
            raise MtkError(f"{build_dir} is not a Zephyr build folder (no CMakeCache.txt naming the application)")
        if project is not None and app != Path(project).resolve():
            raise MtkError(f"{build_dir} is a build of {app}, not of {Path(project).resolve()}")
        return app, Path(build_dir)
    if project is None:
        project = built_application(here) if not Path(PROJECT_FILE).is_file() else None
        project = project or Path(".")
    project = Path(project)
    for candidate in (project / BUILD_DIR, here):
        if built_application(candidate) == project.resolve():
            return project, candidate
    return project, project / BUILD_DIR   # not built: the caller says how to build it


def west_build_command(zephyr: Zephyr, board: Board, project_dir: Path) -> list[str]:
    """`west build` for `project_dir`, with the Zephyr tree and toolchain spelled out so that the
    command can be rerun by hand as it is."""
    variables = {"ZEPHYR_BASE": str(zephyr.base), **zephyr.toolchain}
    return ["env", *(f"{k}={v}" for k, v in variables.items()),
            zephyr.west, "build", "--pristine", "auto", "-b", board.name,
            "-d", str(Path(project_dir) / BUILD_DIR), str(project_dir)]


def mlperf_context(board: Board, options: ProjectOptions) -> dict:
    """MLPerf Tiny settings of the rendered app: the console's baud rate as the runner's devices files
    expect it on silicon (QEMU ignores it) and, in energy mode, the timestamp pin."""
    if options.energy and (options.benchmark is None or not board.caps.energy_mode or board.timestamp_gpio is None):
        why = "no timestamp_gpio in boards.yaml" if board.caps.energy_mode else f"runs in {board.caps.where}"
        raise MtkError(f"MLPerf Tiny energy mode needs --mlperf-tiny and a physical board with a timestamp pin "
                       f"({board.name}: {why})")
    mode = "energy" if options.energy else "performance"
    baud = options.benchmark.baud[mode] if options.benchmark and board.caps.sets_console_baud else None
    return {"energy": options.energy, "baud": baud, "timestamp_gpio": board.timestamp_gpio}


class ZephyrPlatform(Platform):
    name = "zephyr"

    def render(self, model: CompiledModel, board: Board, out_dir: Path, options: ProjectOptions) -> Path:
        if not board.in_zephyr:
            zephyr_qemu = ", ".join(b.name for b in all_boards() if b.qemu is not None and b.in_zephyr)
            raise MtkError(f"{board.name} is not a Zephyr board: mtk runs it bare metal in QEMU",
                           hint=f"Zephyr's QEMU boards mtk knows: {zephyr_qemu}")
        check_runs_on(model, board)
        check_constants_region(model, board)
        stack_bytes = options.stack_bytes or DEFAULT_STACK_BYTES   # Zephyr's own stack use is not measured
        check_fits_once(model, board, stack_bytes)   # a folder from `mtk compile` was compiled without this board
        board_file = board_file_name(board)
        context = {
            **mlperf_context(board, options),
            "board": board, "model_title": safe_label(model.name), "model_sources": model_sources(model),
            "opt_level": options.opt_level, "stack_bytes": stack_bytes, "profile": options.profile,
            "tick": icount_tick(board.qemu.zephyr_cycle_hz, options.icount_shift) if board.qemu else None,
            "semihosting": board.caps.exits_by_semihosting and options.semihosting, "icount_shift": options.icount_shift,
            "copied_constants": copied_constants(model, board),
            "code_ram": code_ram_for(model, board) if board.code_ram and board.code_ram.zephyr_node else None,
            "code_ram_region": CODE_RAM_REGION,
            "arena_regions": [r for r in board.ram_regions
                              if not r.system and r.name in {u.name for u in model.memory.regions}],
        }
        env = jinja2.Environment(loader=jinja2.FileSystemLoader(ZEPHYR_APP), undefined=jinja2.StrictUndefined,
                                 keep_trailing_newline=True)

        def write(folder: Path) -> None:
            for template, target in TEMPLATES.items():
                path = folder / target.format(board=board_file)
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(env.get_template(template).render(context))
            for snippet in context["copied_constants"]:
                (folder / snippet["file"]).write_text(env.get_template("constants.ld.j2").render(snippet))
            (folder / "src").mkdir(exist_ok=True)
            for name in COPIED:
                shutil.copy2(ZEPHYR_APP / name, folder / name)
            write_firmware_sources(model, folder, "src/model_glue.c", options.benchmark)
            record = {"platform": self.name, "board": board.name, "model": model.name,
                      **written_files(folder)}   # as mtk wrote them
            if options.benchmark:
                record |= {"mlperf_tiny": options.benchmark.id, "energy": options.energy}
            (folder / PROJECT_FILE).write_text(json.dumps(record, indent=1) + "\n")

        out_dir = Path(out_dir)
        if (out_dir / PROJECT_FILE).is_file():
            refresh_project(out_dir, write, options.force)
        else:
            with atomic_output_dir(out_dir, force=options.force) as tmp:
                write(tmp)
        return out_dir.resolve()

    def build(self, project_dir: Path) -> Path:
        project_dir = Path(project_dir).resolve()
        board = get_board(read_project(project_dir)["board"])
        zephyr = find_zephyr(project_dir)
        variant = zephyr.toolchain.get("ZEPHYR_TOOLCHAIN_VARIANT") or os.environ["ZEPHYR_TOOLCHAIN_VARIANT"]
        ui.info(f"Zephyr {zephyr.version_text} at {zephyr.base}, toolchain {variant}")
        output = run_build(west_build_command(zephyr, board, project_dir), cwd=project_dir)
        for symbol, wanted, got in KCONFIG_DROPPED.findall("\n".join(output)):   # e.g. FPU on a SoC without one
            ui.info(f"Zephyr set CONFIG_{symbol}={got}, not {wanted} as asked: its dependencies are not met on "
                    f"{board.name} (west build's output says which)")
        return project_dir / ELF
