"""Small random 16x8 TFLite models (int16 activations, zero point 0; int8 symmetric weights; int64, int32 or,
for TRANSPOSE_CONV, int16 bias), one family per op, and two models that look like real ones.

    strategies["CONV_2D"]             # hypothesis strategy of .tflite bytes
    generate(family, Draw(rng))       # one model from a seeded generator
    encoder_decoder(seed)             # CONV/DEPTHWISE downsampling, TRANSPOSE_CONV up, skip ADDs
    conv_chain(seed)                  # CONV_2D layers on the GEMM's im2col rows and loop tails
    wide_sums(seed)                   # FULLY_CONNECTED and CONV_2D whose sums need int64
    mixed_int8_int16(seed)            # int8 CONV → QUANTIZE → int16 CONV/FC/ADD → QUANTIZE → int8
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
from ai_edge_litert import schema_py_generated as schema
from hypothesis import strategies as st

from modelgen import Draw, HypothesisDraw, _padded_size, _window
from mtk.tflite_builder import ModelBuilder

FUSED = ("NONE", "RELU", "RELU6", "RELU_N1_TO_1")
REAL = ("NONE", "RELU")   # the activations of the models that look like real ones
INT16_STD = 18918.0    # std of int16 values uniform over the whole range
WEIGHT_STD = 73.0


class Net16:
    """A ModelBuilder for 16x8 layers; tensors are (index, shape, scale, dtype)."""

    def __init__(self, description: str) -> None:
        self.b = ModelBuilder(description=description)
        self.inputs: list[int] = []
        self.count = 0

    def name(self, stem: str) -> str:
        self.count += 1
        return f"{stem}_{self.count}"

    def act(self, stem: str, shape: Sequence[int], scale: float, dtype: str = "int16", zero_point: int = 0) -> tuple:
        shape = tuple(int(s) for s in shape)
        return self.b.tensor(self.name(stem), shape, dtype, scale=scale, zero_point=zero_point), shape, scale, dtype

    def model_input(self, shape: Sequence[int], scale: float, dtype: str = "int16", zero_point: int = 0) -> tuple:
        x = self.act("input", shape, scale, dtype, zero_point)
        self.inputs.append(x[0])
        return x

    def build(self, *outputs: tuple) -> bytes:
        self.b.inputs(self.inputs)
        self.b.outputs([o[0] for o in outputs])
        return self.b.build()


def weighted(net: Net16, d: Draw, x: tuple, op: str, weight_shape: Sequence[int], axis: int, reduction: int,
             out_shape: Sequence[int], bias_dtypes: Sequence[str], operands=lambda x, w, b: [x, w, b],
             bias_optional: bool = True, fused: Sequence[str] = FUSED, gain: float | None = None,
             per_channel: bool | None = None, extreme: bool | None = None, **options) -> tuple:
    """One CONV_2D / DEPTHWISE_CONV_2D / FULLY_CONNECTED / TRANSPOSE_CONV layer, 16x8; the output scale 2^gain
    (default random in [-2, 1]) times the accumulator's spread over int16's; FULLY_CONNECTED's weights per channel
    or per tensor as `per_channel` says (default random); weights of ±127 only (`extreme`, default now and then)."""
    channels = weight_shape[axis]
    if per_channel is None:
        per_channel = op != "FULLY_CONNECTED" or d.bool()
    w_scales = 2.0 ** np.array([d.float(-9.0, -5.0) for _ in range(channels if per_channel else 1)])
    weights = d.rng.integers(-127, 128, size=tuple(weight_shape)).astype(np.int8)
    if d.int(0, 5) == 0 if extreme is None else extreme:   # weights whose sums may need the int64 accumulator
        weights = np.where(d.rng.random(weights.shape) < 0.5, -127, 127).astype(np.int8)
    w = net.b.const(net.name("w"), weights, scale=w_scales, zero_point=np.zeros(len(w_scales), np.int64), axis=axis)
    acc_std = INT16_STD * WEIGHT_STD * np.sqrt(reduction)
    bias_dtype = d.choice([*bias_dtypes, "none"] if bias_optional else bias_dtypes)
    bias = None
    if bias_dtype != "none":
        limit = {"int16": 32767, "int32": int(acc_std), "int64": int(acc_std) * 4}[bias_dtype]
        values = d.rng.integers(-limit, limit + 1, size=channels).astype(bias_dtype)
        bias_scales = np.float32(x[2]) * w_scales.astype(np.float32)
        bias = net.b.const(net.name("bias"), values, scale=bias_scales, zero_point=np.zeros(len(bias_scales), np.int64))
    elif "int32" in bias_dtypes and d.bool():
        options["quantized_bias_type"] = schema.TensorType.INT32   # no bias, but the int32 accumulator
    gain = d.float(-2.0, 1.0) if gain is None else gain
    y = net.act(op.lower(), out_shape, acc_std * x[2] * float(w_scales.max()) * 2.0 ** gain / 8192.0)
    net.b.op(op, operands(x[0], w, bias), [y[0]], fused_activation_function=d.choice(fused), **options)
    return y


def _spatial(d: Draw, x: tuple) -> dict:
    (kh, sh, dh), (kw, sw, dw) = _window(d, x[1][1]), _window(d, x[1][2])
    padding = d.choice(("SAME", "VALID"))
    return dict(kernel=(kh, kw), out=(_padded_size(padding, x[1][1], kh, sh, dh), _padded_size(padding, x[1][2], kw, sw, dw)),
                options=dict(padding=padding, stride_h=sh, stride_w=sw, dilation_h_factor=dh, dilation_w_factor=dw))


def conv_2d(net: Net16, d: Draw, x: tuple) -> tuple:
    s = _spatial(d, x)
    cin, cout = x[1][3], d.int(1, 8)
    return weighted(net, d, x, "CONV_2D", (cout, *s["kernel"], cin), 0, s["kernel"][0] * s["kernel"][1] * cin,
                    (x[1][0], *s["out"], cout), ("int64", "int32"), **s["options"])


def depthwise_conv_2d(net: Net16, d: Draw, x: tuple) -> tuple:
    s = _spatial(d, x)
    multiplier = d.int(1, 8)   # 1, 2, multiples of 4 and padded ones: mtk_depthwise_s16's lane modes
    cout = x[1][3] * multiplier
    return weighted(net, d, x, "DEPTHWISE_CONV_2D", (1, *s["kernel"], cout), 3, s["kernel"][0] * s["kernel"][1],
                    (x[1][0], *s["out"], cout), ("int64",), depth_multiplier=multiplier, bias_optional=False,
                    **s["options"])   # TFLM segfaults without a bias


def fully_connected(net: Net16, d: Draw, x: tuple, fused: Sequence[str] = FUSED, units: int | None = None) -> tuple:
    depth = x[1][-1]
    rows = int(np.prod(x[1][:-1]))
    units = units or d.int(1, 12)
    return weighted(net, d, x, "FULLY_CONNECTED", (units, depth), 0, depth, (rows, units), ("int64", "int32"),
                    fused=fused)


def transpose_conv(net: Net16, d: Draw, x: tuple, cout: int | None = None, stride: tuple | None = None,
                   kernel: tuple | None = None, padding: str | None = None, fused: Sequence[str] = FUSED,
                   extreme: bool | None = None) -> tuple:
    """Output size as TensorFlow's conv2d_transpose makes it: H·stride (SAME), (H−1)·stride + filter (VALID)."""
    kh, kw = kernel or (d.int(1, 4), d.int(1, 4))
    sh, sw = stride or (d.int(1, 3), d.int(1, 3))
    padding = padding or d.choice(("SAME", "VALID"))
    out_hw = [size * s if padding == "SAME" else (size - 1) * s + k for size, s, k in zip(x[1][1:3], (sh, sw), (kh, kw))]
    cin, cout = x[1][3], cout or d.int(1, 8)
    out_shape = (x[1][0], *out_hw, cout)
    shape = net.b.const(net.name("output_shape"), np.array(out_shape, np.int32))
    taps = -(-kh // sh) * -(-kw // sw) * cin
    return weighted(net, d, x, "TRANSPOSE_CONV", (cout, kh, kw, cin), 0, taps, out_shape, ("int64", "int16"),
                    operands=lambda x, w, b: [shape, w, x] + ([b] if b is not None else []),
                    padding=padding, stride_h=sh, stride_w=sw, fused=fused, extreme=extreme)


def binary(op: str, other: tuple | None = None, zero_points: bool = True, fused: Sequence[str] = FUSED):
    """ADD or SUB of `x` and another int16 tensor (a model input or `other`), broadcasting now and then; the
    new input and the output with a zero point now and then (`zero_points`: TFLM's ADD/SUB read them)."""
    def layer(net: Net16, d: Draw, x: tuple) -> tuple:
        if other is None:
            shape = [1 if d.int(0, 3) == 0 else s for s in x[1]][d.int(0, len(x[1]) - 1):]
            zero_point = d.int(-2000, 2000) if zero_points and d.bool() else 0
            second = net.model_input(shape, x[2] * 2.0 ** d.float(-2.0, 2.0), zero_point=zero_point)
        else:
            second = other
        first, second = (x, second) if d.bool() else (second, x)
        scale = max(x[2], second[2]) * 2.0 ** d.float(-1.0, 1.5)
        y = net.act(op.lower(), np.broadcast_shapes(first[1], second[1]), scale,
                    zero_point=d.int(-2000, 2000) if zero_points and d.bool() else 0)
        net.b.op(op, [first[0], second[0]], [y[0]], fused_activation_function=d.choice(fused))
        return y
    return layer


def image_shape(d: Draw) -> tuple[int, ...]:
    return (1, d.int(1, 9), d.int(1, 9), d.int(1, 6))


FAMILIES = {
    "CONV_2D": (image_shape, (conv_2d,)),
    "DEPTHWISE_CONV_2D": (image_shape, (depthwise_conv_2d,)),
    "FULLY_CONNECTED": (lambda d: tuple(d.int(1, 5) for _ in range(d.int(1, 3))) + (d.int(1, 40),), (fully_connected,)),
    "TRANSPOSE_CONV": (lambda d: (1, d.int(1, 6), d.int(1, 6), d.int(1, 6)), (transpose_conv,)),
    "ADD": (lambda d: tuple(d.int(1, 6) for _ in range(d.int(1, 4))), (binary("ADD"),)),
    "SUB": (lambda d: tuple(d.int(1, 6) for _ in range(d.int(1, 4))), (binary("SUB"),)),
}


def generate(family: str, d: Draw) -> bytes:
    shape, layers = FAMILIES[family]
    net = Net16(f"mtk modelgen16x8 {family}")
    x = net.model_input(shape(d), 2.0 ** d.float(-14.0, -6.0))
    for layer in layers:
        x = layer(net, d, x)
    return net.build(x)


strategies = {name: st.composite(lambda draw, name=name: generate(name, HypothesisDraw(draw)))() for name in FAMILIES}


def encoder_decoder(seed: int = 0, size: int = 8, channels: int = 4) -> bytes:
    """A 16x8 denoiser-like encoder-decoder: conv down twice (stride 2), a depthwise bottleneck, TRANSPOSE_CONV up
    twice with skip ADDs (from the first encoder layer, from the input), a 1x1 conv head."""
    d = Draw(np.random.default_rng(seed))
    net = Net16("mtk int16 encoder-decoder")
    x = net.model_input((1, size, size, 1), 2.0 ** -12)

    def down(t, cout):
        return _fixed(net, d, t, "CONV_2D", cout, (3, 3), 2)

    e1 = down(x, channels)                        # size/2
    e2 = down(e1, 2 * channels)                   # size/4
    mid = _fixed(net, d, e2, "DEPTHWISE_CONV_2D", 2 * channels, (3, 3), 1)
    u1 = transpose_conv(net, d, mid, cout=channels, stride=(2, 2), kernel=(3, 3), padding="SAME", fused=REAL)
    s1 = binary("ADD", other=e1, zero_points=False, fused=REAL)(net, d, u1)
    u2 = transpose_conv(net, d, s1, cout=channels, stride=(2, 2), kernel=(3, 3), padding="SAME", fused=REAL)
    s2 = binary("ADD", other=x, zero_points=False, fused=REAL)(net, d, u2)   # the input broadcast over channels
    head = _fixed(net, d, s2, "CONV_2D", 1, (1, 1), 1)
    return net.build(head)


def _fixed(net: Net16, d: Draw, x: tuple, op: str, cout: int, kernel: tuple[int, int], stride: int) -> tuple:
    """A SAME conv/depthwise layer of a given size (encoder_decoder, mixed_int8_int16)."""
    out = (-(-x[1][1] // stride), -(-x[1][2] // stride))
    options = dict(padding="SAME", stride_h=stride, stride_w=stride, dilation_h_factor=1, dilation_w_factor=1)
    if op == "DEPTHWISE_CONV_2D":
        return weighted(net, d, x, op, (1, *kernel, cout), 3, kernel[0] * kernel[1], (1, *out, cout), ("int64",),
                        depth_multiplier=cout // x[1][3], bias_optional=False, fused=REAL, **options)
    return weighted(net, d, x, op, (cout, *kernel, x[1][3]), 0, kernel[0] * kernel[1] * x[1][3], (1, *out, cout),
                    ("int64",), fused=REAL, **options)


def depthwise_chain(seed: int = 0) -> bytes:
    """DEPTHWISE_CONV_2D layers of depth multipliers 1, 2, 3 and 4 (each of mtk_depthwise_s16's lane modes, a padded
    multiplier, an odd channel count), with strides, a dilation, both paddings and non-square kernels; the third
    layer's requantization shifts right by more than 32. Every layer's output is a model output."""
    d = Draw(np.random.default_rng(seed))
    net = Net16("mtk 16x8 depthwise chain")
    x = net.model_input((1, 11, 10, 3), 2.0 ** -11)
    outputs = []
    for multiplier, kernel, stride, dilation, padding, gain in (
            (1, (3, 3), 1, 1, "SAME", None), (2, (3, 2), 2, 1, "VALID", None), (3, (2, 3), 1, 2, "SAME", 8.5),
            (4, (3, 3), 1, 1, "SAME", -4.0)):
        out = [_padded_size(padding, size, k, stride, dilation) for size, k in zip(x[1][1:3], kernel)]
        cout = x[1][3] * multiplier
        x = weighted(net, d, x, "DEPTHWISE_CONV_2D", (1, *kernel, cout), 3, kernel[0] * kernel[1], (1, *out, cout),
                     ("int64",), depth_multiplier=multiplier, bias_optional=False, fused=REAL, gain=gain,
                     padding=padding, stride_h=stride, stride_w=stride, dilation_h_factor=dilation, dilation_w_factor=dilation)
        outputs.append(x)
    return net.build(*outputs)   # every layer checked


def conv_chain(seed: int = 0) -> bytes:
    """CONV_2D layers on the 16x8 GEMM's im2col rows and micro-kernels (c/mtk_dot_s16.h): 3x3 SAME over 7 channels
    (depth 63: whole vectors and a tail of 7; window rows inside the image, outside it and cut by its sides), 2x3
    dilated (taps one by one, depth 30), 1x1 (the input's own rows, depth 5: a tail alone), 4x2 stride 2 VALID
    (depth 24: whole vectors only); odd and even channel counts. Every layer's output is a model output."""
    d = Draw(np.random.default_rng(seed))
    net = Net16("mtk 16x8 conv chain")
    x = net.model_input((1, 7, 9, 7), 2.0 ** -11)
    outputs = []
    for cout, kernel, stride, dilation, padding in (
            (5, (3, 3), 1, 1, "SAME"), (8, (2, 3), 1, 2, "SAME"), (3, (1, 1), 1, 1, "VALID"),
            (6, (4, 2), 2, 1, "VALID")):
        out = [_padded_size(padding, size, k, stride, dilation) for size, k in zip(x[1][1:3], kernel)]
        depth = kernel[0] * kernel[1] * x[1][3]
        x = weighted(net, d, x, "CONV_2D", (cout, *kernel, x[1][3]), 0, depth, (1, *out, cout), ("int64", "int32"),
                     fused=REAL, padding=padding, stride_h=stride, stride_w=stride, dilation_h_factor=dilation,
                     dilation_w_factor=dilation)
        outputs.append(x)
    return net.build(*outputs)


def wide_sums(seed: int = 0) -> bytes:
    """Layers whose sums need the int64 accumulator (weights ±127 over 517 values or more) on the 16x8 GEMM's
    chunks (int16x8.chunk_len: 512 values): FULLY_CONNECTED of 3 rows of 3100 values (6 chunks of 512 and 28)
    into 5 channels, CONV_2D 5x5 SAME over 48 channels (1200 values: 512, 512 and 176) into 3; TRANSPOSE_CONV 4x4
    stride 2 over 160 channels (phases of 640 values: 512 and 128) and over 100 (phases of 400 values that fit
    int32 though the whole filter's sums do not) into 3."""
    d = Draw(np.random.default_rng(seed))
    net = Net16("mtk 16x8 wide sums")
    fc = weighted(net, d, net.model_input((3, 3100), 2.0 ** -12), "FULLY_CONNECTED", (5, 3100), 0, 3100, (3, 5),
                  ("int64",), bias_optional=False, fused=REAL, extreme=True)
    x = net.model_input((1, 5, 6, 48), 2.0 ** -12)
    conv = weighted(net, d, x, "CONV_2D", (3, 5, 5, 48), 0, 1200, (1, 5, 6, 3), ("int64",), bias_optional=False,
                    fused=REAL, extreme=True, padding="SAME", stride_h=1, stride_w=1, dilation_h_factor=1,
                    dilation_w_factor=1)
    ups = [transpose_conv(net, d, net.model_input((1, 3, 3, cin), 2.0 ** -12), 3, (2, 2), (4, 4), "SAME", REAL, True)
           for cin in (160, 100)]
    return net.build(fc, conv, *ups)


def mixed_int8_int16(seed: int = 0) -> bytes:
    """int8 input → QUANTIZE to int16 → 16x8 CONV_2D, ADD with the int16 input, FULLY_CONNECTED → QUANTIZE to int8."""
    d = Draw(np.random.default_rng(seed))
    net = Net16("mtk mixed int8/int16")
    x8 = net.model_input((1, 6, 6, 2), 0.05, dtype="int8", zero_point=-3)
    x16 = net.act("wide", x8[1], 0.05 / 200)
    net.b.op("QUANTIZE", [x8[0]], [x16[0]])
    c = _fixed(net, d, x16, "CONV_2D", 2, (3, 3), 1)
    s = binary("ADD", other=x16, zero_points=False, fused=REAL)(net, d, c)
    f = fully_connected(net, d, s, fused=REAL)
    y8 = net.act("narrow", f[1], f[2] * 200, dtype="int8", zero_point=4)
    net.b.op("QUANTIZE", [f[0]], [y8[0]])
    return net.build(y8)


def dot_tails(seed: int = 0) -> bytes:
    """FULLY_CONNECTED layers on the 16x8 micro-kernels' loop tails (c/mtk_dot_s16.h): 3 rows of 23 values (2-row
    kernel: 5 whole quads, a pair, an odd value; Helium: 2 vectors and 7 values; the last row alone) and 1 row of 29
    (1-row kernel: 3 octets, 2 pairs, an odd value), 2 rows of 16 (whole quads; Helium: whole vectors) and 1 row of
    5 (a pair and an odd value; Helium: a tail alone), each into 5 channels (a last block of one)."""
    d = Draw(np.random.default_rng(seed))
    net = Net16("mtk 16x8 micro-kernel tails")
    heads = [fully_connected(net, d, net.model_input(shape, 2.0 ** -12), REAL, units=5) for shape in ((3, 23), (1, 29), (2, 16), (1, 5))]
    return net.build(*heads)

