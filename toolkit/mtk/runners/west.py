"""`west flash`: the Zephyr build's flash runner (from its runners.yaml) or the one asked for."""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import yaml

from ..boards import Board
from ..errors import MtkError, TargetError, ToolMissing
from ..zephyr_env import WEST_INSTALL
from .flash import FlashRunner

FLASH_TIMEOUT_S = 300.0
MISSING_TOOL_MARKERS = ("required program", "not found", "no such file or directory", "is not installed")


@dataclass(frozen=True)
class ZephyrFlashTool:
    """A Zephyr flash runner as mtk drives it: the program it calls and how it picks one probe."""

    name: str
    program: str
    select_probe: tuple[str, ...]   # west flash arguments; "{serial}" is the probe's serial number

    def probe_arguments(self, serial_number: str) -> list[str]:
        return [arg.format(serial=serial_number) for arg in self.select_probe]


FLASH_TOOLS = {tool.name: tool for tool in (
    ZephyrFlashTool("stm32cubeprogrammer", "STM32_Programmer_CLI", ("--conn-modifiers", "sn={serial}")),
    ZephyrFlashTool("openocd", "openocd", ("--cmd-pre-init", "adapter serial {serial}")),
    ZephyrFlashTool("jlink", "JLinkExe", ("--dev-id", "{serial}")),
    ZephyrFlashTool("pyocd", "pyocd", ("--dev-id", "{serial}")),
    ZephyrFlashTool("nrfjprog", "nrfjprog", ("--dev-id", "{serial}")),
    ZephyrFlashTool("linkserver", "LinkServer", ("--dev-id", "{serial}")),
    ZephyrFlashTool("probe-rs", "probe-rs", ("--dev-id", "{serial}")),
)}


def build_dir_of(elf: Path) -> Path:
    """The Zephyr build folder of `elf` (<build>/zephyr/zephyr.elf)."""
    build_dir = Path(elf).resolve().parent.parent
    if not (build_dir / "CMakeCache.txt").is_file():
        raise TargetError(f"{elf} is not in a Zephyr build folder (no CMakeCache.txt in {build_dir})",
                          hint="build the application with `mtk build` or `west build` first")
    return build_dir


def build_runners(build_dir: Path) -> tuple[str | None, list[str]]:
    """The build's default flash runner and every runner it is configured for (runners.yaml)."""
    path = build_dir / "zephyr" / "runners.yaml"
    if not path.is_file():
        return None, []
    data = yaml.safe_load(path.read_text()) or {}
    return data.get("flash-runner"), list(data.get("runners") or [])


class WestRunner(FlashRunner):
    name = "west"

    def __init__(self, board: Board, zephyr_runner: str | None = None, serial_number: str | None = None,
                 port: str | None = None):
        super().__init__(board, serial_number, port)
        self.zephyr_runner = zephyr_runner

    def flash_command(self, west: str, elf: Path) -> list[str]:
        build_dir = build_dir_of(elf)
        default, configured = build_runners(build_dir)
        runner = self.zephyr_runner or default
        if runner is None:
            raise TargetError(f"the build in {build_dir} has no flash runner for {self.board.name}",
                              hint="pass one with --runner")
        if configured and runner not in configured:
            raise MtkError(f"runner '{runner}' is not configured for {self.board.name}",
                           hint=f"its runners: {', '.join(configured)}")
        command = [west, "flash", "--skip-rebuild", "-d", str(build_dir), "-r", runner]
        if self.serial_number is not None:
            tool = FLASH_TOOLS.get(runner)
            if tool is None:
                raise MtkError(f"mtk does not know how runner '{runner}' picks a probe by serial number",
                               hint=f"runners it knows: {', '.join(FLASH_TOOLS)}; or connect one board only")
            command += tool.probe_arguments(self.serial_number)
        return command

    def flash(self, elf: Path) -> None:
        west = shutil.which("west")
        if west is None:
            raise ToolMissing("'west' is not on PATH: it flashes Zephyr builds", hint=WEST_INSTALL)
        command = self.flash_command(west, elf)
        try:
            result = subprocess.run(command, capture_output=True, text=True, timeout=FLASH_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            raise TargetError(f"flashing {self.board.name} took more than {FLASH_TIMEOUT_S:g} s") from None
        if result.returncode == 0:
            return
        output = (result.stdout + result.stderr).strip().splitlines()
        errors = [line for line in output if "error" in line.lower()] or output
        message = f"west flash failed for {self.board.name}:\n" + "\n".join(errors[-15:])
        hint = f"rerun by hand: {' '.join(command)}"
        if any(marker in line.lower() for line in errors for marker in MISSING_TOOL_MARKERS):
            raise ToolMissing(message, hint=hint)
        raise TargetError(message, hint=hint)
