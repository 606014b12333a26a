"""The boards of the user's Zephyr workspace and their build targets, as Zephyr's own scripts from the
user's tree give them (hardware model v2): `scripts/zephyr_module.py` (the modules' board, SoC and
devicetree roots), `scripts/list_boards.py` (each board's folders, SoCs and qualifiers) and
`scripts/list_hardware.py` (each SoC's folders), run with the Python the workspace's west runs on
and the arguments Zephyr's CMake gives them; and Zephyr's Python libraries imported from the tree.
"""

from __future__ import annotations

import difflib
import importlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from types import ModuleType
from typing import Iterator

from .boards import did_you_mean
from .errors import MtkError, ToolMissing
from .zephyr_env import find_base, script_interpreter

SCRIPT_TIMEOUT_S = 120.0
IDENTIFIER = re.compile(r"[A-Za-z0-9_.+-]+(/[A-Za-z0-9_.+-]+)*")
LIST_FORMAT = "{NAME}\t{HWM}\t{DIR}\t{SOCS}\t{QUALIFIERS}"




@dataclass(frozen=True)
class ListedBoard:
    """A board as list_boards.py describes it (hardware model v2)."""

    name: str
    dirs: tuple[Path, ...]
    socs: tuple[str, ...]
    qualifiers: tuple[str, ...]   # "nrf5340/cpuapp", ...

    @property
    def targets(self) -> list[str]:
        """Its build targets as `west build -b` takes them: the board alone for its one SoC."""
        single = self.socs[0] if len(self.socs) == 1 else None
        return [self.name if q == single else f"{self.name}/{q}" for q in self.qualifiers] or [self.name]


@dataclass(frozen=True, eq=False)   # one a tree (_workspace), cached by identity
class Workspace:
    base: Path
    python: list[str]              # runs Zephyr's scripts: the interpreter of the workspace's west
    roots: dict[str, tuple[Path, ...]]   # "arch", "board", "soc", "dts" -> roots, ZEPHYR_BASE's first

    def run_script(self, script: str, *args: str) -> str:
        path = self.base / "scripts" / script
        if not path.is_file():
            raise MtkError(f"{self.base} has no scripts/{script}: mtk reads any board through it (Zephyr 3.7 or newer)")
        cwd = workspace_top(self.base)
        try:
            result = subprocess.run([*self.python, str(path), *args], capture_output=True, text=True, cwd=cwd,
                                    env={**os.environ, "ZEPHYR_BASE": str(self.base)}, timeout=SCRIPT_TIMEOUT_S)
        except (OSError, subprocess.TimeoutExpired) as err:
            raise ToolMissing(f"cannot run Zephyr's scripts/{script} with {self.python[0]}: {err}") from None
        if result.returncode != 0:
            last = (result.stderr.strip().splitlines() or ["(no message)"])[-1]
            raise ToolMissing(f"Zephyr's scripts/{script} failed with {self.python[0]}: {last}",
                              hint=f"install Zephyr's Python requirements for that Python "
                                   f"(pip install -r {self.base}/scripts/requirements-base.txt)")
        return result.stdout

    def root_args(self, *kinds: str) -> list[str]:
        return [arg for kind in kinds for root in self.roots[kind] for arg in (f"--{kind}-root", str(root))]


def workspace_top(base: Path) -> Path:
    """The west workspace holding `base` (the folder with .west/), else `base`'s parent."""
    return next((p for p in base.parents if (p / ".west").is_dir()), base.parent)


@lru_cache(maxsize=4)
def _workspace(base: Path) -> Workspace:
    python = script_interpreter(shutil.which("west")) or [sys.executable]
    seed = Workspace(base, python, {"board": (base,), "soc": (base,), "dts": (base,), "arch": (base,)})
    with tempfile.TemporaryDirectory(prefix="mtk-zephyr-") as tmp:
        settings = Path(tmp) / "settings.txt"
        seed.run_script("zephyr_module.py", "--zephyr-base", str(base), "--settings-out", str(settings))
        module_roots = re.findall(r'^"(\w+)_ROOT":"(.*)"$', settings.read_text(), flags=re.M)
    roots = {kind: (base, *dict.fromkeys(Path(p) for k, p in module_roots if k.lower() == kind))
             for kind in seed.roots}
    return Workspace(base, python, roots)


def workspace() -> Workspace:
    """The Zephyr workspace mtk finds (zephyr_env.find_base), its module roots read once a process."""
    return _workspace(find_base())


def cmake_fields(line: str) -> dict[str, list[str]]:
    """A line list_boards.py or list_hardware.py prints for --cmakeformat "{NAME}\t{DIR}...":
    tab-separated "KEY;value;value" lists -> {KEY: [values]}."""
    return {field.split(";")[0]: field.split(";")[1:] for field in line.split("\t") if field}


@lru_cache(maxsize=4)
def _listed_boards(ws: Workspace) -> dict[str, ListedBoard]:
    text = ws.run_script("list_boards.py", *ws.root_args("arch", "board", "soc"), "--cmakeformat", LIST_FORMAT)
    boards = {}
    for fields in map(cmake_fields, text.splitlines()):
        if fields.get("HWM") == ["v2"] and fields.get("NAME"):
            name = fields["NAME"][0]
            boards[name] = ListedBoard(name, tuple(Path(d) for d in fields["DIR"]), tuple(fields.get("SOCS", [])),
                                       tuple(fields.get("QUALIFIERS", [])))
    return boards


def listed_boards() -> dict[str, ListedBoard]:
    """Every (hardware model v2) board of the workspace, by name."""
    return _listed_boards(workspace())


@lru_cache(maxsize=4)
def soc_dirs(ws: Workspace) -> dict[str, tuple[Path, ...]]:
    """Every SoC of the workspace: its folders (soc.yml's, whose Kconfig files describe it)."""
    text = ws.run_script("list_hardware.py", *ws.root_args("soc"), "--socs", "--cmakeformat", "{TYPE}\t{NAME}\t{DIR}")
    dirs: dict[str, tuple[Path, ...]] = {}
    for fields in map(cmake_fields, text.splitlines()):
        if fields.get("TYPE") == ["soc"]:
            dirs[fields["NAME"][0]] = tuple(Path(d) for d in fields["DIR"])
    return dirs


@dataclass(frozen=True)
class Target:
    """One build target of a board: "nrf5340dk/nrf5340/cpuapp", or "nucleo_u575zi_q" for its one SoC."""

    identifier: str     # as the user wrote it: what `west build -b` gets
    board: ListedBoard
    qualifiers: str     # in full, the SoC first: "nrf5340/cpuapp", "stm32u575xx"

    @property
    def soc(self) -> str:
        return self.qualifiers.split("/")[0]

    @property
    def file_stems(self) -> tuple[str, ...]:
        """How Zephyr names the target's devicetree and twister file: board_soc_cluster, then without
        the SoC for a board of one SoC."""
        parts = self.qualifiers.split("/")
        stems = ["_".join([self.board.name, *parts])]
        if len(self.board.socs) == 1:
            stems.append("_".join([self.board.name, *parts[1:]]))
        return tuple(stems)

    @property
    def twister_identifiers(self) -> set[str]:
        """How a twister YAML names the target: in full, or without the SoC for a board of one SoC."""
        parts = self.qualifiers.split("/")
        return {"/".join([self.board.name, *parts]), "/".join([self.board.name, *parts[len(self.board.socs) == 1:]])}

    @property
    def kconfig_symbols(self) -> set[str]:
        """The board's Kconfig symbols Zephyr sets for this target (BOARD_<board>, BOARD_<target>)."""
        return {"BOARD_" + re.sub(r"\W", "_", name).upper()
                for name in (self.board.name, f"{self.board.name}_{self.qualifiers}")}


def find_target(identifier: str) -> Target:
    """The workspace's target called `identifier`, MtkError naming the close ones if none."""
    if "@" in identifier:
        raise MtkError(f"board '{identifier}': board revisions are not supported; leave '@...' out to build "
                       "the board's default revision")
    if not IDENTIFIER.fullmatch(identifier):
        raise MtkError(f"board '{identifier}' is not a Zephyr board identifier (board[/soc[/cpucluster[/variant]]])")
    name, _, qualifiers = identifier.partition("/")
    boards = listed_boards()
    board = boards.get(name)
    if board is None:
        raise MtkError(f"unknown board '{identifier}'" + did_you_mean(difflib.get_close_matches(name, boards, n=3)),
                       hint=f"`mtk boards --zephyr FILTER` lists the Cortex-M boards of Zephyr {workspace().base}")
    if not qualifiers and len(board.socs) == 1:
        qualifiers = board.socs[0]
    if qualifiers not in board.qualifiers:
        raise MtkError(f"board '{identifier}': {name} has no target '{qualifiers or '(none)'}'",
                       hint=f"its targets: {', '.join(board.targets)}")
    return Target(identifier, board, qualifiers)


@contextmanager
def tree_modules(base: Path, *modules: tuple[str, str]) -> Iterator[list[ModuleType]]:
    """Import Zephyr's Python modules (module, folder under scripts/) from the tree at `base`, not from
    wherever else Python would find a module of that name."""
    paths = [str(base / "scripts" / folder) for _, folder in modules]
    sys.path[:0] = paths
    try:
        loaded = []
        for name, folder in modules:
            top = name.partition(".")[0]
            module = sys.modules.get(top)
            if module is not None and not str(getattr(module, "__file__", "")).startswith(str(base / "scripts" / folder)):
                for key in [k for k in sys.modules if k == top or k.startswith(top + ".")]:
                    del sys.modules[key]
            try:
                loaded.append(importlib.import_module(name))
            except ImportError as err:
                raise MtkError(f"cannot import Zephyr's {name} from {base}/scripts/{folder}: {err}") from None
        yield loaded
    finally:
        del sys.path[:len(paths)]

