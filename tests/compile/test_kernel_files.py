"""The C kernels' files as kernels/files.py lists them: per family and instruction set a complete list, in an order
that builds under each core's own gcc flags (and the host's), and no instruction-set choice left in the C."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from mtk.kernels.files import C_DIR, FAMILIES, ISAS, c_files, project_name
from mtk.kernels.table import CORE_FILES
from mtk.target import CPUS

from armbuild import arm_gcc

INCLUDE = re.compile(r'^#include "([^"]+)"', re.M)
# The toolchain's switch between the DSP instructions and their portable C, and Helium's assembly twin of the 16x8
# weight rows (the host runs a Helium core's 16x8 models in its C twin): the only tests of a core's features left.
FEATURE_TEST = re.compile(r"__ARM_FEATURE_(DSP|MVE)\b|MTK_EMULATE_DSP")
FEATURE_TESTS_ALLOWED = {"common/mtk_dsp_intrinsics.h", "mve/mtk_dot_s16_mve.h"}


def folders() -> list[str]:
    return [arg for folder in sorted(C_DIR.iterdir()) for arg in ("-I", str(folder))]


def source(isa: str, family: str) -> str:
    return "".join(f'#include "{project_name(f)}"\n' for f in c_files(isa, [family]))


def test_every_file_a_family_includes_is_in_its_list():
    for family, by_isa in FAMILIES.items():
        for isa, files in by_isa.items():
            names = {project_name(f) for f in files}
            for rel in files:
                missing = set(INCLUDE.findall((C_DIR / rel).read_text())) - names
                assert not missing, f"{family} on {isa}: {rel} includes {missing}, not in its list"


def test_every_file_is_listed_and_every_name_unique():
    listed = {f for by_isa in FAMILIES.values() for files in by_isa.values() for f in files}
    listed |= {f for files in CORE_FILES.values() for f in files}
    on_disk = {str(p.relative_to(C_DIR)) for p in C_DIR.rglob("*.h")}
    assert listed == on_disk
    assert len({project_name(f) for f in on_disk}) == len(on_disk)   # a project's src/ is flat


def test_no_kernel_tests_the_cores_features():
    for path in C_DIR.rglob("*.h"):
        rel = str(path.relative_to(C_DIR))
        if rel not in FEATURE_TESTS_ALLOWED:
            assert not FEATURE_TEST.search(path.read_text()), rel


def test_a_family_unknown_on_an_instruction_set_is_named():
    with pytest.raises(KeyError, match="dot_biased_s8.*m3"):
        c_files("m3", ["dot_s8", "dot_biased_s8"])


@pytest.mark.parametrize("cpu", ["cortex-m0plus", "cortex-m3", "cortex-m4", "cortex-m7", "cortex-m33", "cortex-m55"])
def test_each_family_builds_for_the_cores_of_its_instruction_sets(cpu):
    gcc = arm_gcc()
    isa = CPUS[cpu].isa.value
    for family, by_isa in FAMILIES.items():
        if isa in by_isa:
            subprocess.run([gcc, *CPUS[cpu].gcc_flags, "-std=c99", "-O2", "-Wall", "-Wextra", "-Werror",
                            "-fsyntax-only", *folders(), "-x", "c", "-"], input=source(isa, family), text=True,
                           check=True)


@pytest.mark.parametrize("isa", ISAS)
def test_each_family_builds_on_the_host(isa):
    """What the host runs of a model for those cores (Helium's vector code includes arm_mve.h: target builds only)."""
    gcc = shutil.which("gcc")
    if gcc is None:
        pytest.skip("no host gcc")
    for family, by_isa in FAMILIES.items():
        if isa in by_isa and not any("<arm_mve.h>" in (C_DIR / f).read_text() for f in by_isa[isa]):
            subprocess.run([gcc, "-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", "-fsyntax-only", *folders(), "-x",
                            "c", "-"], input=source(isa, family), text=True, check=True)
