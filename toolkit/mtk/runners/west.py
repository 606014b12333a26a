"""`west flash`: the Zephyr build's flash runner (from its runners.yaml, which Zephyr writes from the
board's board.cmake) or the one asked for; with a probe serial number, the runner's own way to pick
that probe: west's --dev-id where the runner takes it, else the runner's option for it."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
from pathlib import Path

import yaml

from ..boards import Board
from ..errors import MtkError, TargetError, ToolMissing
from ..zephyr_env import WEST_INSTALL
from .flash import FlashRunner

FLASH_TIMEOUT_S = 300.0
HELP_TIMEOUT_S = 60.0
MISSING_TOOL_MARKERS = ("required program", "not found", "no such file or directory", "is not installed",
                        "dependencies were missing")   # west: a runner's Python package (jlink: pylink-square)


# Runners west gives no --dev-id (Zephyr 4.2: openocd, stm32cubeprogrammer): the option of their own
# that picks one probe by its serial number; "{serial}" stands for it
OWN_PROBE_OPTIONS: dict[str, tuple[str, ...]] = {
    "openocd": ("--cmd-pre-init", "adapter serial {serial}"),
    "stm32cubeprogrammer": ("--conn-modifiers", "sn={serial}"),
}
DEV_ID_OPTION = re.compile(r"^\s*(-i \S+, )?--dev-id\b", re.M)


def takes_dev_id(west: str, build_dir: Path, runner: str) -> bool:
    """Whether west's `runner` picks a probe with --dev-id, as its runner-specific help says."""
    try:
        result = subprocess.run([west, "flash", "-H", "-d", str(build_dir), "-r", runner], capture_output=True,
                                text=True, timeout=HELP_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return result.returncode == 0 and DEV_ID_OPTION.search(result.stdout) is not None


def probe_arguments(west: str, build_dir: Path, runner: str, serial_number: str) -> list[str]:
    """The west flash arguments that make `runner` flash the probe `serial_number`."""
    if takes_dev_id(west, build_dir, runner):
        return ["--dev-id", serial_number]
    if runner in OWN_PROBE_OPTIONS:
        return [arg.format(serial=serial_number) for arg in OWN_PROBE_OPTIONS[runner]]
    raise MtkError(f"west's runner '{runner}' cannot pick a probe by serial number (no --dev-id in "
                   f"`west flash -H -d {build_dir} -r {runner}`)",
                   hint="connect that board alone and leave --serial-number out, or flash with another runner")


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
            command += probe_arguments(west, build_dir, runner, self.serial_number)
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
        hint = f"rerun by hand: {shlex.join(command)}"
        if any(marker in line.lower() for line in errors for marker in MISSING_TOOL_MARKERS):
            raise ToolMissing(message, hint=hint)
        raise TargetError(message, hint=hint)
