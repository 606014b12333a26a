"""AVERAGE_POOL_2D, MAX_POOL_2D, MEAN (mtk/ops/pooling.py) compiled by mtk: bit-exact with tflite-micro
on the host over random models (tests/modelgen.py) and corner cases; the C builds for Cortex-M4."""

from __future__ import annotations

import numpy as np
import pytest
from mtk.compiler import compile_model
from mtk.errors import ModelError
from mtk.tflite_builder import ModelBuilder
from harness import assert_bit_exact, assert_builds_for_cortex_m4, check_random_models, single_op_model

pytestmark = pytest.mark.slow   # compiles models with TVM


@pytest.mark.parametrize("op", ["AVERAGE_POOL_2D", "MAX_POOL_2D", "MEAN"])
def test_random_models_are_bit_exact(op, tmp_path_factory):
    check_random_models(op, tmp_path_factory)


# ---- pooling ---------------------------------------------------------------------------------

@pytest.mark.parametrize("op", ["AVERAGE_POOL_2D", "MAX_POOL_2D"])
@pytest.mark.parametrize("window", [
    dict(filter_height=5, filter_width=4, stride_h=1, stride_w=1, padding="SAME"),   # 6..20 taps at the edges
    dict(filter_height=3, filter_width=3, stride_h=2, stride_w=3, padding="SAME"),
    dict(filter_height=6, filter_width=7, stride_h=1, stride_w=1, padding="VALID"),  # global pooling
    dict(filter_height=1, filter_width=1, stride_h=2, stride_w=2, padding="VALID"),  # no reduction loop left
])
def test_pool_windows(op, window, tmp_path):
    h, w = 6, 7
    out = {"SAME": lambda n, s: -(-n // s), "VALID": lambda n, s: (n - 1) // s + 1}[window["padding"]]
    oh = out(h if window["padding"] == "SAME" else h - window["filter_height"] + 1, window["stride_h"])
    ow = out(w if window["padding"] == "SAME" else w - window["filter_width"] + 1, window["stride_w"])
    model = single_op_model(op, [((2, h, w, 3), 0.1, -7)], ((2, oh, ow, 3), 0.1, -7),
                            fused_activation_function="RELU", **window)
    assert_bit_exact(model, tmp_path)


def pool_model(op: str, dtype: str, shape: tuple[int, int, int], window: tuple[int, int], stride: tuple[int, int],
               padding: str, activation: str) -> bytes:
    b = ModelBuilder(description=f"{op} {dtype}")
    scale = 0.0005 if dtype == "int16" else 0.1
    x = b.tensor("x", (1, *shape), dtype, scale=scale, zero_point=0 if dtype == "int16" else -7)
    out = [-(-n // s) if padding == "SAME" else (n - k) // s + 1 for n, k, s in zip(shape[:2], window, stride)]
    y = b.tensor("y", (1, *out, shape[2]), dtype, scale=scale, zero_point=0 if dtype == "int16" else -7)
    b.op(op, [x], [y], padding=padding, stride_h=stride[0], stride_w=stride[1], filter_height=window[0],
         filter_width=window[1], fused_activation_function=activation)
    b.inputs([x])
    b.outputs([y])
    return b.build()


C_POOLS = {   # mtk_pool.h: 4-channel words (int8) / pairs (int16) and the channels left over, lanes flushed every
    "avg-9ch-same": ("AVERAGE_POOL_2D", "int8", (5, 6, 9), (3, 3), (1, 2), "SAME", "RELU"),   # 256 taps
    "avg-global-17x17x5": ("AVERAGE_POOL_2D", "int8", (17, 17, 5), (17, 17), (1, 1), "VALID", "NONE"),
    "avg-wide-rows-3x300x4": ("AVERAGE_POOL_2D", "int8", (3, 300, 4), (3, 290), (1, 3), "VALID", "NONE"),
    "max-7ch-s2": ("MAX_POOL_2D", "int8", (9, 8, 7), (3, 2), (2, 2), "SAME", "RELU_N1_TO_1"),
    "max-8ch-relu": ("MAX_POOL_2D", "int8", (6, 6, 8), (2, 2), (2, 2), "VALID", "RELU"),
    "avg-column-3x1": ("AVERAGE_POOL_2D", "int8", (9, 5, 6), (3, 1), (3, 1), "SAME", "NONE"),   # one run down
    "max16-column-2x1": ("MAX_POOL_2D", "int16", (8, 5, 5), (2, 1), (2, 3), "VALID", "NONE"),
    "avg16-5ch": ("AVERAGE_POOL_2D", "int16", (7, 6, 5), (3, 2), (2, 2), "SAME", "RELU6"),
    "avg16-global-9x9x4": ("AVERAGE_POOL_2D", "int16", (9, 9, 4), (9, 9), (1, 1), "VALID", "NONE"),
    "max16-3ch": ("MAX_POOL_2D", "int16", (7, 6, 3), (3, 3), (1, 2), "SAME", "RELU_N1_TO_1"),
    "max16-4ch": ("MAX_POOL_2D", "int16", (6, 6, 4), (2, 2), (2, 2), "VALID", "NONE"),
    # averages by a reciprocal's multiply up to 4,096 (int8) and 256 (int16) taps, a division past them
    "avg-global-64x64x4": ("AVERAGE_POOL_2D", "int8", (64, 64, 4), (64, 64), (1, 1), "VALID", "NONE"),
    "avg-global-65x64x4": ("AVERAGE_POOL_2D", "int8", (65, 64, 4), (65, 64), (1, 1), "VALID", "NONE"),
    "avg16-global-16x16x2": ("AVERAGE_POOL_2D", "int16", (16, 16, 2), (16, 16), (1, 1), "VALID", "NONE"),
    "avg16-global-17x16x3": ("AVERAGE_POOL_2D", "int16", (17, 16, 3), (17, 16), (1, 1), "VALID", "NONE"),
}


@pytest.mark.parametrize("cpu", ["cortex-m4", "cortex-m3"])
@pytest.mark.parametrize("name", C_POOLS)
def test_c_pool_kernel(name, cpu, tmp_path):
    """mtk_pool.h on the host, as DSP cores (SXTAB16, SSUB8/SEL emulated) and the M3 (biased bytes) compute it;
    inputs over the whole range, so sums reach the lanes' bounds."""
    model = pool_model(*C_POOLS[name])
    dtype = np.int16 if C_POOLS[name][1] == "int16" else np.int8
    info = np.iinfo(dtype)
    shape = (1, *C_POOLS[name][2])
    rng = np.random.default_rng(5)
    samples = [[np.full(shape, info.min, dtype)], [np.full(shape, info.max, dtype)],
               [rng.integers(info.min, info.max + 1, size=shape).astype(dtype)]]
    assert_bit_exact(model, tmp_path, samples, cpu=cpu, plain_too=True)


def test_average_rounds_negative_sums_away_from_zero(tmp_path):
    """(sum − count/2) / count for sum ≤ 0: every small sum of a 2-tap window, both signs."""
    values = np.arange(-128, 128, dtype=np.int8)
    pairs = np.stack(np.meshgrid(values[::3], values[::5], indexing="ij"), axis=-1).reshape(1, -1, 2, 1)
    model = single_op_model("AVERAGE_POOL_2D", [(pairs.shape, 0.5, 0)], ((1, pairs.shape[1], 1, 1), 0.5, 0),
                            filter_height=1, filter_width=2, padding="VALID")
    assert_bit_exact(model, tmp_path, [[pairs]])


def test_pool_output_clamped_to_one_value_is_a_fill(tmp_path):
    model = single_op_model("MAX_POOL_2D", [((1, 4, 4, 2), 4.0, 0)], ((1, 2, 2, 2), 4.0, 0),
                            filter_height=2, filter_width=2, stride_h=2, stride_w=2, padding="VALID",
                            fused_activation_function="RELU_N1_TO_1")
    assert_builds_for_cortex_m4(assert_bit_exact(model, tmp_path), tmp_path)


def test_pool_requantization_is_refused(tmp_path):
    model = single_op_model("AVERAGE_POOL_2D", [((1, 4, 4, 2), 0.1, 0)], ((1, 2, 2, 2), 0.2, 0),
                            filter_height=2, filter_width=2, stride_h=2, stride_w=2, padding="VALID")
    (tmp_path / "m.tflite").write_bytes(model)
    with pytest.raises(ModelError, match="quantization differ"):
        compile_model(tmp_path / "m.tflite", tmp_path / "lib")


# ---- MEAN ------------------------------------------------------------------------------------

def mean_model(shape, axes, keep_dims, in_q=(0.05, 9), out_q=(0.03, -4)) -> bytes:
    rank = len(shape)
    resolved = {a % rank for a in axes}
    out = [1 if i in resolved else s for i, s in enumerate(shape)] if keep_dims else \
        [s for i, s in enumerate(shape) if i not in resolved]
    return single_op_model("MEAN", [(shape, *in_q), np.asarray(axes, dtype=np.int32)], (out, *out_q),
                           keep_dims=keep_dims)


@pytest.mark.parametrize("shape, axes, keep_dims", [
    ((1, 7, 5, 6), [1, 2], True),          # TFLM's float-only fast path; int8 takes the general one
    ((2, 7, 5, 6), [2, -3], False),        # negative axis
    ((3, 4, 5, 2), [0, 3, 0], True),       # duplicate axis
    ((2, 3, 2, 4, 3), [1, 3, 4], False),   # 5-D
    ((1, 9, 8, 1), [0, 1, 2, 3], False),   # everything: one output
    ((5, 6), [], True),                    # no axis: N = 1, a requantizing copy
])
def test_mean_axes(shape, axes, keep_dims, tmp_path):
    assert_bit_exact(mean_model(shape, axes, keep_dims), tmp_path)


def test_mean_large_count_and_capped_shift(tmp_path):
    """N = 4096 (1/N folded into the multiplier, k = 12) and in/out scale 2^-28, where
    QuantizedMeanOrSum caps k at 31 + shift."""
    for sub in ("large", "capped"):
        (tmp_path / sub).mkdir()
    assert_bit_exact(mean_model((1, 64, 64, 2), [1, 2], True), tmp_path / "large")
    assert_bit_exact(mean_model((1, 16, 8, 2), [1, 2], True, in_q=(2.0 ** -30, 0), out_q=(0.25, 3)),
                     tmp_path / "capped")


def test_mean_with_computed_axes_is_refused(tmp_path):
    b_axes = ((1,), 1.0, 0)   # a model input instead of a constant: not int32 and not constant
    model = single_op_model("MEAN", [((1, 4, 4, 2), 0.1, 0), b_axes], ((1, 1, 1, 2), 0.1, 0), keep_dims=True)
    (tmp_path / "m.tflite").write_bytes(model)
    with pytest.raises(ModelError, match="constant int32"):
        compile_model(tmp_path / "m.tflite", tmp_path / "lib")


@pytest.mark.parametrize("op", ["AVERAGE_POOL_2D", "MAX_POOL_2D"])
def test_int16_pooling(op):
    """16x8 pooling: int16 values, int32 sums, the fused activation range within int16."""
    b = ModelBuilder(description=f"{op} int16")
    x = b.tensor("x", (1, 7, 6, 3), "int16", scale=0.0005, zero_point=0)
    y = b.tensor("y", (1, 4, 3, 3), "int16", scale=0.0005, zero_point=0)
    b.op(op, [x], [y], padding="SAME", stride_h=2, stride_w=2, filter_height=3, filter_width=2,
         fused_activation_function="RELU6")
    b.inputs([x])
    b.outputs([y])
    rng = np.random.default_rng(3)
    assert_bit_exact(b.build(), inputs=[[rng.integers(-32768, 32768, size=(1, 7, 6, 3)).astype(np.int16)] for _ in range(2)])
