"""The C signatures of kernels/table.py are the headers' own: the prototypes the generated C declares compile against
the definitions on every instruction set (gcc rejects a prototype whose types differ), and each function is
defined where the table says."""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
from pathlib import Path

import pytest

from mtk.kernels import table
from mtk.kernels.files import C_DIR, FAMILIES, c_files, project_name
from mtk.kernels.signature import CFunction
from mtk.target import CPUS, Isa

from armbuild import arm_gcc

CORES = {Isa.SCALAR: "cortex-m0", Isa.M3: "cortex-m3", Isa.DSP: "cortex-m4", Isa.MVE: "cortex-m55"}


def compile_with_prototypes(isa: Isa, functions: list[CFunction], tmp_path: Path) -> subprocess.CompletedProcess:
    """The instruction set's headers, then `functions`' prototypes and a reference to each, compiled with -Werror."""
    gcc = arm_gcc()
    families = [table.DOT_HEADER, table.BIASED_HEADER, table.IM2COL_HEADER, table.RUNS_HEADER]
    families += [k.header for k in table.KERNELS if isa in k.isas and k.header]
    files = c_files(isa.value, [f for f in dict.fromkeys(families) if isa.value in FAMILIES[f]])
    src = tmp_path / f"{isa.value}.c"
    src.write_text("".join(f'#include "{project_name(f)}"\n' for f in files)
                   + "".join(f.prototype + "\n" for f in functions)
                   + "void* const mtk_table_refs[] = {" + ", ".join(f"(void*){f.name}" for f in functions) + "};\n")
    return subprocess.run([gcc, *CPUS[CORES[isa]].gcc_flags, "-O1", "-Wall", "-Wextra", "-Werror", "-c",
                           *(arg for folder in sorted(C_DIR.iterdir()) for arg in ("-I", str(folder))), str(src),
                           "-o", str(tmp_path / f"{isa.value}.o")],
                          capture_output=True, text=True)


def undefined(obj: Path) -> set[str]:
    nm = shutil.which("arm-none-eabi-nm")
    if nm is None:
        pytest.skip("arm-none-eabi-nm not installed")
    out = subprocess.run([nm, "--undefined-only", str(obj)], capture_output=True, text=True, check=True).stdout
    return {line.split()[-1] for line in out.splitlines() if line.strip()}


def test_every_prototype_matches_its_definition_on_every_instruction_set(tmp_path):
    functions = list(table.C_FUNCTIONS.values())
    defined: dict[Isa, set[str]] = {}
    for isa in Isa:
        built = compile_with_prototypes(isa, functions, tmp_path)
        assert built.returncode == 0, built.stderr
        defined[isa] = set(table.C_FUNCTIONS) - undefined(tmp_path / f"{isa.value}.o")
    for kernel in table.KERNELS:   # a kernel's own functions: on each instruction set the table gives it
        own = [kernel.function, kernel.per_channel, *kernel.tails, *kernel.chunked]
        for isa in kernel.isas:
            assert {f.name for f in own if f} <= defined[isa], (kernel.id, isa)
    # every other one (row packers, a lowering's helpers) on one at least: its prototype was checked there
    assert set(table.C_FUNCTIONS) == set().union(*defined.values())


def test_a_prototype_with_its_arguments_out_of_order_does_not_compile(tmp_path):
    dot = table.GEMM_BY_ID["2x2/int8"].function
    x, w, groups, acc = dot.params
    swapped = dataclasses.replace(dot, params=(x, groups, w, acc))
    built = compile_with_prototypes(Isa.DSP, [swapped], tmp_path)
    assert built.returncode != 0 and "conflicting types for 'mtk_dot_2x2_s8'" in built.stderr
