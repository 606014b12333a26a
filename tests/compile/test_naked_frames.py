"""Every naked assembly kernel of kernels/c, as gcc preprocesses it for each DSP core: codegen.stack_bound's
NAKED_FRAMES bounds its pushes and frame (gcc's call graph counts a naked function's frame as 0 bytes)."""

from __future__ import annotations

import re
import subprocess

import pytest

from mtk.codegen.stack_bound import naked_frame
from mtk.kernels.files import C_DIR, FAMILIES, c_files
from mtk.kernels.table import core_files
from mtk.target import CPUS

from armbuild import arm_gcc

# a naked function of the preprocessed C: its name and its asm's string literals
NAKED = re.compile(r"__attribute__\(\(naked\b[^)]*\)\)\s*static\s+void\s+(\w+)\("
                   r".*?__asm__\s+volatile\((.*?\")\s*\)\s*;", re.S)


def _frame(asm: str) -> int:
    """Bytes the pushes and `sub sp` of `asm` take."""
    registers = 0
    for regs in re.findall(r"push \{([^}]*)\}", asm):
        for part in regs.split(","):
            span = re.fullmatch(r"r(\d+)-r(\d+)", part.strip())
            registers += int(span[2]) - int(span[1]) + 1 if span else 1
    return 4 * registers + sum(int(n) for n in re.findall(r"sub sp, sp, #(\d+)", asm))


@pytest.mark.parametrize("cpu", ["cortex-m4", "cortex-m7", "cortex-m33"])
def test_every_naked_kernel_of_the_c_files_has_a_frame_that_covers_its_asm(cpu):
    gcc = arm_gcc()
    families = [family for family, isas in FAMILIES.items() if "dsp" in isas]
    files = c_files("dsp", families, core_files(CPUS[cpu]))
    folders = [arg for folder in (C_DIR, *sorted(C_DIR.iterdir())) for arg in ("-I", str(folder))]
    text = subprocess.run([gcc, *CPUS[cpu].gcc_flags, "-E", "-P", *folders, "-x", "c", "-"],
                          input="".join(f'#include "{f}"\n' for f in files), text=True, check=True,
                          capture_output=True).stdout
    frames = {name: _frame("".join(re.findall(r'"((?:[^"\\]|\\.)*)"', asm))) for name, asm in NAKED.findall(text)}
    expected = {"mtk_gemm_1x4_fused_dsp", "mtk_gemm_2x2_fused_clamped_dsp", "mtk_dot_2x2_rows_w16_dsp"}
    assert len(frames) >= 20 and expected <= set(frames)
    uncovered = {name: frame for name, frame in frames.items() if (naked_frame(name) or 0) < frame or frame == 0}
    assert not uncovered, sorted(uncovered.items())
