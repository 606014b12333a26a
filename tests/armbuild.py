"""The generated C of a compiled-model folder built for a Cortex-M with arm-none-eabi-gcc,
warnings as errors, and linked into one relocatable object: the symbols it still needs."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from mtk.target import get_cpu

C_LIBRARY = {"memcpy", "memset"}   # the only symbols the generated C may take from the firmware


def arm_gcc() -> str:
    """arm-none-eabi-gcc's path; the test skipped where it is not installed."""
    gcc = shutil.which("arm-none-eabi-gcc")
    if gcc is None:
        pytest.skip("arm-none-eabi-gcc not installed (Debian package gcc-arm-none-eabi)")
    return gcc


def undefined_symbols(folder: Path, cpu: str, tmp: Path) -> set[str]:
    return set(re.findall(r" U (\S+)", _symbols(folder, cpu, tmp))) - C_LIBRARY


def local_functions(folder: Path, cpu: str, tmp: Path) -> set[str]:
    """The functions the linked object defines for its own use (static): the kernels a model links."""
    return set(re.findall(r" t (\S+)", _symbols(folder, cpu, tmp)))


def _symbols(folder: Path, cpu: str, tmp: Path) -> str:
    gcc = arm_gcc()
    flags = get_cpu(cpu).gcc_flags
    tmp.mkdir(parents=True, exist_ok=True)
    objs = []
    for src in sorted((folder / "src").glob("*.c")):
        obj = tmp / f"{cpu}_{src.stem}.o"
        subprocess.run([gcc, *flags, "-std=c99", "-O2", "-Wall", "-Wextra", "-Werror",
                        "-I", str(folder / "include"), "-c", str(src), "-o", str(obj)],
                       check=True, capture_output=True, text=True)
        objs.append(str(obj))
    linked = tmp / f"{cpu}_linked.o"   # calls between the files resolve
    subprocess.run([gcc, *flags, "-r", "-nostdlib", *objs, "-o", str(linked)], check=True)
    return subprocess.run(["arm-none-eabi-nm", str(linked)], check=True, capture_output=True, text=True).stdout
