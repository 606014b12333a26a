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
from pathlib import Path

import jinja2

from .. import ui
from ..boards import Board, get_board
from ..budget import check_fits, check_runs_on
from ..compiled import CompiledModel
from ..errors import ModelError, MtkError
from ..fsutil import atomic_output_dir
from ..paths import ZEPHYR_APP
from ..zephyr_env import Zephyr, find_zephyr
from .base import Platform, ProjectOptions, run_build
from .baremetal import icount_tick
from .firmware import c_safe_label, write_firmware_sources

PROJECT_FILE = "mtk-project.json"
BUILD_DIR = "build"
ELF = Path(BUILD_DIR) / "zephyr" / "zephyr.elf"
SOURCE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+-]*\.c")
TEMPLATES = {   # template -> rendered file; "{board}" is the board's file name
    "CMakeLists.txt.j2": "CMakeLists.txt",
    "prj.conf.j2": "prj.conf",
    "board.conf.j2": "boards/{board}.conf",
    "board.overlay.j2": "boards/{board}.overlay",
}
COPIED = ("Kconfig", "src/main.c", "src/mtk_port_zephyr.c")


def board_file_name(board: Board) -> str:
    """How Zephyr names a board's files in an application's boards/: "mps2/an386" -> "mps2_an386"."""
    return board.name.replace("/", "_")


def model_sources(model: CompiledModel) -> list[str]:
    names = sorted(p.name for p in (model.path / "src").glob("*.c"))
    bad = [n for n in names if not SOURCE_NAME.fullmatch(n)]
    if bad or not names:
        raise ModelError(f"{model.path}/src: expected C sources with plain names, found {bad or 'none'}")
    return names


def read_project(project_dir: Path) -> dict:
    """The record `render` wrote: platform, board, model."""
    path = Path(project_dir) / PROJECT_FILE
    try:
        record = json.loads(path.read_text())
        get_board(record["board"])
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise MtkError(f"{project_dir} is not a project rendered by `mtk project` (no valid {PROJECT_FILE}: {err})",
                       hint="render one with `mtk project model.tflite --board BOARD -o DIR`") from None
    return record


def west_build_command(zephyr: Zephyr, board: Board, project_dir: Path) -> list[str]:
    """`west build` for `project_dir`, with the Zephyr tree and toolchain spelled out so that the
    command can be rerun by hand as it is."""
    variables = {"ZEPHYR_BASE": str(zephyr.base), **zephyr.toolchain}
    return ["env", *(f"{k}={v}" for k, v in variables.items()),
            zephyr.west, "build", "--pristine", "auto", "-b", board.name,
            "-d", str(Path(project_dir) / BUILD_DIR), str(project_dir)]


class ZephyrPlatform(Platform):
    name = "zephyr"

    def render(self, model: CompiledModel, board: Board, out_dir: Path, options: ProjectOptions) -> Path:
        check_runs_on(model, board)
        check_fits(model, board, options.stack_bytes)   # a folder from `mtk compile` was compiled without this board
        board_file = board_file_name(board)
        context = {
            "board": board, "model_title": c_safe_label(model.name), "model_sources": model_sources(model),
            "opt_level": options.opt_level, "stack_bytes": options.stack_bytes, "profile": options.profile,
            "tick": icount_tick(board.qemu.timer_hz) if board.qemu else None,
            "semihosting": board.is_qemu and options.semihosting,
        }
        env = jinja2.Environment(loader=jinja2.FileSystemLoader(ZEPHYR_APP), undefined=jinja2.StrictUndefined,
                                 keep_trailing_newline=True)
        with atomic_output_dir(out_dir, force=options.force) as tmp:
            for template, target in TEMPLATES.items():
                path = tmp / target.format(board=board_file)
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(env.get_template(template).render(context))
            (tmp / "src").mkdir()
            for name in COPIED:
                shutil.copy2(ZEPHYR_APP / name, tmp / name)
            write_firmware_sources(model, tmp, "src/model_glue.c")
            record = {"platform": self.name, "board": board.name, "model": model.name}
            (tmp / PROJECT_FILE).write_text(json.dumps(record, indent=1) + "\n")
        return Path(out_dir).resolve()

    def build(self, project_dir: Path) -> Path:
        project_dir = Path(project_dir).resolve()
        board = get_board(read_project(project_dir)["board"])
        zephyr = find_zephyr(project_dir)
        variant = zephyr.toolchain.get("ZEPHYR_TOOLCHAIN_VARIANT") or os.environ["ZEPHYR_TOOLCHAIN_VARIANT"]
        ui.info(f"Zephyr {zephyr.version_text} at {zephyr.base}, toolchain {variant}")
        run_build(west_build_command(zephyr, board, project_dir), cwd=project_dir)
        return project_dir / ELF
