"""Small random int8 TFLite models, one family per op, valid under TFLite's and TFLM's quantization rules.

    strategies["CONV_2D"]          # hypothesis strategy of .tflite bytes
    example_models(seed)           # {family: .tflite bytes}, one fixed model per family
    random_inputs(model, seed)     # inputs for a model: one array per model input

Every family is a sequence of layers. A layer takes the tensor so far and a `Draw` (where its
random choices come from: hypothesis, or a seeded numpy generator) and appends one op with
parameters TFLite allows: int8 weights symmetric (zero point 0, per-channel scales), int32 bias
with scale input_scale * weight_scale, softmax output 1/256 and -128, logistic 1/256 and -128,
tanh 1/128 and 0, pooling/reshape/pad/slice/transpose/concatenation/RELU6 outputs quantized like
their inputs (TFLM copies or clamps the bytes), concatenation without fused activation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence, TypeVar

import numpy as np
from ai_edge_litert import schema_py_generated as schema
from hypothesis import strategies as st

from mtk.tflite_builder import ModelBuilder

T = TypeVar("T")
FUSED_ACTIVATIONS = ("NONE", "RELU", "RELU6", "RELU_N1_TO_1")
_FLOAT_INPUT_RANGE = 8.0


class Draw:
    """Random choices for a generator, from a seeded numpy generator (hypothesis: `HypothesisDraw`)."""

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng          # bulk data (weights, biases) always comes from a numpy generator

    def int(self, low: int, high: int) -> int:
        """An integer in [low, high]."""
        return int(self.rng.integers(low, high + 1))

    def float(self, low: float, high: float) -> float:
        return float(self.rng.uniform(low, high))

    def choice(self, options: Sequence[T]) -> T:
        return options[self.int(0, len(options) - 1)]

    def bool(self) -> bool:
        return self.int(0, 1) == 1


class HypothesisDraw(Draw):
    """Choices drawn through hypothesis (so they shrink); bulk data from a drawn seed."""

    def __init__(self, draw: Callable) -> None:
        super().__init__(np.random.default_rng(draw(st.integers(0, 2**32 - 1))))
        self._draw = draw

    def int(self, low: int, high: int) -> int:
        return self._draw(st.integers(low, high))

    def float(self, low: float, high: float) -> float:
        return self._draw(st.floats(low, high, allow_nan=False, allow_infinity=False))

    def choice(self, options: Sequence[T]) -> T:
        return self._draw(st.sampled_from(options))


@dataclass(frozen=True)
class Quant:
    scale: float
    zero_point: int


@dataclass(frozen=True)
class Act:
    """A tensor of the model being built: index, shape, quantization (None: float32)."""

    index: int
    shape: tuple[int, ...]
    quant: Quant | None

    @property
    def dtype(self) -> str:
        return "float32" if self.quant is None else "int8"


class Net:
    """A ModelBuilder that names tensors itself and tracks the model's inputs."""

    def __init__(self, description: str) -> None:
        self.builder = ModelBuilder(description=description)
        self.inputs: list[int] = []
        self.side_outputs: list[int] = []   # model outputs besides the last layer's (SPLIT's other parts)
        self._names: dict[str, int] = {}

    def name(self, stem: str) -> str:
        self._names[stem] = self._names.get(stem, 0) + 1
        return stem if self._names[stem] == 1 else f"{stem}_{self._names[stem]}"

    def tensor(self, stem: str, shape: Sequence[int], quant: Quant | None) -> Act:
        shape = tuple(int(s) for s in shape)
        if quant is None:
            index = self.builder.tensor(self.name(stem), shape, "float32")
        else:
            index = self.builder.tensor(self.name(stem), shape, "int8", scale=quant.scale, zero_point=quant.zero_point)
        return Act(index, shape, quant)

    def model_input(self, shape: Sequence[int], quant: Quant | None) -> Act:
        act = self.tensor("input", shape, quant)
        self.inputs.append(act.index)
        return act

    def const_int8(self, data: np.ndarray, quant: Quant) -> Act:
        index = self.builder.const(self.name("const"), data.astype(np.int8), scale=quant.scale,
                                   zero_point=quant.zero_point)
        return Act(index, data.shape, quant)

    def int32(self, stem: str, values: Sequence[int] | np.ndarray) -> int:
        return self.builder.const(self.name(stem), np.asarray(values, dtype=np.int32))

    def build(self, output: Act) -> bytes:
        self.builder.inputs(self.inputs)
        self.builder.outputs([output.index, *self.side_outputs])
        return self.builder.build()


# ---- quantization parameters ----------------------------------------------------------------

def activation_quant(d: Draw, log2_scale: tuple[float, float] = (-8.0, 0.0)) -> Quant:
    return Quant(scale=2.0 ** d.float(*log2_scale), zero_point=d.int(-128, 127))


def rescaled(d: Draw, q: Quant, low: float = -1.5, high: float = 1.5) -> Quant:
    """A new scale 2**[low, high] times `q`'s, the zero point near where `q` puts real 0."""
    scale = q.scale * 2.0 ** d.float(low, high)
    return Quant(scale, int(np.clip(round(q.zero_point * q.scale / scale) + d.int(-24, 24), -128, 127)))


def accumulator_quant(d: Draw, real_std: float) -> Quant:
    """An output quantization for a sum of products whose real value has std `real_std`:
    most outputs in range, some saturating."""
    return Quant(scale=real_std * 2.0 ** d.float(-1.0, 2.0) / 64.0, zero_point=d.int(-64, 63))


def int8_data(d: Draw, shape: Sequence[int], symmetric: bool = False) -> np.ndarray:
    return d.rng.integers(-127 if symmetric else -128, 128, size=tuple(shape)).astype(np.int8)


_INT8_STD = 74.0   # std of (q - zero_point) for q uniform in int8 and a zero point inside the range


def weighted_sum(net: Net, d: Draw, x: Act, op: str, weight_shape: Sequence[int], channel_axis: int,
                 reduction: int, out_shape: Sequence[int], per_channel: bool = True, bias_optional: bool = True,
                 operands: Callable[[int, int, int | None], list] = lambda x, w, b: [x, w, b],
                 activation: str | None = None, **options) -> Act:
    """CONV_2D / DEPTHWISE_CONV_2D / FULLY_CONNECTED: symmetric int8 weights, int32 bias, fused activation
    (`activation`, or a random one)."""
    channels = weight_shape[channel_axis]
    weight_scales = 2.0 ** np.array([d.float(-9.0, -5.0) for _ in range(channels if per_channel else 1)])
    weights = int8_data(d, weight_shape, symmetric=True)
    bias_scales = np.float32(x.quant.scale) * weight_scales.astype(np.float32)
    accumulator_std = _INT8_STD * _INT8_STD * np.sqrt(reduction)
    w = net.builder.const(net.name("weights"), weights, scale=weight_scales, zero_point=np.zeros(len(weight_scales)),
                          axis=channel_axis)
    bias = None
    if not bias_optional or d.int(0, 3) > 0:   # omit an optional bias now and then
        values = d.rng.integers(-accumulator_std, accumulator_std + 1, size=channels).astype(np.int32)
        bias = net.builder.const(net.name("bias"), values, scale=bias_scales, zero_point=np.zeros(len(bias_scales)))
    y = net.tensor(op.lower(), out_shape, accumulator_quant(d, accumulator_std * x.quant.scale * weight_scales.max()))
    net.builder.op(op, operands(x.index, w, bias), [y.index],
                   fused_activation_function=activation or d.choice(FUSED_ACTIVATIONS), **options)
    return y


Layer = Callable[[Net, Draw, Act], Act]


# ---- layers: each appends one op after `x` --------------------------------------------------

def _window(d: Draw, size: int, max_kernel: int = 4, max_dilation: int = 3) -> tuple[int, int, int]:
    """(kernel, stride, dilation) along one axis of length `size`, for SAME or VALID padding."""
    dilation = d.int(1, max_dilation)
    kernel = d.int(1, max(1, min(max_kernel, (size - 1) // dilation + 1)))
    return kernel, d.int(1, 3), dilation


def _padded_size(padding: str, size: int, kernel: int, stride: int, dilation: int) -> int:
    effective = (kernel - 1) * dilation + 1
    return -(-size // stride) if padding == "SAME" else (size - effective) // stride + 1


def _spatial(d: Draw, x: Act, max_dilation: int, max_kernel: tuple[int, int] = (4, 4)) -> dict:
    """Kernel, stride, dilation and padding for a 2-D window over NHWC `x`; 'out' is the output H, W."""
    (kh, sh, dh), (kw, sw, dw) = _window(d, x.shape[1], max_kernel[0], max_dilation), \
        _window(d, x.shape[2], max_kernel[1], max_dilation)
    padding = d.choice(("SAME", "VALID"))
    out = (_padded_size(padding, x.shape[1], kh, sh, dh), _padded_size(padding, x.shape[2], kw, sw, dw))
    return {"kernel": (kh, kw), "stride": (sh, sw), "dilation": (dh, dw), "padding": padding, "out": out}


def conv_2d(net: Net, d: Draw, x: Act, max_kernel: tuple[int, int] = (4, 4)) -> Act:
    w = _spatial(d, x, max_dilation=3, max_kernel=max_kernel)
    cin, cout = x.shape[3], d.int(1, 8)
    return weighted_sum(net, d, x, "CONV_2D", (cout, *w["kernel"], cin), 0, w["kernel"][0] * w["kernel"][1] * cin,
                        (1, *w["out"], cout), padding=w["padding"], stride_h=w["stride"][0], stride_w=w["stride"][1],
                        dilation_h_factor=w["dilation"][0], dilation_w_factor=w["dilation"][1])


def depthwise_conv_2d(net: Net, d: Draw, x: Act, max_multiplier: int = 3, max_kernel: tuple[int, int] = (4, 4)) -> Act:
    w = _spatial(d, x, max_dilation=3, max_kernel=max_kernel)
    multiplier = d.int(1, max_multiplier)
    cout = x.shape[3] * multiplier
    return weighted_sum(net, d, x, "DEPTHWISE_CONV_2D", (1, *w["kernel"], cout), 3, w["kernel"][0] * w["kernel"][1],
                        (1, *w["out"], cout), padding=w["padding"], stride_h=w["stride"][0], stride_w=w["stride"][1],
                        dilation_h_factor=w["dilation"][0], dilation_w_factor=w["dilation"][1],
                        depth_multiplier=multiplier, bias_optional=False)   # TFLM segfaults without


def transpose_conv(net: Net, d: Draw, x: Act) -> Act:
    """Output size as TensorFlow's conv2d_transpose makes it: H·stride (SAME), (H−1)·stride + filter (VALID)."""
    (kh, kw), (sh, sw) = (d.int(1, 4), d.int(1, 4)), (d.int(1, 3), d.int(1, 3))
    padding = d.choice(("SAME", "VALID"))
    out_hw = [size * s if padding == "SAME" else (size - 1) * s + k
              for size, s, k in zip(x.shape[1:3], (sh, sw), (kh, kw))]
    cin, cout = x.shape[3], d.int(1, 8)
    out_shape = (x.shape[0], *out_hw, cout)
    taps = -(-kh // sh) * -(-kw // sw) * cin
    shape = net.int32("output_shape", out_shape)
    return weighted_sum(net, d, x, "TRANSPOSE_CONV", (cout, kh, kw, cin), 0, taps, out_shape,
                        operands=lambda x, w, b: [shape, w, x] + ([b] if b is not None else []),
                        padding=padding, stride_h=sh, stride_w=sw)


def first_layer_conv_2d(net: Net, d: Draw, x: Act) -> Act:
    """A conv over 1-3 input channels (image and spectrogram first layers), kernels up to 10×8."""
    return conv_2d(net, d, x, max_kernel=(10, 8))


def any_depthwise_conv_2d(net: Net, d: Draw, x: Act) -> Act:
    """Depthwise with any multiplier up to 8 and kernels up to 10×8 (1→N included)."""
    return depthwise_conv_2d(net, d, x, max_multiplier=8, max_kernel=(10, 8))


def batch_matmul(net: Net, d: Draw, x: Act) -> Act:
    """x (at least 2-D) times a second operand (a model input or a constant) with broadcast batch
    dimensions; either side maybe read transposed (adj_x, adj_y)."""
    adj_x, adj_y = d.bool(), d.bool()
    rows, depth = x.shape[-2:][::-1] if adj_x else x.shape[-2:]
    cols = d.int(1, 6)
    batch = [1 if d.int(0, 2) == 0 else s for s in x.shape[:-2]]
    batch = batch[d.int(0, len(batch)):]   # maybe fewer batch dimensions
    other_shape = (*batch, *((cols, depth) if adj_y else (depth, cols)))
    other = _operand(net, d, other_shape, Quant(2.0 ** d.float(-8.0, -4.0), d.int(-128, 127)))
    out_quant = accumulator_quant(d, x.quant.scale * other.quant.scale * _INT8_STD * _INT8_STD * np.sqrt(depth))
    y = net.tensor("batch_matmul", (*np.broadcast_shapes(x.shape[:-2], tuple(batch)), rows, cols), out_quant)
    net.builder.op("BATCH_MATMUL", [x.index, other.index], [y.index], adj_x=adj_x, adj_y=adj_y)
    return y


def svdf(net: Net, d: Draw, x: Act, rank: int | None = None, units: int | None = None, memory: int | None = None,
         wide: bool | None = None, gain: float = 1.0) -> Act:
    """SVDF over a [batch, features] input: int8 feature weights, int16 (`wide`, or int8) time weights and
    state (a variable tensor), bias scaled by state × time weight scales, rank 1 or 2 (what is not given
    is drawn: up to 6 units, a memory of up to 10); the output scale a typical one over `gain`."""
    batch, n_input = x.shape
    rank, units, memory = rank or d.int(1, 2), units or d.int(1, 6), memory or d.int(1, 10)
    filters = rank * units
    wide = d.int(0, 3) > 0 if wide is None else wide
    state_dtype = "int16" if wide else "int8"
    feature_scale = 2.0 ** d.float(-9.0, -6.0)
    feature_std = x.quant.scale * feature_scale * _INT8_STD * _INT8_STD * np.sqrt(n_input)
    state_scale = float(np.float32(feature_std * 2.0 ** d.float(-1.0, 1.0) / (4096.0 if wide else 32.0)))
    state_zp = 0 if wide else d.int(-20, 20)
    time_scale = float(np.float32(2.0 ** d.float(-14.0, -11.0) if wide else 2.0 ** d.float(-8.0, -6.0)))
    w_feature = net.builder.const(net.name("feature_weights"), int8_data(d, (filters, n_input), symmetric=True),
                                  scale=feature_scale, zero_point=0)
    time_max = 32767 if wide else 127
    w_time = net.builder.const(net.name("time_weights"),
                               d.rng.integers(-time_max, time_max + 1, size=(filters, memory)).astype(state_dtype),
                               scale=time_scale, zero_point=0)
    bias_scale = float(np.float32(state_scale) * np.float32(time_scale))
    bias = net.builder.const(net.name("bias"), d.rng.integers(-5000, 5000, size=units).astype(np.int32),
                             scale=bias_scale, zero_point=0)
    state = net.builder.tensor(net.name("state"), (batch, filters * memory), state_dtype, scale=state_scale,
                               zero_point=state_zp, variable=True)
    typical = bias_scale * (12000.0 if wide else 60.0) * np.sqrt(rank * memory) * time_max / 2
    y = net.tensor("svdf", (batch, units), Quant(typical * 2.0 ** d.float(-1.0, 1.0) / 64.0 / gain, d.int(-20, 20)))
    net.builder.op("SVDF", [x.index, w_feature, w_time, bias, state], [y.index], rank=rank)
    return y


LSTM_GATES = ("input", "forget", "cell", "output")
LSTM_VARIANTS = {"peephole": (9, 10, 11), "projection": (16, 17), "layer_norm": (20, 21, 22, 23), "cifg": (1, 5, 12)}


def lstm(net: Net, d: Draw, x: Act, units: int | None = None, time_major: bool | None = None,
         variant: str = "", activations: str = "int8") -> Act:
    """UNIDIRECTIONAL_SEQUENCE_LSTM over [batch, time, features] (or time-major [time, batch, features]),
    quantized as the TFLite converter writes it (TFLM's example models mnist_lstm, micro_speech_lstm):
    int8 symmetric per-tensor weights per gate, int32 biases scaled input × weight, an int8 hidden state
    quantized like the output, an int16 cell state with a power-of-two scale (now and then not: TFLM
    rounds its log2), both variable tensors; 24 inputs, the variants' ones omitted (-1); the converter's
    five intermediates (four empty float32 tensors and the effective hidden scale). `variant` adds the
    tensors of an LSTM variant TFLM refuses: "peephole", "projection", "layer_norm", or drops the input
    gate ("cifg"). `activations` "int16": the 16x8 LSTM (x an int16 tensor with zero point 0; hidden state and
    output int16, zero point 0; int64 biases)."""
    wide = activations == "int16"
    time_major = d.bool() if time_major is None else time_major
    steps, batch, depth = x.shape if time_major else (x.shape[1], x.shape[0], x.shape[2])
    units = units or d.int(1, 12)
    hidden = Quant(2.0 ** d.float(-15.5, -14.5), 0) if wide else Quant(2.0 ** d.float(-8.5, -6.5), d.int(-10, 10))
    x_std, h_std = (18918.0, 10000.0) if wide else (_INT8_STD, 40.0)   # of x and h around their zero points
    cell_scale = 2.0 ** (-d.int(9, 15) if d.int(0, 3) else d.float(-15.0, -9.0))

    def weights(stem: str, rows: int, cols: int, in_scale: float, in_std: float) -> tuple[int, float]:
        scale = float(np.float32(2.0 ** d.float(-1.5, 1.5) / (in_scale * in_std * _INT8_STD * np.sqrt(cols))))
        return net.builder.const(net.name(stem), int8_data(d, (rows, cols), symmetric=True), scale=scale,
                                 zero_point=0), scale

    input_weights = [weights(f"{g}_input_weights", units, depth, x.quant.scale, x_std) for g in LSTM_GATES]
    recurrent = [weights(f"{g}_recurrent_weights", units, units, hidden.scale, h_std)[0] for g in LSTM_GATES]
    biases = []
    for gate, (_, w_scale) in zip(LSTM_GATES, input_weights):
        bias_scale = float(np.float32(x.quant.scale) * np.float32(w_scale))
        values = np.clip(np.round(d.rng.uniform(-1.0, 1.0, units) / bias_scale), -2**31, 2**31 - 1)
        biases.append(net.builder.const(net.name(f"{gate}_gate_bias"), values.astype(np.int64 if wide else np.int32),
                                        scale=bias_scale, zero_point=0))
    h = net.builder.tensor(net.name("hidden_state"), (batch, units), activations, scale=hidden.scale,
                           zero_point=hidden.zero_point, variable=True)
    c = net.builder.tensor(net.name("cell_state"), (batch, units), "int16", scale=cell_scale, zero_point=0,
                           variable=True)
    intermediates = [net.builder.tensor(net.name(f"input_to_{g}_intermediate"), (0,), "float32") for g in LSTM_GATES]
    intermediates.append(net.builder.tensor(net.name("effective_hidden_scale_intermediate"), (0,), activations,
                                            scale=hidden.scale, zero_point=hidden.zero_point))
    out_shape = (steps, batch, units) if time_major else (batch, steps, units)
    y = Act(net.builder.tensor(net.name("lstm"), out_shape, activations, scale=hidden.scale,
                               zero_point=hidden.zero_point), out_shape, hidden)
    inputs = [x.index, *(w for w, _ in input_weights), *recurrent, None, None, None, *biases, None, None, h, c,
              None, None, None, None]
    for position in LSTM_VARIANTS.get(variant, ()):
        inputs[position] = None if variant == "cifg" else net.builder.const(
            net.name(f"{variant}_{position}"), np.ones((units, units) if position == 16 else units,
                                                     np.int32 if position == 17 else np.int16),
            scale=1.0 / 1024, zero_point=0)
    net.builder.op("UNIDIRECTIONAL_SEQUENCE_LSTM", inputs, [y.index], intermediates=intermediates,
                   cell_clip=d.choice([0.0, 0.0, 10.0, float(np.float32(d.float(0.5, 4.0)))]), time_major=time_major)
    return y


def fully_connected(net: Net, d: Draw, x: Act) -> Act:
    depth, units = x.shape[-1], d.int(1, 12)
    keep_num_dims = len(x.shape) > 2 and d.bool()
    rows = x.shape[:-1] if keep_num_dims else (int(np.prod(x.shape[:-1])),)
    return weighted_sum(net, d, x, "FULLY_CONNECTED", (units, depth), 0, depth, (*rows, units),
                        per_channel=d.bool(), keep_num_dims=keep_num_dims)


def _pool(op: str) -> Callable[[Net, Draw, Act], Act]:
    def pool(net: Net, d: Draw, x: Act) -> Act:
        w = _spatial(d, x, max_dilation=1)
        y = net.tensor(op.lower(), (1, *w["out"], x.shape[3]), x.quant)
        net.builder.op(op, [x.index], [y.index], padding=w["padding"], stride_h=w["stride"][0],
                       stride_w=w["stride"][1], filter_height=w["kernel"][0], filter_width=w["kernel"][1],
                       fused_activation_function=d.choice(FUSED_ACTIVATIONS))
        return y
    return pool


def _operand(net: Net, d: Draw, shape: Sequence[int], quant: Quant) -> Act:
    """A second operand: another model input, or a constant."""
    return net.const_int8(int8_data(d, shape), quant) if d.bool() else net.model_input(shape, quant)


def _binary(op: str) -> Callable[[Net, Draw, Act], Act]:
    def binary(net: Net, d: Draw, x: Act) -> Act:
        broadcast = [1 if d.int(0, 3) == 0 else s for s in x.shape]     # some dims broadcast
        other_shape = tuple(broadcast[d.int(0, len(broadcast) - 1):])    # maybe fewer dims
        quant = Quant(x.quant.scale * 2.0 ** d.float(-2.0, 2.0), d.int(-128, 127))
        if op in ("MINIMUM", "MAXIMUM"):   # TFLM compares raw values: the converter quantizes all three alike
            quant = x.quant
        other = _operand(net, d, other_shape, quant)
        first, second = (x, other) if d.bool() else (other, x)
        if op == "PRELU":   # input first, then alpha
            first, second = x, other
        if op == "MUL":
            out_quant = accumulator_quant(d, x.quant.scale * quant.scale * _INT8_STD * _INT8_STD)
        elif op == "SQUARED_DIFFERENCE":   # non-negative: zero point low
            real = (_INT8_STD * max(x.quant.scale, quant.scale)) ** 2
            out_quant = Quant(real * 2.0 ** d.float(-1.0, 2.0) / 128.0, d.int(-128, -64))
        elif op == "PRELU":
            out_quant = rescaled(d, x.quant)
        elif op in ("MINIMUM", "MAXIMUM"):
            out_quant = x.quant
        else:
            out_quant = Quant(max(x.quant.scale, quant.scale) * 2.0 ** d.float(-1.0, 1.5), d.int(-64, 63))
        y = net.tensor(op.lower(), np.broadcast_shapes(x.shape, other_shape), out_quant)
        fused = {"fused_activation_function": d.choice(FUSED_ACTIVATIONS)} if op in ("ADD", "SUB", "MUL") else {}
        net.builder.op(op, [first.index, second.index], [y.index], **fused)
        return y
    return binary


def _factorize(d: Draw, total: int, rank: int) -> list[int]:
    """`total` split into `rank` random factors."""
    dims = [1] * rank
    n, p = total, 2
    while n > 1:
        while n % p == 0:
            dims[d.int(0, rank - 1)] *= p
            n //= p
        p += 1
    return dims


def reshape(net: Net, d: Draw, x: Act) -> Act:
    shape = _factorize(d, int(np.prod(x.shape)), d.int(1, 4))
    y = net.tensor("reshape", shape, x.quant)
    net.builder.op("RESHAPE", [x.index, net.int32("shape", shape)], [y.index], new_shape=shape)
    return y


def squeeze(net: Net, d: Draw, x: Act) -> Act:
    """squeeze_dims lists some of the size-1 axes, or is empty (all of them); one axis always stays."""
    rank = len(x.shape)
    ones = [i for i, s in enumerate(x.shape) if s == 1]
    explicit = d.bool()
    squeezed = [i for i in ones if d.bool()] or ones[:1] if explicit else ones
    if len(squeezed) == rank:
        squeezed, explicit = squeezed[1:], True
    dims = [i - rank if d.bool() else i for i in squeezed] if explicit else []
    y = net.tensor("squeeze", [s for i, s in enumerate(x.shape) if i not in squeezed], x.quant)
    net.builder.op("SQUEEZE", [x.index], [y.index], squeeze_dims=dims)
    return y


def expand_dims(net: Net, d: Draw, x: Act) -> Act:
    rank = len(x.shape)
    axis = d.int(-rank - 1, rank)
    position = axis if axis >= 0 else axis + rank + 1
    y = net.tensor("expand_dims", (*x.shape[:position], 1, *x.shape[position:]), x.quant)
    net.builder.op("EXPAND_DIMS", [x.index, net.int32("axis", [axis])], [y.index])
    return y


def _fixed_output(op: str, quant: Quant) -> Callable[[Net, Draw, Act], Act]:
    """Ops whose int8 output quantization TFLite fixes (the kernel assumes it)."""
    def fixed(net: Net, d: Draw, x: Act) -> Act:
        y = net.tensor(op.lower(), x.shape, quant)
        options = {"beta": d.choice((1.0, d.float(0.25, 2.0)))} if op == "SOFTMAX" else {}
        net.builder.op(op, [x.index], [y.index], **options)
        return y
    return fixed


def _elementwise(op: str, own_output_quant: bool = True) -> Callable[[Net, Draw, Act], Act]:
    """Element-wise int8 ops, the output quantized on its own or (TFLM's RELU6 ignores the output's) like the input."""
    def elementwise(net: Net, d: Draw, x: Act) -> Act:
        quant = rescaled(d, x.quant) if own_output_quant else x.quant
        y = net.tensor(op.lower(), x.shape, quant)
        options = {"alpha": d.float(0.0, 1.0)} if op == "LEAKY_RELU" else {}
        net.builder.op(op, [x.index], [y.index], **options)
        return y
    return elementwise


def quantize(net: Net, d: Draw, x: Act) -> Act:
    """float32 -> int8 (at a model's input), or int8 -> int8 with a new scale and zero point."""
    if x.quant is None:
        quant = Quant(_FLOAT_INPUT_RANGE * 2.0 ** d.float(-1.5, 1.0) / 128.0, d.int(-32, 32))
    else:
        quant = rescaled(d, x.quant)
    y = net.tensor("quantize", x.shape, quant)
    net.builder.op("QUANTIZE", [x.index], [y.index])
    return y


def dequantize(net: Net, d: Draw, x: Act) -> Act:
    y = net.tensor("dequantize", x.shape, None)
    net.builder.op("DEQUANTIZE", [x.index], [y.index])
    return y


def concatenation(net: Net, d: Draw, x: Act) -> Act:
    rank = len(x.shape)
    axis = d.int(-rank, rank - 1)
    position = axis % rank
    parts = [x]
    for _ in range(d.int(1, 3)):
        shape = list(x.shape)
        shape[position] = d.int(1, 4)
        parts.append(_operand(net, d, shape, x.quant))
    order = list(d.rng.permutation(len(parts)))
    shape = list(x.shape)
    shape[position] = sum(p.shape[position] for p in parts)
    y = net.tensor("concatenation", shape, x.quant)
    net.builder.op("CONCATENATION", [parts[i].index for i in order], [y.index], axis=axis)
    return y


def pad(net: Net, d: Draw, x: Act) -> Act:
    paddings = [[d.int(0, 3), d.int(0, 3)] for _ in x.shape]
    y = net.tensor("pad", [s + before + after for s, (before, after) in zip(x.shape, paddings)], x.quant)
    net.builder.op("PAD", [x.index, net.int32("paddings", paddings)], [y.index])
    return y


def _reduce(op: str) -> Layer:
    """MEAN, SUM (requantized), REDUCE_MAX (output quantized like the input) over some axes."""
    def reduce(net: Net, d: Draw, x: Act) -> Act:
        rank = len(x.shape)
        axes = sorted({d.int(0, rank - 1) for _ in range(d.int(1, rank))})
        keep_dims = d.bool() or len(axes) == rank
        shape = [1 if i in axes else s for i, s in enumerate(x.shape)] if keep_dims else \
            [s for i, s in enumerate(x.shape) if i not in axes]
        if op == "REDUCE_MAX":
            quant = x.quant
        else:
            quant = rescaled(d, x.quant, -1.5, 1.0)
            if op == "SUM":   # the sum of N values has N times the range
                count = int(np.prod([x.shape[a] for a in axes]))
                quant = Quant(quant.scale * count ** d.float(0.5, 1.0), quant.zero_point)
        y = net.tensor(op.lower(), shape, quant)
        encoded = [a - rank if d.bool() else a for a in axes]
        net.builder.op(op, [x.index, net.int32("axis", encoded)], [y.index], keep_dims=keep_dims)
        return y
    return reduce


def _arg(op: str) -> Layer:
    """ARG_MAX / ARG_MIN along one axis: an int32 output."""
    def arg(net: Net, d: Draw, x: Act) -> Act:
        rank = len(x.shape)
        axis = d.int(0, rank - 1)
        shape = x.shape[:axis] + x.shape[axis + 1:]
        index = net.builder.tensor(net.name(op.lower()), shape, "int32")
        net.builder.op(op, [x.index, net.int32("axis", [axis - rank if d.bool() else axis])], [index],
                       output_type="INT32")
        return Act(index, shape, None)
    return arg


def _slice_axis(d: Draw, size: int) -> tuple[int, int, int, bool, bool, slice]:
    """(begin, end, stride, begin_masked, end_masked, the python slice) giving a non-empty slice."""
    stride = d.choice((1, 1, 2, 3, -1, -2))
    start = d.int(0, size - 1)
    stop = d.int(start + 1, size) if stride > 0 else d.int(-1, start - 1)
    begin_masked = d.int(0, 3) == 0
    end_masked = stop == -1 or (stop == size and d.bool())
    begin = start - size if d.bool() else start
    end = stop - size if stop not in (-1, size) and d.bool() else stop
    python = slice(None if begin_masked else begin, None if end_masked else end, stride)
    return begin, end, stride, begin_masked, end_masked, python


def strided_slice(net: Net, d: Draw, x: Act) -> Act:
    """Begin/end/shrink masks, negative indices and strides; TFLM ignores ellipsis and new-axis masks."""
    begins, ends, strides, index = [], [], [], []
    begin_mask = end_mask = shrink_mask = 0
    shrinkable = d.int(0, len(x.shape) - 1)          # one axis that is never shrunk
    for axis, size in enumerate(x.shape):
        if axis != shrinkable and d.int(0, 4) == 0:
            position = d.int(0, size - 1)
            begin, end, stride, python = position - size if d.bool() else position, 0, 1, position
            shrink_mask |= 1 << axis
        else:
            begin, end, stride, begin_masked, end_masked, python = _slice_axis(d, size)
            begin_mask |= begin_masked << axis
            end_mask |= end_masked << axis
        begins.append(begin)
        ends.append(end)
        strides.append(stride)
        index.append(python)
    shape = np.empty(x.shape, np.int8)[tuple(index)].shape
    y = net.tensor("strided_slice", shape, x.quant)
    net.builder.op("STRIDED_SLICE", [x.index, net.int32("begin", begins), net.int32("end", ends),
                                     net.int32("strides", strides)], [y.index],
                   begin_mask=begin_mask, end_mask=end_mask, shrink_axis_mask=shrink_mask)
    return y


def transpose(net: Net, d: Draw, x: Act) -> Act:
    perm = [int(p) for p in d.rng.permutation(len(x.shape))]
    y = net.tensor("transpose", [x.shape[p] for p in perm], x.quant)
    net.builder.op("TRANSPOSE", [x.index, net.int32("perm", perm)], [y.index])
    return y


def flatten(net: Net, d: Draw, x: Act) -> Act:
    shape = (1, int(np.prod(x.shape)))
    y = net.tensor("flatten", shape, x.quant)
    net.builder.op("RESHAPE", [x.index, net.int32("shape", shape)], [y.index], new_shape=shape)
    return y


def _split_sizes(d: Draw, size: int) -> list[int]:
    """`size` cut into 1 to 4 positive parts."""
    cuts = sorted({d.int(1, size - 1) for _ in range(d.int(0, min(3, size - 1)))}) if size > 1 else []
    bounds = [0, *cuts, size]
    return [b - a for a, b in zip(bounds, bounds[1:])]


def _parts(net: Net, stem: str, x: Act, axis: int, sizes: Sequence[int], keep_axis: bool = True) -> list[Act]:
    """Output tensors of a split of `x` along `axis` into `sizes`; all but the first become side outputs."""
    parts = []
    for size in sizes:
        shape = list(x.shape)
        if keep_axis:
            shape[axis] = size
        else:
            del shape[axis]
        parts.append(net.tensor(stem, shape, x.quant))
    net.side_outputs += [p.index for p in parts[1:]]
    return parts


def split(net: Net, d: Draw, x: Act) -> Act:
    """SPLIT (equal parts, axis a constant input) or SPLIT_V (sizes, one of them maybe -1)."""
    rank = len(x.shape)
    axis = d.int(0, rank - 1)
    encoded_axis = axis - rank if d.bool() else axis
    if d.bool():
        count = d.choice([n for n in range(1, 5) if x.shape[axis] % n == 0])
        parts = _parts(net, "split", x, axis, [x.shape[axis] // count] * count)
        net.builder.op("SPLIT", [net.int32("axis", [encoded_axis]), x.index], [p.index for p in parts],
                       num_splits=count)
    else:
        sizes = _split_sizes(d, x.shape[axis])
        encoded = list(sizes)
        if d.bool():
            encoded[d.int(0, len(sizes) - 1)] = -1
        parts = _parts(net, "split_v", x, axis, sizes)
        net.builder.op("SPLIT_V", [x.index, net.int32("size_splits", encoded), net.int32("axis", [encoded_axis])],
                       [p.index for p in parts], num_splits=len(sizes))
    return parts[0]


def pack(net: Net, d: Draw, x: Act) -> Act:
    """PACK of `x` with 0 to 3 more tensors of its shape (model inputs or constants)."""
    parts = [x, *[_operand(net, d, x.shape, x.quant) for _ in range(d.int(0, 3))]]
    order = list(d.rng.permutation(len(parts)))
    rank = len(x.shape) + 1
    axis = d.int(0, rank - 1)
    y = net.tensor("pack", (*x.shape[:axis], len(parts), *x.shape[axis:]), x.quant)
    net.builder.op("PACK", [parts[i].index for i in order], [y.index], values_count=len(parts),
                   axis=axis - rank if d.bool() else axis)
    return y


def unpack(net: Net, d: Draw, x: Act) -> Act:
    rank = len(x.shape)
    axis = d.int(0, rank - 1)
    parts = _parts(net, "unpack", x, axis, [1] * x.shape[axis], keep_axis=False)
    net.builder.op("UNPACK", [x.index], [p.index for p in parts], num=x.shape[axis],
                   axis=axis - rank if d.bool() else axis)
    return parts[0]


def space_to_depth(net: Net, d: Draw, x: Act) -> Act:
    """The input's H and W are made multiples of the block size by the family's shape."""
    n, h, w, c = x.shape
    block = d.choice([b for b in (1, 2, 3, 4) if h % b == 0 and w % b == 0])
    y = net.tensor("space_to_depth", (n, h // block, w // block, c * block * block), x.quant)
    net.builder.op("SPACE_TO_DEPTH", [x.index], [y.index], block_size=block)
    return y


def depth_to_space(net: Net, d: Draw, x: Act) -> Act:
    n, h, w, c = x.shape
    block = d.choice([b for b in (1, 2, 3) if c % (b * b) == 0])
    y = net.tensor("depth_to_space", (n, h * block, w * block, c // (block * block)), x.quant)
    net.builder.op("DEPTH_TO_SPACE", [x.index], [y.index], block_size=block)
    return y


def _resize(op: str) -> Layer:
    def resize(net: Net, d: Draw, x: Act) -> Act:
        size = [d.int(1, 12), d.int(1, 12)]
        align = d.bool()
        half = d.bool() and not (align and op == "RESIZE_BILINEAR")   # TFLM's bilinear rejects both
        y = net.tensor(op.lower(), (x.shape[0], *size, x.shape[3]), x.quant)
        net.builder.op(op, [x.index, net.int32("size", size)], [y.index], align_corners=align,
                       half_pixel_centers=half)
        return y
    return resize


def gather(net: Net, d: Draw, x: Act) -> Act:
    """Constant positions (repeats allowed) along any axis, batch_dims 0 or up to the axis."""
    rank = len(x.shape)
    axis = d.int(0, rank - 1)
    batch_dims = d.int(0, axis) if d.bool() else 0
    positions_shape = (*x.shape[:batch_dims], *[d.int(1, 4) for _ in range(d.int(0, 2))])
    positions = d.rng.integers(0, x.shape[axis], size=positions_shape).astype(np.int32)
    y = net.tensor("gather", (*x.shape[:axis], *positions_shape[batch_dims:], *x.shape[axis + 1:]), x.quant)
    net.builder.op("GATHER", [x.index, net.int32("positions", positions)], [y.index],
                   axis=axis - rank if d.bool() else axis, batch_dims=batch_dims)
    return y


# ---- families: an input shape and a sequence of layers --------------------------------------

def image_shape(d: Draw) -> tuple[int, ...]:
    return 1, d.int(1, 10), d.int(1, 10), d.int(1, 8)


def blocked_image_shape(d: Draw) -> tuple[int, ...]:
    """NHWC with H, W and C multiples of 1 to 3 blocks (SPACE_TO_DEPTH, DEPTH_TO_SPACE)."""
    block = d.int(1, 3)
    return d.int(1, 2), block * d.int(1, 3), block * d.int(1, 3), block * block * d.int(1, 3)


def first_layer_shape(d: Draw) -> tuple[int, ...]:
    return 1, d.int(1, 24), d.int(1, 20), d.int(1, 3)


def any_channels_shape(d: Draw) -> tuple[int, ...]:
    """Images with 1 to 67 channels (few pixels when there are many channels)."""
    channels = d.choice((1, 1, 2, 3, d.int(1, 67)))
    side = 16 if channels <= 4 else 6
    return 1, d.int(1, side), d.int(1, side), channels


def any_shape(d: Draw, max_rank: int = 4) -> tuple[int, ...]:
    return tuple(d.int(1, 6) for _ in range(d.int(1, max_rank)))


def vector_shape(d: Draw) -> tuple[int, ...]:
    return d.choice(((1, d.int(1, 40)), (d.int(1, 3), d.int(1, 40)), (1, d.int(1, 4), d.int(1, 16))))


def shape_with_ones(d: Draw) -> tuple[int, ...]:
    return tuple(1 if d.bool() else d.int(1, 5) for _ in range(d.int(2, 4)))


@dataclass(frozen=True)
class Family:
    shape: Callable[[Draw], tuple[int, ...]]
    layers: tuple[Layer, ...]
    float_input: bool = False
    log2_input_scale: tuple[float, float] = (-8.0, 0.0)


_NONLINEAR = (-7.0, -3.0)    # inputs of softmax, logistic, tanh, hard-swish: real range about +-1 to +-16

FAMILIES: dict[str, Family] = {
    "CONV_2D": Family(image_shape, (conv_2d,)),
    "DEPTHWISE_CONV_2D": Family(image_shape, (depthwise_conv_2d,)),
    "FULLY_CONNECTED": Family(vector_shape, (fully_connected,)),
    "ADD": Family(any_shape, (_binary("ADD"),)),
    "SUB": Family(any_shape, (_binary("SUB"),)),
    "MUL": Family(any_shape, (_binary("MUL"),)),
    "AVERAGE_POOL_2D": Family(image_shape, (_pool("AVERAGE_POOL_2D"),)),
    "MAX_POOL_2D": Family(image_shape, (_pool("MAX_POOL_2D"),)),
    "RESHAPE": Family(any_shape, (reshape,)),
    "SQUEEZE": Family(shape_with_ones, (squeeze,)),
    "EXPAND_DIMS": Family(lambda d: any_shape(d, max_rank=3), (expand_dims,)),
    "SOFTMAX": Family(vector_shape, (_fixed_output("SOFTMAX", Quant(1 / 256, -128)),), log2_input_scale=_NONLINEAR),
    "QUANTIZE": Family(any_shape, (quantize,), float_input=True),
    "QUANTIZE_INT8": Family(any_shape, (quantize,)),
    "DEQUANTIZE": Family(any_shape, (dequantize,)),
    "CONCATENATION": Family(any_shape, (concatenation,)),
    "PAD": Family(any_shape, (pad,)),
    "MEAN": Family(any_shape, (_reduce("MEAN"),)),
    "LOGISTIC": Family(any_shape, (_fixed_output("LOGISTIC", Quant(1 / 256, -128)),), log2_input_scale=_NONLINEAR),
    "TANH": Family(any_shape, (_fixed_output("TANH", Quant(1 / 128, 0)),), log2_input_scale=_NONLINEAR),
    "RELU": Family(any_shape, (_elementwise("RELU"),)),
    "RELU6": Family(any_shape, (_elementwise("RELU6", own_output_quant=False),)),
    "LEAKY_RELU": Family(any_shape, (_elementwise("LEAKY_RELU"),)),
    "HARD_SWISH": Family(any_shape, (_elementwise("HARD_SWISH"),), log2_input_scale=_NONLINEAR),
    "STRIDED_SLICE": Family(any_shape, (strided_slice,)),
    "TRANSPOSE": Family(any_shape, (transpose,)),
    "CHAIN_CNN": Family(image_shape, (conv_2d, depthwise_conv_2d, _pool("AVERAGE_POOL_2D"), flatten,
                                      fully_connected, _fixed_output("SOFTMAX", Quant(1 / 256, -128)))),
    "CHAIN_RESIDUAL": Family(image_shape, (conv_2d, _binary("ADD"), _elementwise("RELU6", own_output_quant=False), _reduce("MEAN"),
                                           fully_connected)),
    "CHAIN_FLOAT_IO": Family(image_shape, (quantize, conv_2d, _pool("MAX_POOL_2D"), dequantize), float_input=True),
    # (appended: example_models seeds the families above by position)
    "SPLIT": Family(any_shape, (split,)),
    "PACK": Family(lambda d: any_shape(d, max_rank=3), (pack,)),
    "UNPACK": Family(any_shape, (unpack,)),
    "SPACE_TO_DEPTH": Family(blocked_image_shape, (space_to_depth,)),
    "DEPTH_TO_SPACE": Family(blocked_image_shape, (depth_to_space,)),
    "RESIZE_NEAREST_NEIGHBOR": Family(image_shape, (_resize("RESIZE_NEAREST_NEIGHBOR"),)),
    "RESIZE_BILINEAR": Family(image_shape, (_resize("RESIZE_BILINEAR"),)),
    "GATHER": Family(any_shape, (gather,)),
    "MINIMUM": Family(any_shape, (_binary("MINIMUM"),)),
    "MAXIMUM": Family(any_shape, (_binary("MAXIMUM"),)),
    "PRELU": Family(any_shape, (_binary("PRELU"),)),
    "SQUARED_DIFFERENCE": Family(any_shape, (_binary("SQUARED_DIFFERENCE"),)),
    "TRANSPOSE_CONV": Family(image_shape, (transpose_conv,)),
    "SUM": Family(any_shape, (_reduce("SUM"),)),
    "REDUCE_MAX": Family(any_shape, (_reduce("REDUCE_MAX"),)),
    "ARG_MAX": Family(any_shape, (_arg("ARG_MAX"),)),
    "ARG_MIN": Family(any_shape, (_arg("ARG_MIN"),)),
    # first-layer and public-model shapes
    "CONV_2D_FIRST_LAYER": Family(first_layer_shape, (first_layer_conv_2d,)),
    "DEPTHWISE_CONV_2D_ANY": Family(any_channels_shape, (any_depthwise_conv_2d,)),
    # more op families
    "BATCH_MATMUL": Family(lambda d: tuple(d.int(1, 6) for _ in range(d.int(2, 4))), (batch_matmul,)),
    "SVDF": Family(lambda d: (d.int(1, 2), d.int(1, 24)), (svdf,)),
    # one of each newer op family in one model (what the QEMU tests run)
    "CHAIN_ONE_OF_EACH": Family(lambda d: (1, d.int(2, 4), d.int(2, 4), d.int(1, 4)), (
        transpose_conv, _resize("RESIZE_BILINEAR"), _resize("RESIZE_NEAREST_NEIGHBOR"), space_to_depth,
        depth_to_space, _binary("PRELU"), _binary("MAXIMUM"), _binary("SQUARED_DIFFERENCE"), batch_matmul, split,
        pack, unpack, gather, _reduce("REDUCE_MAX"), _reduce("SUM"), _arg("ARG_MAX"))),
    "UNIDIRECTIONAL_SEQUENCE_LSTM": Family(lambda d: (d.int(1, 2), d.int(1, 6), d.int(1, 16)), (lstm,)),
}


def generate(family: str, d: Draw) -> bytes:
    """One model of `family`, every random choice from `d`."""
    spec = FAMILIES[family]
    net = Net(description=f"mtk modelgen {family}")
    x = net.model_input(spec.shape(d), None if spec.float_input else activation_quant(d, spec.log2_input_scale))
    for layer in spec.layers:
        x = layer(net, d, x)
    return net.build(x)


def svdf_keyword_spotter(seed: int = 0, features: int = 40, classes: int = 4) -> bytes:
    """A streaming keyword spotter as TFLM's SVDF examples are built: one int16 frame of filterbank
    `features` a call, QUANTIZE'd to int8, two SVDF layers (rank 1, 32 units, int16 state over 8 and 16
    frames), a FULLY_CONNECTED over the `classes` and SOFTMAX. Scales chosen so that frames with a std
    of about 4000 use the int8 ranges (the outputs move from frame to frame)."""
    d = Draw(np.random.default_rng([seed, 12]))
    net = Net(description="mtk modelgen svdf keyword spotter")
    frame = net.builder.tensor("frame", (1, features), "int16", scale=float(np.float32(2.0 ** -9)), zero_point=0)
    net.inputs.append(frame)
    x = net.tensor("frame_int8", (1, features), Quant(2.0 ** -2, 0))
    net.builder.op("QUANTIZE", [frame], [x.index])
    x = svdf(net, d, x, rank=1, units=32, memory=8, wide=True)
    x = svdf(net, d, x, rank=1, units=32, memory=16, wide=True, gain=16.0)
    accumulator_std = 60.0 * _INT8_STD * np.sqrt(32)          # the SVDF's int8 outputs spread about +-60
    w_scale = float(np.float32(2.0 / (accumulator_std * x.quant.scale)))   # logits with a real std of about 2
    weights = net.builder.const(net.name("classifier_weights"), int8_data(d, (classes, 32), symmetric=True),
                                scale=w_scale, zero_point=0)
    logits = net.tensor("logits", (1, classes), Quant(float(x.quant.scale * w_scale * accumulator_std * 3 / 127), 0))
    net.builder.op("FULLY_CONNECTED", [x.index, weights, None], [logits.index])
    return net.build(_fixed_output("SOFTMAX", Quant(1 / 256, -128))(net, d, logits))


strategies: dict[str, st.SearchStrategy[bytes]] = {
    name: st.composite(lambda draw, name=name: generate(name, HypothesisDraw(draw)))() for name in FAMILIES
}


def example_models(seed: int = 0) -> dict[str, bytes]:
    """One fixed model per family; the same seed gives the same bytes."""
    return {name: generate(name, Draw(np.random.default_rng([seed, index])))
            for index, name in enumerate(FAMILIES)}


_NUMPY_TYPES = {schema.TensorType.INT8: np.int8, schema.TensorType.INT16: np.int16,
                schema.TensorType.INT32: np.int32, schema.TensorType.UINT32: np.uint32,
                schema.TensorType.UINT64: np.uint64, schema.TensorType.FLOAT32: np.float32}


def random_inputs(model: bytes, seed: int = 0) -> list[np.ndarray]:
    """One random array per model input: integers over their type's whole range, float32 in +-8."""
    rng = np.random.default_rng(seed)
    subgraph = schema.Model.GetRootAs(model, 0).Subgraphs(0)
    arrays = []
    for i in range(subgraph.InputsLength()):
        tensor = subgraph.Tensors(subgraph.Inputs(i))
        shape = tuple(int(s) for s in tensor.ShapeAsNumpy())
        dtype = _NUMPY_TYPES[tensor.Type()]
        if dtype is not np.float32:
            arrays.append(rng.integers(np.iinfo(dtype).min, np.iinfo(dtype).max + 1, size=shape).astype(dtype)
                          if dtype in (np.int8, np.int16) else   # the draws the tests of int8 and int16 models were written with
                          rng.integers(np.iinfo(dtype).min, np.iinfo(dtype).max, size=shape, dtype=dtype, endpoint=True))
        else:
            arrays.append(rng.uniform(-_FLOAT_INPUT_RANGE, _FLOAT_INPUT_RANGE, size=shape).astype(np.float32))
    return arrays


# ---- tiling: chains of row-local layers, and a MobileNet-shaped network ------------

CHAIN_LAYERS: tuple[Layer, ...] = (conv_2d, depthwise_conv_2d, _pool("MAX_POOL_2D"), _pool("AVERAGE_POOL_2D"),
                                   _elementwise("RELU"), _elementwise("LEAKY_RELU"))


def tiling_chain(d: Draw, layers: int = 4) -> bytes:
    """A chain of `layers` random conv/depthwise/pooling/activation layers over a tall image: the
    layers tiled execution computes band by band."""
    net = Net(description="mtk modelgen tiling chain")
    x = net.model_input((1, d.int(24, 48), d.int(1, 12), d.int(1, 6)), activation_quant(d))
    for _ in range(layers):
        x = d.choice(CHAIN_LAYERS)(net, d, x)
    return net.build(x)


def _separable(net: Net, d: Draw, x: Act, channels: int, stride: int) -> Act:
    """A 3×3 depthwise (SAME, `stride`) then a 1×1 convolution to `channels`: MobileNetV1's block."""
    out = (1, -(-x.shape[1] // stride), -(-x.shape[2] // stride), x.shape[3])
    x = weighted_sum(net, d, x, "DEPTHWISE_CONV_2D", (1, 3, 3, x.shape[3]), 3, 9, out, padding="SAME",
                     stride_h=stride, stride_w=stride, depth_multiplier=1, bias_optional=False)
    return weighted_sum(net, d, x, "CONV_2D", (channels, 1, 1, x.shape[3]), 0, x.shape[3], (*out[:3], channels),
                        padding="SAME")


# MobileNetV1 as the MLPerf Tiny visual wake words reference builds it: (channels, stride) of each block
MOBILENET_V1_BLOCKS = ((64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2), *[(512, 1)] * 5, (1024, 2), (1024, 1))


def mobilenet_v1(d: Draw, size: int = 96, alpha: float = 0.25, classes: int = 2, blocks: int | None = None) -> bytes:
    """A MobileNetV1 of width `alpha` over size×size×3 images, random weights: a 3×3/2 convolution to
    32·alpha channels, the depthwise-separable blocks, average pooling, a classifier, softmax. With
    `blocks`, only that many blocks and no head: the features are the output."""
    net = Net(description=f"mtk modelgen mobilenet_v1 {alpha} {size}")
    x = net.model_input((1, size, size, 3), activation_quant(d))
    half = -(-size // 2)
    x = weighted_sum(net, d, x, "CONV_2D", (int(32 * alpha), 3, 3, 3), 0, 27, (1, half, half, int(32 * alpha)),
                     padding="SAME", stride_h=2, stride_w=2)
    for channels, stride in MOBILENET_V1_BLOCKS[:blocks]:
        x = _separable(net, d, x, int(channels * alpha), stride)
    if blocks is not None:
        return net.build(x)
    y = net.tensor("pool", (1, 1, 1, x.shape[3]), x.quant)
    net.builder.op("AVERAGE_POOL_2D", [x.index], [y.index], padding="VALID", stride_h=1, stride_w=1,
                   filter_height=x.shape[1], filter_width=x.shape[2])
    x = flatten(net, d, y)
    x = weighted_sum(net, d, x, "FULLY_CONNECTED", (classes, x.shape[1]), 0, x.shape[1], (1, classes))
    return net.build(_fixed_output("SOFTMAX", Quant(1 / 256, -128))(net, d, x))
