"""16x8 (int16 activations, zero point 0) PAD, STRIDED_SLICE, CONCATENATION, AVERAGE_POOL_2D, MAX_POOL_2D, MEAN,
MUL, MINIMUM and MAXIMUM: random single-op models, random shapes and, where the op rescales or TFLM
copies unscaled, random scales, bit-exact with tflite-micro on the host; one chain of all of them (with TRANSPOSE
and RESHAPE), which tests/target/test_ops_16x8_movement_qemu.py runs in QEMU."""

from __future__ import annotations

from typing import Callable

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness import HYPOTHESIS, assert_bit_exact
from modelgen import Draw, HypothesisDraw, _padded_size
from modelgen16x8 import Net16

pytestmark = pytest.mark.slow   # compiles models with TVM


def _scale(d: Draw) -> float:
    return 2.0 ** d.float(-14.0, -6.0)


def _shape(d: Draw, rank: int | None = None) -> tuple[int, ...]:
    return tuple(d.int(1, 5) for _ in range(rank or d.int(1, 4)))


def pad(net: Net16, d: Draw) -> tuple:
    x = net.model_input(_shape(d), _scale(d))
    pads = np.array([[d.int(0, 2), d.int(0, 2)] for _ in x[1]], np.int32)
    y = net.act("pad", [s + a + b for s, (a, b) in zip(x[1], pads)], x[2])
    net.b.op("PAD", [x[0], net.b.const(net.name("paddings"), pads)], [y[0]])
    return y


def strided_slice(net: Net16, d: Draw) -> tuple:
    x = net.model_input(_shape(d), _scale(d))
    begin = [d.int(0, s - 1) for s in x[1]]
    end = [d.int(b + 1, s) for b, s in zip(begin, x[1])]
    strides = [d.int(1, 2) for _ in x[1]]
    y = net.act("slice", [len(range(b, e, s)) for b, e, s in zip(begin, end, strides)], x[2])
    params = [net.b.const(net.name(n), np.array(v, np.int32)) for n, v in (("begin", begin), ("end", end),
                                                                          ("strides", strides))]
    net.b.op("STRIDED_SLICE", [x[0], *params], [y[0]])
    return y


def concatenation(net: Net16, d: Draw) -> tuple:
    """TFLM's int16 CONCATENATION copies its inputs unscaled: every input its own scale."""
    shape = _shape(d)
    axis = d.int(0, len(shape) - 1)
    parts = []
    for _ in range(d.int(1, 3)):
        part = list(shape)
        part[axis] = d.int(1, 4)
        parts.append(net.model_input(part, _scale(d)))
    out = list(shape)
    out[axis] = sum(p[1][axis] for p in parts)
    y = net.act("concat", out, _scale(d))
    net.b.op("CONCATENATION", [p[0] for p in parts], [y[0]], axis=axis - len(shape) * d.int(0, 1))
    return y


def pool(op: str) -> Callable:
    def layer(net: Net16, d: Draw) -> tuple:
        x = net.model_input((d.int(1, 2), d.int(1, 7), d.int(1, 7), d.int(1, 4)), _scale(d))
        padding = d.choice(("SAME", "VALID"))
        (kh, kw), (sh, sw) = [d.int(1, x[1][1]), d.int(1, x[1][2])], [d.int(1, 3), d.int(1, 3)]
        out = (_padded_size(padding, x[1][1], kh, sh, 1), _padded_size(padding, x[1][2], kw, sw, 1))
        y = net.act(op.lower(), (x[1][0], *out, x[1][3]), x[2])
        net.b.op(op, [x[0]], [y[0]], padding=padding, stride_h=sh, stride_w=sw, filter_height=kh, filter_width=kw,
                 fused_activation_function=d.choice(("NONE", "RELU", "RELU6", "RELU_N1_TO_1")))
        return y
    return layer


def mean(net: Net16, d: Draw) -> tuple:
    x = net.model_input(_shape(d, d.int(2, 4)), _scale(d))
    axes = sorted({d.int(0, len(x[1]) - 1) for _ in range(d.int(1, 2))})
    keep = d.bool()
    out = [1 if a in axes else s for a, s in enumerate(x[1])] if keep else \
        [s for a, s in enumerate(x[1]) if a not in axes]
    y = net.act("mean", out, x[2] * 2.0 ** d.float(-1.0, 1.0))
    written = [a - len(x[1]) if d.bool() else a for a in axes]
    net.b.op("MEAN", [x[0], net.b.const(net.name("axes"), np.array(written, np.int32))], [y[0]], keep_dims=keep)
    return y


def binary(op: str) -> Callable:
    """MUL, MINIMUM or MAXIMUM of two int16 inputs, the second broadcast now and then; MUL rescales."""
    def layer(net: Net16, d: Draw) -> tuple:
        x = net.model_input(_shape(d), _scale(d))
        shape = [1 if d.int(0, 3) == 0 else s for s in x[1]][d.int(0, len(x[1]) - 1):]
        w = net.model_input(shape, _scale(d))
        first, second = (x, w) if d.bool() else (w, x)
        scale = x[2] * w[2] * 2.0 ** d.float(10.0, 16.0) if op == "MUL" else _scale(d)
        y = net.act(op.lower(), np.broadcast_shapes(first[1], second[1]), scale)
        options = dict(fused_activation_function=d.choice(("NONE", "RELU", "RELU6"))) if op == "MUL" else {}
        net.b.op(op, [first[0], second[0]], [y[0]], **options)
        return y
    return layer


FAMILIES = {"PAD": pad, "STRIDED_SLICE": strided_slice, "CONCATENATION": concatenation,
            "AVERAGE_POOL_2D": pool("AVERAGE_POOL_2D"), "MAX_POOL_2D": pool("MAX_POOL_2D"), "MEAN": mean,
            "MUL": binary("MUL"), "MINIMUM": binary("MINIMUM"), "MAXIMUM": binary("MAXIMUM")}


def generate(family: str, d: Draw) -> bytes:
    net = Net16(f"mtk 16x8 {family}")
    return net.build(FAMILIES[family](net, d))


@pytest.mark.parametrize("family", list(FAMILIES))
def test_random_models_are_bit_exact(family):
    @settings(HYPOTHESIS, max_examples=8)
    @given(model=st.composite(lambda draw: generate(family, HypothesisDraw(draw)))())
    def check(model):
        assert_bit_exact(model)
    check()


def chain() -> bytes:
    """PAD → MAX_POOL_2D → AVERAGE_POOL_2D → MUL (a broadcast input) → MAXIMUM, MINIMUM → STRIDED_SLICE →
    TRANSPOSE → CONCATENATION → MEAN → RESHAPE, every activation int16 with zero point 0."""
    net = Net16("mtk 16x8 movement chain")
    const = net.b.const
    x = net.model_input((1, 6, 6, 3), 2.0 ** -10)
    gain = net.model_input((1, 1, 1, 3), 2.0 ** -12)

    def op(name: str, inputs: list, shape, scale: float, **options) -> tuple:
        y = net.act(name.lower(), shape, scale)
        net.b.op(name, inputs, [y[0]], **options)
        return y

    def ints(stem: str, values) -> int:
        return const(net.name(stem), np.array(values, np.int32))

    p = op("PAD", [x[0], ints("paddings", [[0, 0], [1, 1], [1, 1], [0, 0]])], (1, 8, 8, 3), x[2])
    window = dict(fused_activation_function="NONE", stride_h=2, stride_w=2)
    m = op("MAX_POOL_2D", [p[0]], (1, 4, 4, 3), x[2], padding="VALID", filter_height=2, filter_width=2, **window)
    window.update(stride_h=1, stride_w=1)
    a = op("AVERAGE_POOL_2D", [m[0]], (1, 4, 4, 3), x[2], padding="SAME", filter_height=3, filter_width=3, **window)
    g = op("MUL", [a[0], gain[0]], (1, 4, 4, 3), x[2] * gain[2] * 2.0 ** 15, fused_activation_function="NONE")
    hi = op("MAXIMUM", [g[0], a[0]], (1, 4, 4, 3), x[2])
    lo = op("MINIMUM", [g[0], m[0]], (1, 4, 4, 3), x[2])
    s = op("STRIDED_SLICE", [hi[0], ints("begin", [0, 0, 1, 0]), ints("end", [1, 4, 4, 3]), ints("strides", [1, 2, 1, 1])],
           (1, 2, 3, 3), x[2])
    t = op("TRANSPOSE", [s[0], ints("perm", [0, 2, 1, 3])], (1, 3, 2, 3), x[2])
    lo_t = op("STRIDED_SLICE", [lo[0], ints("begin", [0, 1, 0, 0]), ints("end", [1, 4, 2, 3]), ints("strides", [1, 1, 1, 1])],
              (1, 3, 2, 3), x[2])
    c = op("CONCATENATION", [t[0], lo_t[0]], (1, 3, 2, 6), x[2], axis=3, fused_activation_function="NONE")
    mu = op("MEAN", [c[0], ints("axes", [2])], (1, 3, 6), x[2], keep_dims=False)
    r = op("RESHAPE", [mu[0], ints("shape", [18])], (18,), mu[2])
    return net.build(r)


def test_chain_is_bit_exact_on_the_host():
    assert_bit_exact(chain())


