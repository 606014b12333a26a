"""The oracle and the model generators together: every generated model runs in TFLM, and TFLM's
output is what the op means (data movement: byte-exact; arithmetic: within a few LSB of float math).
That second check is what makes "bit-exact with TFLM" mean "right" for the generated models."""

from __future__ import annotations

import flatbuffers
import numpy as np
import pytest
from ai_edge_litert import schema_py_generated as schema
from hypothesis import HealthCheck, given, settings

import modelgen
from mtk.errors import MtkError
from mtk.reference import arena_estimate, reference_tensors, run_reference, run_reference_batch
from mtk.tflite_builder import ModelBuilder

# SVDF and LSTM outputs depend on their state (variable tensors): test_ops_svdf.py and test_ops_lstm.py check
# streams against TFLM
SINGLE_OP = [name for name in modelgen.FAMILIES
             if not name.startswith("CHAIN_") and name not in ("SVDF", "UNIDIRECTIONAL_SEQUENCE_LSTM")]
# How far TFLM's integer kernels may be from float math, in output LSB (seen: 0 or 1 for every family).
TOLERANCE_LSB = 1
BYTE_EXACT = {"RESHAPE", "SQUEEZE", "EXPAND_DIMS", "CONCATENATION", "PAD", "STRIDED_SLICE", "TRANSPOSE",
              "MAX_POOL_2D", "DEQUANTIZE", "SPLIT", "PACK", "UNPACK", "SPACE_TO_DEPTH", "DEPTH_TO_SPACE",
              "RESIZE_NEAREST_NEIGHBOR", "GATHER", "MINIMUM", "MAXIMUM",
              "REDUCE_MAX", "ARG_MAX", "ARG_MIN"}
_TYPES = {schema.TensorType.INT8: np.int8, schema.TensorType.INT32: np.int32, schema.TensorType.FLOAT32: np.float32}


class Decoded:
    """The parts of a .tflite file the float semantics below need, through the schema's object API."""

    def __init__(self, model: bytes) -> None:
        self.model = schema.ModelT.InitFromPackedBuf(model, 0)
        self.subgraph = self.model.subgraphs[0]

    def shape(self, index: int) -> tuple[int, ...]:
        return tuple(int(s) for s in self.subgraph.tensors[index].shape)

    def quant(self, index: int) -> tuple[np.ndarray, np.ndarray] | None:
        q = self.subgraph.tensors[index].quantization
        return None if q is None or q.scale is None else (np.asarray(q.scale, np.float64), np.asarray(q.zeroPoint))

    def data(self, index: int) -> np.ndarray | None:
        tensor = self.subgraph.tensors[index]
        raw = self.model.buffers[tensor.buffer].data
        if raw is None:
            return None
        return np.frombuffer(np.asarray(raw, np.uint8).tobytes(), _TYPES[tensor.type]).reshape(self.shape(index))

    def single_op(self, inputs: list[np.ndarray]) -> tuple[str, schema.OperatorT, list[np.ndarray | None]]:
        """The model's first op: its builtin name, the op, and the values of its inputs (None: omitted)."""
        op = self.subgraph.operators[0]
        code = self.model.operatorCodes[op.opcodeIndex].builtinCode
        name = next(k for k, v in vars(schema.BuiltinOperator).items() if v == code)
        feeds = dict(zip(self.subgraph.inputs, inputs))
        return name, op, [None if i < 0 else feeds[i] if i in feeds else self.data(i) for i in op.inputs]

    def real(self, index: int, values: np.ndarray) -> np.ndarray:
        """Dequantized values (per-channel along the last axis of a broadcast)."""
        quant = self.quant(index)
        if quant is None:
            return values.astype(np.float64)
        scale, zero_point = quant
        axis = self.subgraph.tensors[index].quantization.quantizedDimension
        shape = [1] * values.ndim
        shape[axis] = -1
        return (values.astype(np.float64) - zero_point.reshape(shape)) * scale.reshape(shape)


def _activation(real: np.ndarray, fused: int) -> np.ndarray:
    kind = schema.ActivationFunctionType
    bounds = {kind.RELU: (0, None), kind.RELU6: (0, 6), kind.RELU_N1_TO_1: (-1, 1)}.get(fused)
    return real if bounds is None else np.clip(real, *bounds)


def _windows(x: np.ndarray, options, kernel: tuple[int, int], dilation: tuple[int, int], out_hw: tuple[int, int],
             fill: float):
    """(ky, kx, patch, valid) for every kernel tap: patch is (N, OH, OW, C) of the padded input."""
    stride = (options.strideH, options.strideW)
    pads = []
    for axis in range(2):
        effective = (kernel[axis] - 1) * dilation[axis] + 1
        total = max((out_hw[axis] - 1) * stride[axis] + effective - x.shape[1 + axis], 0)
        pads.append((total // 2, total - total // 2) if options.padding == schema.Padding.SAME else (0, total))
    padded = np.pad(x, ((0, 0), pads[0], pads[1], (0, 0)), constant_values=fill)
    inside = np.pad(np.ones(x.shape[1:3], bool), pads, constant_values=False)
    for ky in range(kernel[0]):
        for kx in range(kernel[1]):
            rows = slice(ky * dilation[0], ky * dilation[0] + (out_hw[0] - 1) * stride[0] + 1, stride[0])
            cols = slice(kx * dilation[1], kx * dilation[1] + (out_hw[1] - 1) * stride[1] + 1, stride[1])
            yield ky, kx, padded[:, rows, cols, :], inside[rows, cols][None, :, :, None]


def float_semantics(m: Decoded, inputs: list[np.ndarray]) -> np.ndarray:
    """The single op of `m` computed in float64 on dequantized inputs (real output values)."""
    name, op, raw = m.single_op(inputs)
    args = [None if i < 0 else m.real(i, value) for i, value in zip(op.inputs, raw)]
    options = op.builtinOptions
    out_shape = m.shape(op.outputs[0])
    x = args[0]
    if name in ("CONV_2D", "DEPTHWISE_CONV_2D"):
        w = args[1]
        kernel = w.shape[1:3]
        result = np.zeros(out_shape)
        for ky, kx, patch, _ in _windows(x, options, kernel, (options.dilationHFactor, options.dilationWFactor),
                                         out_shape[1:3], 0.0):
            if name == "CONV_2D":
                result += np.einsum("nhwc,oc->nhwo", patch, w[:, ky, kx, :])
            else:
                result += np.repeat(patch, options.depthMultiplier, axis=3) * w[0, ky, kx, :]
        return _activation(result + (0 if args[2] is None else args[2]), options.fusedActivationFunction)
    if name == "TRANSPOSE_CONV":   # inputs: output shape, filter, input, bias: each input pixel scattered
        w, x = args[1], args[2]
        stride = (options.strideH, options.strideW)
        pads = [max((-(-out_shape[1 + a] // stride[a]) - 1) * stride[a] + w.shape[1 + a] - out_shape[1 + a], 0) // 2
                if options.padding == schema.Padding.SAME else 0 for a in range(2)]
        full = np.zeros((out_shape[0], (x.shape[1] - 1) * stride[0] + w.shape[1],
                         (x.shape[2] - 1) * stride[1] + w.shape[2], w.shape[0]))
        for fy in range(w.shape[1]):
            for fx in range(w.shape[2]):
                full[:, fy:fy + (x.shape[1] - 1) * stride[0] + 1:stride[0],
                     fx:fx + (x.shape[2] - 1) * stride[1] + 1:stride[1]] += np.einsum("nhwc,oc->nhwo", x, w[:, fy, fx, :])
        full = np.pad(full, ((0, 0), (0, out_shape[1]), (0, out_shape[2]), (0, 0)))
        result = full[:, pads[0]:pads[0] + out_shape[1], pads[1]:pads[1] + out_shape[2]]
        return _activation(result + (0 if len(args) < 4 or args[3] is None else args[3]),
                           options.fusedActivationFunction)
    if name == "BATCH_MATMUL":
        left = np.swapaxes(args[0], -1, -2) if options.adjX else args[0]
        return np.matmul(left, np.swapaxes(args[1], -1, -2) if options.adjY else args[1])
    if name == "FULLY_CONNECTED":
        result = x.reshape(-1, args[1].shape[1]) @ args[1].T + (0 if args[2] is None else args[2])
        return _activation(result.reshape(out_shape), options.fusedActivationFunction)
    if name in ("AVERAGE_POOL_2D", "MAX_POOL_2D"):
        kernel = (options.filterHeight, options.filterWidth)
        taps = list(_windows(x, options, kernel, (1, 1), out_shape[1:3], 0.0))
        if name == "MAX_POOL_2D":
            result = np.max([np.where(valid, patch, -np.inf) for _, _, patch, valid in taps], axis=0)
        else:
            result = sum(patch * valid for _, _, patch, valid in taps) / sum(valid * 1.0 for *_, valid in taps)
        return _activation(result, options.fusedActivationFunction)
    if name in ("ADD", "SUB", "MUL"):
        result = {"ADD": np.add, "SUB": np.subtract, "MUL": np.multiply}[name](args[0], args[1])
        return _activation(result, options.fusedActivationFunction)
    if name == "SOFTMAX":
        e = np.exp(options.beta * (x - x.max(axis=-1, keepdims=True)))
        return e / e.sum(axis=-1, keepdims=True)
    if name == "PRELU":
        return np.where(args[0] >= 0, args[0], args[0] * args[1])
    if name == "SQUARED_DIFFERENCE":
        return (args[0] - args[1]) ** 2
    if name == "RESIZE_BILINEAR":
        return _bilinear(x, out_shape[1:3], options.alignCorners, options.halfPixelCenters)
    if name in ("MEAN", "SUM"):
        axes = tuple(int(a) % x.ndim for a in raw[1])
        return (x.mean if name == "MEAN" else x.sum)(axis=axes, keepdims=bool(options.keepDims))
    elementwise = {
        "QUANTIZE": lambda v: v, "DEQUANTIZE": lambda v: v,
        "LOGISTIC": lambda v: 1 / (1 + np.exp(-v)), "TANH": np.tanh,
        "RELU": lambda v: np.maximum(v, 0), "RELU6": lambda v: np.clip(v, 0, 6),
        "LEAKY_RELU": lambda v: np.where(v > 0, v, v * np.float32(options.alpha if options else 0)),
        "HARD_SWISH": lambda v: v * np.clip(v + 3, 0, 6) / 6,
    }
    return elementwise[name](x)


def byte_semantics(m: Decoded, inputs: list[np.ndarray]) -> np.ndarray:
    """The single data-movement op of `m` on the raw int8 values."""
    name, op, raw = m.single_op(inputs)
    out_shape = m.shape(op.outputs[0])
    options = op.builtinOptions
    if name in ("RESHAPE", "SQUEEZE", "EXPAND_DIMS"):
        return raw[0].reshape(out_shape)
    if name == "CONCATENATION":
        return np.concatenate(raw, axis=options.axis)
    if name == "PAD":
        return np.pad(raw[0], raw[1], constant_values=int(m.quant(op.outputs[0])[1][0]))
    if name == "TRANSPOSE":
        return raw[0].transpose(raw[1])
    if name == "STRIDED_SLICE":
        index = []
        for axis, (begin, end, stride) in enumerate(zip(raw[1], raw[2], raw[3])):
            if options.shrinkAxisMask >> axis & 1:
                index.append(int(begin))
            else:
                index.append(slice(None if options.beginMask >> axis & 1 else int(begin),
                                   None if options.endMask >> axis & 1 else int(end), int(stride)))
        return raw[0][tuple(index)]
    if name in ("SPLIT", "SPLIT_V"):   # the first part
        x, axis = (raw[1], raw[0]) if name == "SPLIT" else (raw[0], raw[2])
        return np.take(x, range(out_shape[int(axis[0])]), axis=int(axis[0]))
    if name == "PACK":
        return np.stack(raw, axis=options.axis)
    if name == "UNPACK":
        return np.take(raw[0], 0, axis=options.axis)
    if name in ("SPACE_TO_DEPTH", "DEPTH_TO_SPACE"):
        (n, h, w, c), bs = (raw[0].shape, options.blockSize)
        if name == "SPACE_TO_DEPTH":
            return raw[0].reshape(n, h // bs, bs, w // bs, bs, c).transpose(0, 1, 3, 2, 4, 5).reshape(out_shape)
        return raw[0].reshape(n, h, w, bs, bs, -1).transpose(0, 1, 3, 2, 4, 5).reshape(out_shape)
    if name == "REDUCE_MAX":
        return raw[0].max(axis=tuple(int(a) % raw[0].ndim for a in raw[1]), keepdims=bool(options.keepDims))
    if name in ("ARG_MAX", "ARG_MIN"):   # numpy's first extreme, as TFLM's strict comparison
        return (np.argmax if name == "ARG_MAX" else np.argmin)(raw[0], axis=int(raw[1][0]))
    if name in ("MINIMUM", "MAXIMUM"):
        return (np.minimum if name == "MINIMUM" else np.maximum)(raw[0], raw[1])
    if name == "GATHER":
        x, positions, batch_dims = raw[0], raw[1], options.batchDims
        axis = options.axis % x.ndim
        if batch_dims == 0:
            return np.take(x, positions, axis=axis)
        return np.stack([_take_batched(x[b], positions[b], axis - 1, batch_dims - 1) for b in range(x.shape[0])])
    if name == "RESIZE_NEAREST_NEIGHBOR":
        picks = [_nearest(size, out, options.alignCorners, options.halfPixelCenters)
                 for size, out in zip(raw[0].shape[1:3], out_shape[1:3])]
        return raw[0][:, picks[0]][:, :, picks[1]]
    if name == "MAX_POOL_2D":
        kernel = (options.filterHeight, options.filterWidth)
        taps = [np.where(valid, patch, -999) for *_, patch, valid in
                _windows(raw[0].astype(np.int32), options, kernel, (1, 1), out_shape[1:3], 0)]
        low, high = _activation_limits(m, op.outputs[0], options.fusedActivationFunction)
        return np.clip(np.max(taps, axis=0), low, high)
    if name == "DEQUANTIZE":
        scale, zero_point = m.quant(op.inputs[0])
        return (raw[0].astype(np.int32) - zero_point[0]).astype(np.float32) * np.float32(scale[0])
    raise AssertionError(name)


def _take_batched(x: np.ndarray, positions: np.ndarray, axis: int, batch_dims: int) -> np.ndarray:
    if batch_dims == 0:
        return np.take(x, positions, axis=axis)
    return np.stack([_take_batched(x[b], positions[b], axis - 1, batch_dims - 1) for b in range(x.shape[0])])


def _nearest(size: int, out: int, align_corners: bool, half_pixel_centers: bool) -> np.ndarray:
    """The source index of each output pixel, in float64 (TFLM's float32 gives the same on these sizes)."""
    scale = (size - 1) / (out - 1) if align_corners and out > 1 else size / out
    position = (np.arange(out) + (0.5 if half_pixel_centers else 0.0)) * scale
    return np.clip(np.floor(position + 0.5) if align_corners else np.floor(position), 0, size - 1).astype(int)


def _bilinear(x: np.ndarray, out_hw: tuple[int, int], align_corners: bool, half_pixel_centers: bool) -> np.ndarray:
    """Bilinear resize of NHWC `x` in float64, TensorFlow's source coordinates."""
    for axis, out in zip((1, 2), out_hw):
        size = x.shape[axis]
        scale = (size - 1) / (out - 1) if align_corners and out > 1 else size / out
        position = (np.arange(out) + 0.5) * scale - 0.5 if half_pixel_centers else np.arange(out) * scale
        low = np.clip(np.floor(position), 0, size - 1).astype(int)
        high = np.clip(np.ceil(position), 0, size - 1).astype(int)
        weight = (position - low).reshape([-1 if a == axis else 1 for a in range(4)])
        x = np.take(x, low, axis=axis) * (1 - weight) + np.take(x, high, axis=axis) * weight
    return x


def _activation_limits(m: Decoded, index: int, fused: int) -> tuple[int, int]:
    scale, zero_point = m.quant(index)
    real = _activation(np.array([-1e9, 1e9]), fused)
    quantized = np.clip(np.round(real / scale[0]) + zero_point[0], -128, 127)
    return int(quantized[0]), int(quantized[1])


def _check_semantics(name: str, model: bytes, inputs: list[np.ndarray], output: np.ndarray) -> None:
    m = Decoded(model)
    if name in BYTE_EXACT:
        np.testing.assert_array_equal(output, byte_semantics(m, inputs).astype(output.dtype))
        return
    index = m.subgraph.outputs[0]
    real = float_semantics(m, inputs)
    assert real.shape == output.shape
    scale, zero_point = m.quant(index)
    expected = np.clip(np.round(real / scale[0]) + zero_point[0], -128, 127)
    worst = np.max(np.abs(expected - output.astype(np.int64)), initial=0)
    assert worst <= TOLERANCE_LSB, f"{name}: TFLM is {worst} LSB from float math"


def _runs_and_means_it(name: str, model: bytes, seed: int) -> None:
    inputs = modelgen.random_inputs(model, seed)
    output, *_ = run_reference(model, inputs)   # SPLIT and UNPACK: the first part
    assert output.shape == Decoded(model).shape(Decoded(model).subgraph.outputs[0])
    if name in SINGLE_OP:
        _check_semantics(name, model, inputs, output)


@pytest.mark.parametrize("name", list(modelgen.FAMILIES))
def test_generated_models_run_in_tflm_and_mean_what_they_say(name):
    @settings(max_examples=12, deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(model=modelgen.strategies[name])
    def check(model: bytes) -> None:
        _runs_and_means_it(name, model, seed=len(model))

    check()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_example_models_are_fixed_and_valid(seed):
    models = modelgen.example_models(seed)
    assert set(models) == set(modelgen.FAMILIES)
    assert models == modelgen.example_models(seed)
    for name, model in models.items():
        _runs_and_means_it(name, model, seed)


def test_batch_runs_each_sample():
    model = modelgen.example_models(0)["CONV_2D"]
    samples = [modelgen.random_inputs(model, seed) for seed in range(4)]
    batch = run_reference_batch(model, samples)
    assert len(batch) == 4
    for sample, outputs in zip(samples, batch):
        np.testing.assert_array_equal(outputs[0], run_reference(model, sample)[0])


def test_reference_tensors_include_intermediates():
    model = modelgen.example_models(0)["CHAIN_CNN"]
    inputs = modelgen.random_inputs(model)
    tensors = reference_tensors(model, inputs)
    m = Decoded(model)
    assert len(tensors) == len(m.subgraph.tensors)
    np.testing.assert_array_equal(tensors[m.subgraph.outputs[0]], run_reference(model, inputs)[0])
    np.testing.assert_array_equal(tensors[m.subgraph.inputs[0]], inputs[0])


def test_model_from_a_path(tmp_path):
    model = modelgen.example_models(0)["RELU"]
    path = tmp_path / "relu.tflite"
    path.write_bytes(model)
    inputs = modelgen.random_inputs(model)
    np.testing.assert_array_equal(run_reference(path, inputs)[0], run_reference(model, inputs)[0])


def _softmax_model(zero_point: int) -> bytes:
    b = ModelBuilder()
    x = b.tensor("x", (1, 4), "int8", scale=0.1, zero_point=0)
    y = b.tensor("y", (1, 4), "int8", scale=1 / 256, zero_point=zero_point)
    b.op("SOFTMAX", [x], [y])
    b.inputs([x])
    b.outputs([y])
    return b.build()


def _model_with_graph_input(index: int) -> bytes:
    model = schema.ModelT.InitFromPackedBuf(_softmax_model(-128), 0)
    model.subgraphs[0].inputs = [index]
    builder = flatbuffers.Builder(0)
    builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
    return bytes(builder.Output())


def test_a_model_tflm_rejects_is_an_error_with_its_reason():
    with pytest.raises(MtkError, match=r"softmax_common.cc.*zero_point != -128"):
        run_reference(_softmax_model(0), [np.zeros((1, 4), np.int8)])


def test_a_model_that_crashes_tflm_is_an_error_and_the_next_run_works():
    with pytest.raises(MtkError, match="crashed"):
        run_reference(_model_with_graph_input(99999), [np.zeros((1, 4), np.int8)])
    good = _softmax_model(-128)
    assert run_reference(good, [np.zeros((1, 4), np.int8)])[0].shape == (1, 4)


@pytest.mark.parametrize("model", [b"", b"not a model at all", _softmax_model(-128)[:40]])
def test_garbage_is_an_error(model):
    with pytest.raises(MtkError):
        run_reference(model, [np.zeros((1, 4), np.int8)])


@pytest.mark.parametrize("inputs, message", [
    ([], "1 inputs, a sample gives 0"),
    ([np.zeros((1, 4), np.float32)], "FLOAT32 but expected type INT8"),
    ([np.zeros((1, 5), np.int8)], "Dimension mismatch"),
])
def test_wrong_inputs_are_an_error(inputs, message):
    with pytest.raises(MtkError, match=message):
        run_reference(_softmax_model(-128), inputs)


def test_arena_estimate_grows_with_the_activations():
    small = modelgen.example_models(0)["RELU"]
    assert arena_estimate(small) >= 64 * 1024
    b = ModelBuilder()
    x = b.tensor("x", (1, 256, 256, 4), "int8", scale=0.1, zero_point=0)
    y = b.tensor("y", (1, 256, 256, 4), "int8", scale=0.1, zero_point=0)
    b.op("RELU", [x], [y])
    b.inputs([x])
    b.outputs([y])
    assert arena_estimate(b.build()) > 4 * 2 * 256 * 256 * 4
