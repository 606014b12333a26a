"""The hand-written C helpers the generated kernels include (toolkit/mtk/ops/c/), built with the
host gcc on each of their paths (plain C; the DSP formulation emulated; the 64-bit product
from 16-bit halves as on Cortex-M0+) against Python's exact integers."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from mtk.compiler import KERNEL_HEADERS

INT32_MIN, INT32_MAX = -2**31, 2**31 - 1
EDGES = [INT32_MIN, INT32_MIN + 1, -2**30, -65536, -65535, -32768, -1, 0, 1, 32767, 65535, 65536, 2**30, INT32_MAX]

PATHS = {"plain": [], "dsp-emulated": ["-DMTK_EMULATE_DSP"], "long-multiply-by-halves": ["-DMTK_MUL64_BY_HALVES"]}


def srdhm(a: int, b: int) -> int:
    """gemmlowp's SaturatingRoundingDoublingHighMul."""
    if a == b == INT32_MIN:
        return INT32_MAX
    ab = a * b
    nudge = (1 << 30) if ab >= 0 else 1 - (1 << 30)
    q = abs(ab + nudge) // (1 << 31)
    return q if ab + nudge >= 0 else -q


def c_array(name: str, ctype: str, values) -> str:
    return f"static const {ctype} {name}[{len(values)}] = {{{', '.join(str(int(v)) for v in values)}}};"


def run_c(body: str, flags: list[str], tmp_path: Path) -> list[int]:
    gcc = shutil.which("gcc")
    if gcc is None:
        pytest.skip("no host gcc")
    src = tmp_path / "t.c"
    src.write_text('#include <stdio.h>\n#include "mtk_fixedpoint.h"\n#include "mtk_dot_s8.h"\n' + body)
    exe = tmp_path / "t"
    subprocess.run([gcc, "-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", *flags, "-I", str(KERNEL_HEADERS),
                    str(src), "-o", str(exe)], check=True)
    return [int(v) for v in subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout.split()]


@pytest.mark.parametrize("flags", PATHS.values(), ids=PATHS.keys())
def test_srdhm_matches_gemmlowp(flags, tmp_path):
    rng = np.random.default_rng(0)
    pairs = [(a, b) for a in EDGES for b in EDGES]
    pairs += [(int(a), int(b)) for a, b in rng.integers(INT32_MIN, INT32_MAX, (2000, 2), endpoint=True)]
    body = (c_array("A", "int32_t", [a for a, _ in pairs]) + c_array("B", "int32_t", [b for _, b in pairs]) +
            f"\nint main(void) {{ for (int i = 0; i < {len(pairs)}; ++i) printf(\"%ld\\n\", (long)mtk_srdhm(A[i], B[i]));"
            " return 0; }\n")
    assert run_c(body, flags, tmp_path) == [srdhm(a, b) for a, b in pairs]


@pytest.mark.parametrize("flags", PATHS.values(), ids=PATHS.keys())
def test_dot_kernels_match_numpy(flags, tmp_path):
    rng = np.random.default_rng(1)
    lines, expected = [], []
    for case, k in enumerate([1, 3, 4, 7, 16, 33]):
        a = rng.integers(-128, 128, (2, k))
        b = rng.integers(-128, 128, (4, k))
        a[0, 0], b[0, 0] = -128, -128   # the extreme product
        for name, rows in (("a", a), ("b", b)):
            lines += [c_array(f"{name}{case}_{r}", "int8_t", rows[r]) for r in range(len(rows))]
        lines.append(f"static void case{case}(void) {{ int32_t acc[4];"
                     f" mtk_dot_2x2_s8(a{case}_0, a{case}_1, b{case}_0, b{case}_1, {k}, acc);"
                     " for (int i = 0; i < 4; ++i) printf(\"%ld\\n\", (long)acc[i]);"
                     f" mtk_dot_1x4_s8(a{case}_0, b{case}_0, b{case}_1, b{case}_2, b{case}_3, {k}, acc);"
                     " for (int i = 0; i < 4; ++i) printf(\"%ld\\n\", (long)acc[i]); }")
        expected += [int(a[i] @ b[j]) for i in range(2) for j in range(2)] + [int(a[0] @ b[j]) for j in range(4)]
    body = "\n".join(lines) + "\nint main(void) {" + "".join(f" case{c}();" for c in range(6)) + " return 0; }\n"
    assert run_c(body, flags, tmp_path) == expected
