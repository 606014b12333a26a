"""Helium depthwise's stream and tap pairing (ops/depthwise_mve.py) on the host: the layout
c/mtk_depthwise_mve.h reads, decoded here from its documented fields, and the int16 bound that lets the kernel
add two taps' products before widening. The kernel itself runs bit-exact in QEMU (test_kernels_qemu.py,
HELIUM_MODELS and the random Helium shapes)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st

from harness import conv_model
from mtk.ops import prepare_ops
from mtk.ops.depthwise_mve import HALF_LANES, LANES, SUM_ORDER, pack_stream, pairs
from mtk.ops.requant import Requant
from mtk.reader import read_model
from mtk.target import get_cpu
from mtk.tuning import tunable_layers

PARAMS = {LANES: 208, HALF_LANES: 96}   # mtk_depthwise_mve.h MTK_DW_MVE_PARAMS, MTK_DW_MVE_HALF_PARAMS


def decode(stream: np.ndarray, taps: int, channels: int, multiplier: int) -> dict[str, np.ndarray]:
    """The stream read as the kernel reads it, back to per-channel weights [taps][C], bias/multiplier/shift
    [C], out_zp and each lane's input channel; checks the padding lanes are zero and the length exact."""
    data, pos = stream.view(np.uint8), 0
    fields: dict[str, list] = {"w": [], "params": [], "zp": [], "lanes": []}

    def take(n: int, dtype) -> np.ndarray:
        nonlocal pos
        pos += n
        return data[pos - n:pos].view(dtype)

    for first in range(0, channels, LANES):
        n = min(LANES, channels - first)
        width, start = (LANES if n > HALF_LANES else HALF_LANES), pos
        raw = take(12 * width, np.int32).reshape(3, -1, 4)   # [field][sum vector][lane]
        params = np.zeros((3, width), np.int64)
        for j in range(raw.shape[1]):
            lanes = 4 * np.arange(4) + SUM_ORDER[j] if width == LANES else 2 * np.arange(4) + j
            params[:, lanes] = raw[:, j]
        if width == LANES:
            fields["zp"].append(take(16, np.int16))
        assert pos - start == PARAMS[width]
        if multiplier > 1:
            fields["lanes"].append(take(16, np.uint8 if width == LANES else np.uint16)[:n])
        w = take(taps * width, np.int8).reshape(taps, width)
        assert not w[:, n:].any() and not params[:, n:].any()
        fields["w"].append(w[:, :n])
        fields["params"].append(params[:, :n])
    assert pos == data.size
    return {"w": np.concatenate(fields["w"], axis=1), "params": np.concatenate(fields["params"], axis=1),
            "zp": np.concatenate(fields["zp"]) if fields["zp"] else np.zeros(0, np.int16),
            "lanes": np.concatenate(fields["lanes"]) if fields["lanes"] else np.zeros(0, np.int64)}


@settings(max_examples=60, deadline=None)
@given(channels=st.integers(1, 67), kh=st.integers(1, 10), kw=st.integers(1, 8), multiplier=st.integers(1, 8),
       seed=st.integers(0, 2**16))
def test_stream_holds_every_channel_where_the_kernel_reads_it(channels, kh, kw, multiplier, seed):
    rng = np.random.default_rng(seed)
    C = channels * multiplier
    w = rng.integers(-128, 128, (1, kh, kw, C)).astype(np.int8)
    bias = rng.integers(-2**20, 2**20, C).astype(np.int32)
    rq = Requant(rng.integers(2**30, 2**31 - 1, C).astype(np.int32), -rng.integers(1, 31, C).astype(np.int32),
                 int(rng.integers(-128, 128)), -128, 127)
    got = decode(pack_stream(w, bias, rq, multiplier), kh * kw, C, multiplier)
    assert np.array_equal(got["w"], w.reshape(kh * kw, C))
    assert np.array_equal(got["params"], np.stack([bias, rq.multiplier, rq.shift]))
    assert np.all(got["zp"] == rq.out_zp)
    if multiplier > 1:
        assert np.array_equal(got["lanes"], np.arange(C) // multiplier)


def paired_sum_range(w: np.ndarray) -> tuple[int, int]:
    """Extremes of x0 w0 + x1 w1 over int8 inputs x0, x1, over the tap pairs the kernel adds (2i, 2i + 1)."""
    taps = w.reshape(-1, w.shape[-1]).astype(np.int64)
    taps = taps[:len(taps) // 2 * 2]
    ends = np.array([-128, 127])[:, None, None] * taps   # [x][tap][channel]
    most, least = ends.max(axis=0), ends.min(axis=0)
    return int((least[0::2] + least[1::2]).min(initial=0)), int((most[0::2] + most[1::2]).max(initial=0))


@settings(max_examples=80, deadline=None)
@given(taps=st.integers(1, 80), channels=st.integers(1, 40), seed=st.integers(0, 2**16),
       minus_128=st.floats(0.0, 0.6))
def test_paired_taps_fit_int16_or_are_not_paired(taps, channels, seed, minus_128):
    """pairs(w) pairs every two taps unless some channel's pair would leave int16 (both weights -128)."""
    rng = np.random.default_rng(seed)
    w = rng.integers(-127, 128, (1, taps, 1, channels)).astype(np.int8)
    w[rng.random(w.shape) < minus_128] = -128
    least, most = paired_sum_range(w)
    assert pairs(w) == (taps // 2 if -2**15 <= least and most < 2**15 else 0)


def test_helium_takes_windows_beyond_16_taps(tmp_path):
    """A 7×7 and a 10×4 window (keyword models) take the Helium kernel, as 3×3 ones do."""
    for kernel in ((7, 7), (10, 4)):
        path = tmp_path / f"dw{kernel[0]}x{kernel[1]}.tflite"
        path.write_bytes(conv_model("DEPTHWISE_CONV_2D", (1, 12, 10, 24), (1, *kernel, 24), (1, 12, 10, 24),
                                    per_channel=True, padding="SAME", stride_h=1, stride_w=1, depth_multiplier=1,
                                    dilation_h_factor=1, dilation_w_factor=1, fused_activation_function="RELU"))
        (layer,) = tunable_layers(prepare_ops(read_model(path), get_cpu("cortex-m55")))
        assert layer.variants[0].label == "mve-c16"
