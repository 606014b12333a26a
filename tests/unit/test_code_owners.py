"""The code that goes with each layer: the generated C's functions only its entry functions reach
(codegen/code_size.py, arm-none-eabi-gcc's sections and call graph)."""

from __future__ import annotations

import pytest

from mtk.codegen.code_size import measure_code
from mtk.target import get_cpu

SOURCE = """
#include <stdint.h>
static __attribute__((noinline)) int32_t shared(const int8_t* x, int32_t n) {
  int32_t s = 0; for (int32_t i = 0; i < n; ++i) s += x[i] * (i + 3); return s; }
static __attribute__((noinline)) int32_t pool_body(const int8_t* x, int32_t n) {
  int32_t m = -128; for (int32_t i = 0; i < n; ++i) m = x[i] > m ? x[i] : m; return m; }
int32_t m_conv_a(const int8_t* x, int32_t n) { return shared(x, n); }
int32_t m_conv_b(const int8_t* x, int32_t n) { return shared(x, n) + shared(x + 1, n - 1); }
int32_t m_pool(const int8_t* x, int32_t n) { return pool_body(x, n) + n; }
"""


@pytest.fixture(scope="module")
def measured():
    code = measure_code({"src/k.c": SOURCE}, get_cpu("cortex-m4"), "m_")
    if code.code_bytes is None:
        pytest.skip("no arm-none-eabi-gcc")
    return code


def _size(code, prefix: str) -> int:
    """A function's .text (gcc may name a static one's clone shared.constprop.0 and the like)."""
    (size,) = [n for name, n in code.function_bytes.items() if name.split(".")[0] == prefix]
    return size


def test_a_function_two_owners_call_is_neither_ones(measured):
    own = measured.own_code({"a": ["m_conv_a"], "b": ["m_conv_b"], "pool": ["m_pool"]})
    assert own == {"a": _size(measured, "m_conv_a"), "b": _size(measured, "m_conv_b"),
                   "pool": _size(measured, "m_pool") + _size(measured, "pool_body")}
    assert sum(own.values()) + _size(measured, "shared") == measured.code_bytes


def test_an_owner_of_both_callers_owns_what_they_share(measured):
    own = measured.own_code({"conv": ["m_conv_a", "m_conv_b"], "pool": ["m_pool"]})
    assert own["conv"] == sum(_size(measured, f) for f in ("m_conv_a", "m_conv_b", "shared"))
    assert measured.own_code({"conv": ["m_conv_a"], "unknown": ["not_in_the_c"]})["unknown"] == 0


def test_a_kernel_only_owners_of_one_kind_call_is_each_ones(measured):
    """Two layers of one variant sharing its kernel: each is priced as if alone; one of another kind sharing it
    makes it neither's."""
    entries = {"a": ["m_conv_a"], "b": ["m_conv_b"], "pool": ["m_pool"]}
    own = measured.own_code(entries, {"a": "2x2/fused", "b": "2x2/fused", "pool": "c"})
    assert own["a"] == _size(measured, "m_conv_a") + _size(measured, "shared")
    assert own["b"] == _size(measured, "m_conv_b") + _size(measured, "shared")
    assert measured.own_code(entries, {"a": "2x2/fused", "b": "1x4/biased", "pool": "c"}) == measured.own_code(entries)
