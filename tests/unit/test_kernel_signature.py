"""A hand-written C function's signature (mtk/kernels/signature.py): parsed from its parameter list, declared from it,
its arguments ordered by parameter name."""

from __future__ import annotations

import pytest

from mtk.kernels.signature import CFunction, Param

DOT = CFunction.of("mtk_dot_2x2_s8", "const void* x, const void *w, int32_t groups, int32_t* acc")


def test_a_parameter_list_parses_into_typed_parameters_and_back():
    assert DOT.params == (Param("const void*", "x"), Param("const void*", "w"), Param("int32_t", "groups"),
                          Param("int32_t*", "acc"))
    assert DOT.prototype == "int32_t mtk_dot_2x2_s8(const void* x, const void* w, int32_t groups, int32_t* acc);"
    assert DOT.renamed("f").head == "int32_t f(const void* x, const void* w, int32_t groups, int32_t* acc)"


def test_arguments_are_ordered_by_name_and_a_missing_or_unknown_one_is_refused():
    assert DOT.ordered(acc="a", groups=3, w="w", x="x") == ["x", "w", 3, "a"]
    with pytest.raises(TypeError, match=r"mtk_dot_2x2_s8\(x, w, groups, acc\) called with \(x, w, groups\)"):
        DOT.ordered(x="x", w="w", groups=3)
    with pytest.raises(TypeError, match="called with"):
        DOT.ordered(x="x", w="w", groups=3, acc="a", k=4)
