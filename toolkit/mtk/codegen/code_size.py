"""The generated C's code size on the target: arm-none-eabi-gcc -O2 .text, when that compiler is here."""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from .. import interrupts
from ..errors import InternalError
from ..target import Cpu


def measure_code_bytes(files: dict[str, str], cpu: Cpu) -> int | None:
    """.text of the .c files among `files` (relative path -> text) built for `cpu`; None without the compiler."""
    gcc = shutil.which("arm-none-eabi-gcc")
    size = shutil.which("arm-none-eabi-size")
    if not gcc or not size:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        objs = []
        for rel, text in files.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text)
        for rel in files:
            if rel.endswith(".c"):
                obj = root / (Path(rel).stem + ".o")
                cmd = [gcc, *cpu.gcc_flags, "-O2", "-pipe", "-ffunction-sections", "-fdata-sections",
                       "-I", str(root / "include"), "-c", str(root / rel), "-o", str(obj)]
                with interrupts.child_group(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                            errors="replace") as built:
                    output, _ = built.communicate()
                if built.returncode != 0:   # mtk wrote C that does not build: a bug, not "no compiler"
                    first = next((line for line in output.splitlines() if "error" in line), output.strip())
                    raise InternalError(f"the generated {rel} does not build with arm-none-eabi-gcc: {first}")
                objs.append(str(obj))
        out = subprocess.run([size, "-A", *objs], capture_output=True, text=True).stdout
    return sum(int(m.group(1)) for m in re.finditer(r"^\.text\S*\s+(\d+)", out, re.M))
