"""The generated C's code size and deepest stack use on the target (arm-none-eabi-gcc -O2), when that
compiler is here."""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .. import interrupts
from ..errors import InternalError
from ..target import Cpu
from .stack_bound import deepest_stack


@dataclass(frozen=True)
class CodeMeasure:
    code_bytes: int | None    # .text; None without the compiler
    stack_bytes: int | None   # the heaviest call chain from its entry points (stack_bound.py); None: unbounded


NO_COMPILER = CodeMeasure(None, None)


def measure_code(files: dict[str, str], cpu: Cpu, entry_prefix: str) -> CodeMeasure:
    """.text and deepest stack use of the .c files among `files` (relative path -> text) built for `cpu`,
    from the functions named `entry_prefix`... that the files do not call themselves."""
    gcc = shutil.which("arm-none-eabi-gcc")
    size = shutil.which("arm-none-eabi-size")
    if not gcc or not size:
        return NO_COMPILER
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
                       "-fcallgraph-info=su", "-I", str(root / "include"), "-c", str(root / rel), "-o", str(obj)]
                with interrupts.child_group(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                            errors="replace") as built:
                    output, _ = built.communicate()
                if built.returncode != 0:   # mtk wrote C that does not build: a bug, not "no compiler"
                    first = next((line for line in output.splitlines() if "error" in line), output.strip())
                    raise InternalError(f"the generated {rel} does not build with arm-none-eabi-gcc: {first}")
                objs.append(str(obj))
        out = subprocess.run([size, "-A", *objs], capture_output=True, text=True).stdout
        stack = deepest_stack((Path(obj).with_suffix(".ci").read_text() for obj in objs), entry_prefix)
    return CodeMeasure(sum(int(m.group(1)) for m in re.finditer(r"^\.text\S*\s+(\d+)", out, re.M)), stack)
