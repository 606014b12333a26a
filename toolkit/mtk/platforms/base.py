"""The Platform interface: render a firmware project for (compiled model, board), build it."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path

from .. import interrupts, ui
from ..argtypes import INT32_MAX, MIN_STACK_BYTES
from ..boards import Board
from ..budget import DEFAULT_STACK_BYTES
from ..compiled import CompiledModel
from ..errors import MtkError, TargetError, ToolMissing
from ..mlperf import Benchmark


@dataclass(frozen=True)
class ProjectOptions:
    profile: bool = False       # per-layer cycle counts (MTK_LAYER_HOOK -> mtk_layer_hook)
    semihosting: bool = True    # exit QEMU with the status via semihosting (never on silicon)
    opt_level: str = "O2"
    stack_bytes: int = DEFAULT_STACK_BYTES
    force: bool = False         # replace a non-empty project folder
    benchmark: Benchmark | None = None   # MLPerf Tiny: a conforming DUT for this benchmark
    energy: bool = False        # MLPerf Tiny energy mode: timestamps on a GPIO pin (physical boards)
    icount_shift: int = 0       # QEMU -icount shift the firmware will run under (mtk serve paces QEMU)

    def __post_init__(self) -> None:
        if not MIN_STACK_BYTES <= self.stack_bytes <= INT32_MAX:
            raise MtkError(f"stack of {self.stack_bytes} bytes: must be {MIN_STACK_BYTES:,} to {INT32_MAX:,}")


class Platform(ABC):
    name: str

    @abstractmethod
    def render(self, model: CompiledModel, board: Board, out_dir: Path, options: ProjectOptions) -> Path:
        """Write a self-contained firmware project for the compiled model to `out_dir`; return it."""

    @abstractmethod
    def build(self, project_dir: Path) -> Path:
        """Build a rendered project; return the firmware ELF."""


def require_tool(program: str, debian_package: str) -> str:
    path = shutil.which(program)
    if path is None:
        raise ToolMissing(f"'{program}' is not installed", hint=f"apt-get install {debian_package}")
    return path


BUILD_ERROR_WORDS = ("error", "overflowed", "will not fit")   # ld: "region `FLASH' overflowed by N bytes"
NINJA_PROGRESS = re.compile(r"^\[(\d+)/(\d+)\] ")


def run_build(command: list[str], cwd: Path) -> list[str]:
    """Run a build command, reporting ninja's [n/m] as progress; return its output lines, or on
    failure raise TargetError with the compiler's error lines. The build runs in a process group of
    its own with a temporary folder of its own (TMPDIR): when mtk is interrupted or terminated, the
    whole build gets SIGTERM (compilers remove their temporary files) and the folder goes."""
    lines = []
    with interrupts.child_group(command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                errors="replace") as process:
        for line in process.stdout:
            lines.append(line.rstrip("\n"))
            if match := NINJA_PROGRESS.match(line):
                ui.progress(int(match.group(1)), int(match.group(2)))
    if process.returncode != 0:
        errors = [line for line in lines if any(word in line.lower() for word in BUILD_ERROR_WORDS)] or lines
        raise TargetError(f"build of {cwd} failed:\n" + "\n".join(errors[-25:]),
                          hint=f"rerun by hand: cd {shlex.quote(str(cwd))} && {shlex.join(command)}")
    return lines
