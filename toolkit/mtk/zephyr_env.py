"""Finding Zephyr: its tree (ZEPHYR_BASE or a west workspace), its version, west, and a toolchain.

A Zephyr build needs three things mtk does not ship: the Zephyr tree (from `west init` /
`west update`), `west` itself, and a cross toolchain (the Zephyr SDK, or GNU Arm such as
Debian's gcc-arm-none-eabi through ZEPHYR_TOOLCHAIN_VARIANT=gnuarmemb).
"""

from __future__ import annotations

import configparser
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from .errors import ToolMissing

MIN_VERSION = (3, 7)   # hardware model v2 board names ("mps2/an386") came with Zephyr 3.7
WEST_INSTALL = "pip install west (in a Python >= 3.12 environment for Zephyr 4.2)"
ZEPHYR_INSTALL = ("a minimal workspace (Zephyr, cmsis_6, hal_stm32): mkdir -p ~/zephyrproject/manifest && "
                  "mtk zephyr-manifest > ~/zephyrproject/manifest/west.yml && cd ~/zephyrproject && "
                  "west init -l manifest && west update, then export ZEPHYR_BASE=~/zephyrproject/zephyr")


@dataclass(frozen=True)
class Zephyr:
    base: Path                    # the zephyr/ tree (ZEPHYR_BASE)
    version: tuple[int, int, int]
    version_text: str             # as the VERSION file spells it, e.g. "4.2.0-rc1"
    west: str                     # path of the west executable
    toolchain: dict[str, str]     # environment variables selecting the toolchain


def read_version(base: Path) -> tuple[tuple[int, int, int], str]:
    """(major, minor, patch) and the full text from `base`/VERSION."""
    fields = dict(re.findall(r"^\s*(\w+)\s*=\s*(\S*)\s*$", (base / "VERSION").read_text(), flags=re.M))
    numbers = (int(fields["VERSION_MAJOR"]), int(fields["VERSION_MINOR"]), int(fields["PATCHLEVEL"]))
    extra = fields.get("EXTRAVERSION", "")
    return numbers, ".".join(map(str, numbers)) + (f"-{extra}" if extra else "")


def _workspace_base(start: Path) -> Path | None:
    """The Zephyr tree of the west workspace holding `start`, from its .west/config."""
    for folder in (start, *start.parents):
        config_file = folder / ".west" / "config"
        if config_file.is_file():
            config = configparser.ConfigParser()
            config.read(config_file)
            relative = config.get("zephyr", "base", fallback=None) or config.get("manifest", "path", fallback="zephyr")
            return folder / relative
    return None


def find_base(start: Path | None = None) -> Path:
    """ZEPHYR_BASE if set, else the Zephyr tree of a west workspace above `start` (the application)
    or above the current folder."""
    if os.environ.get("ZEPHYR_BASE"):
        base, origin = Path(os.environ["ZEPHYR_BASE"]), "ZEPHYR_BASE"
    else:
        base = _workspace_base(Path(start or Path.cwd()).resolve()) or _workspace_base(Path.cwd().resolve())
        origin = "the west workspace"
        if base is None:
            raise ToolMissing("no Zephyr found: ZEPHYR_BASE is not set and no west workspace holds the "
                              "application or the current folder", hint=ZEPHYR_INSTALL)
    if not (base / "VERSION").is_file() or not (base / "cmake").is_dir():
        raise ToolMissing(f"{origin} points at {base}, which is not a Zephyr tree (no VERSION file)",
                          hint=ZEPHYR_INSTALL)
    return base.resolve()


def find_toolchain(base: Path) -> dict[str, str]:
    """The toolchain variables: the user's own if set, else the Zephyr SDK, else GNU Arm on PATH."""
    if os.environ.get("ZEPHYR_TOOLCHAIN_VARIANT"):
        return {}
    sdk = os.environ.get("ZEPHYR_SDK_INSTALL_DIR") or next(
        (str(p) for p in sorted(Path.home().glob("zephyr-sdk-*"), reverse=True) if (p / "sdk_version").is_file()),
        None)
    if sdk:
        return {"ZEPHYR_TOOLCHAIN_VARIANT": "zephyr", "ZEPHYR_SDK_INSTALL_DIR": sdk}
    gcc = shutil.which("arm-none-eabi-gcc")
    if gcc:   # Debian's gcc-arm-none-eabi: prefix /usr
        return {"ZEPHYR_TOOLCHAIN_VARIANT": "gnuarmemb",
                "GNUARMEMB_TOOLCHAIN_PATH": str(Path(gcc).resolve().parent.parent)}
    raise ToolMissing(f"no toolchain for Zephyr {base}: no Zephyr SDK and no arm-none-eabi-gcc",
                      hint="apt-get install gcc-arm-none-eabi, or install the Zephyr SDK")


def python_required(base: Path) -> tuple[int, ...] | None:
    """The Python version the Zephyr tree's CMake requires of west's interpreter, if it says."""
    match = re.search(r"set\(PYTHON_MINIMUM_REQUIRED\s+([0-9.]+)\)", _read(base / "cmake" / "modules" / "python.cmake"))
    return tuple(int(n) for n in match.group(1).split(".")) if match else None


def script_interpreter(script: str | None) -> list[str] | None:
    """The Python command of a script's #! line (west's: the Python of the Zephyr workspace), if any."""
    first_line = _read(Path(script)).partition("\n")[0] if script else ""
    if not first_line.startswith("#!") or "python" not in first_line:
        return None
    return first_line[2:].split()


def west_python(west: str) -> tuple[tuple[int, ...], str] | None:
    """The version of the Python that runs `west` (its script's #! line), if that can be told."""
    interpreter = script_interpreter(west)
    if interpreter is None:
        return None
    try:
        text = subprocess.run([*interpreter, "-c", "import platform; print(platform.python_version())"],
                              capture_output=True, text=True, timeout=30).stdout.strip()
        return tuple(int(n) for n in text.split(".")), text
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return None


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""


def find_zephyr(start: Path | None = None) -> Zephyr:
    """Zephyr, west and a toolchain, or ToolMissing saying which is missing or too old."""
    base = find_base(start)
    version, text = read_version(base)
    if version[:2] < MIN_VERSION:
        raise ToolMissing(f"Zephyr {text} at {base} is too old: mtk needs Zephyr "
                          f"{'.'.join(map(str, MIN_VERSION))} or newer", hint="west update to a newer release")
    west = shutil.which("west")
    if west is None:
        raise ToolMissing("'west' is not on PATH", hint=WEST_INSTALL)
    required, python = python_required(base), west_python(west)
    if required and python and python[0] < required:
        raise ToolMissing(f"{west} runs on Python {python[1]}; Zephyr {text} needs Python "
                          f"{'.'.join(map(str, required))} or newer", hint=WEST_INSTALL)
    return Zephyr(base, version, text, west, find_toolchain(base))
