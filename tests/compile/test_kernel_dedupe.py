"""Kernels are emitted once per distinct code, never twice under one name."""

from __future__ import annotations

from mtk.codegen.aot import KernelLibrary
from mtk.kernels.signature import CFunction
from mtk.ops.base import Kernel


def c_kernel(name: str, body: str) -> Kernel:
    function = CFunction.of(name, "int8_t* out")
    return Kernel("fill", [0], c_source=f"{function.head} {{ {body} return 0; }}\n", c_function=function)


def test_identical_c_kernels_share_one_symbol_and_different_ones_get_their_own():
    kernels = KernelLibrary("m")
    first = kernels.add(c_kernel("fill_4", "out[0] = 1;")).name
    same = kernels.add(c_kernel("fill_4", "out[0] = 1;")).name
    other = kernels.add(c_kernel("fill_4", "out[0] = 2;")).name
    assert first == same == "tvmgen_m_fill_4"
    assert other != first
    assert len(kernels.c_sources) == 2 and f"int32_t {other}(" in kernels.c_sources[other]
