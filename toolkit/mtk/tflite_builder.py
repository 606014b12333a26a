"""Write .tflite flatbuffers from Python: tensors, constants, builtin ops with options, a SignatureDef.

    b = ModelBuilder(description="conv")
    x = b.tensor("input", (1, 8, 8, 1), "int8", scale=0.5, zero_point=-1)
    w = b.const("w", weights, scale=w_scales, zero_point=np.zeros(4), axis=0)
    y = b.tensor("y", (1, 8, 8, 4), "int8", scale=0.25, zero_point=3)
    b.op("CONV_2D", [x, w, bias], [y], stride_w=1, stride_h=1, padding="SAME")
    b.inputs([x]); b.outputs([y])
    data = b.build()

Option keywords are the schema's field names in snake_case; enum options take their names
("SAME", "RELU6"). The file looks like the TFLite converter's: TFL3 identifier, buffer 0 empty,
constant data 16-byte aligned, builtin code in both opcode fields, signature "serving_default".
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Sequence

import flatbuffers
import numpy as np
from ai_edge_litert import schema_py_generated as schema
from flatbuffers import flexbuffers

SIGNATURE_KEY = "serving_default"
CUSTOM_PREFIX = "CUSTOM:"   # opcode keys of custom ops (a builtin name has no colon)
_FILE_IDENTIFIER = b"TFL3"
_SCHEMA_VERSION = 3
_BUFFER_ALIGNMENT = 16

# Builtin op name -> (options table name in the BuiltinOptions union, defaults for its fields).
# Ops not listed here take no options.
_OPTIONS: dict[str, tuple[str, dict[str, Any]]] = {
    "CONV_2D": ("Conv2DOptions", {"stride_w": 1, "stride_h": 1}),
    "DEPTHWISE_CONV_2D": ("DepthwiseConv2DOptions", {"stride_w": 1, "stride_h": 1, "depth_multiplier": 1}),
    "FULLY_CONNECTED": ("FullyConnectedOptions", {}),
    "ADD": ("AddOptions", {}),
    "SUB": ("SubOptions", {}),
    "MUL": ("MulOptions", {}),
    "DIV": ("DivOptions", {}),
    "AVERAGE_POOL_2D": ("Pool2DOptions", {"stride_w": 1, "stride_h": 1}),
    "MAX_POOL_2D": ("Pool2DOptions", {"stride_w": 1, "stride_h": 1}),
    "RESHAPE": ("ReshapeOptions", {}),
    "SQUEEZE": ("SqueezeOptions", {}),
    "EXPAND_DIMS": ("ExpandDimsOptions", {}),
    "SOFTMAX": ("SoftmaxOptions", {"beta": 1.0}),
    "QUANTIZE": ("QuantizeOptions", {}),
    "DEQUANTIZE": ("DequantizeOptions", {}),
    "CONCATENATION": ("ConcatenationOptions", {}),
    "PAD": ("PadOptions", {}),
    "MEAN": ("ReducerOptions", {}),
    "LEAKY_RELU": ("LeakyReluOptions", {}),
    "HARD_SWISH": ("HardSwishOptions", {}),
    "STRIDED_SLICE": ("StridedSliceOptions", {}),
    "TRANSPOSE": ("TransposeOptions", {}),
    "TRANSPOSE_CONV": ("TransposeConvOptions", {"stride_w": 1, "stride_h": 1}),
    "SPLIT": ("SplitOptions", {}),
    "SPLIT_V": ("SplitVOptions", {}),
    "PACK": ("PackOptions", {}),
    "UNPACK": ("UnpackOptions", {}),
    "SPACE_TO_DEPTH": ("SpaceToDepthOptions", {}),
    "DEPTH_TO_SPACE": ("DepthToSpaceOptions", {}),
    "GATHER": ("GatherOptions", {}),
    "RESIZE_NEAREST_NEIGHBOR": ("ResizeNearestNeighborOptions", {}),
    "RESIZE_BILINEAR": ("ResizeBilinearOptions", {}),
    "ARG_MAX": ("ArgMaxOptions", {"output_type": "INT32"}),
    "ARG_MIN": ("ArgMinOptions", {"output_type": "INT32"}),
    "MAXIMUM": ("MaximumMinimumOptions", {}),
    "MINIMUM": ("MaximumMinimumOptions", {}),
    "SQUARED_DIFFERENCE": ("SquaredDifferenceOptions", {}),
    "SUM": ("ReducerOptions", {}),
    "REDUCE_MAX": ("ReducerOptions", {}),
    "REDUCE_MIN": ("ReducerOptions", {}),
    "BATCH_MATMUL": ("BatchMatMulOptions", {}),
    "SVDF": ("SVDFOptions", {}),
    "UNIDIRECTIONAL_SEQUENCE_LSTM": ("UnidirectionalSequenceLSTMOptions", {"fused_activation_function": "TANH"}),
}

# Option fields whose value is a schema enum, and that enum.
_ENUM_FIELDS: dict[str, type] = {
    "padding": schema.Padding,
    "fused_activation_function": schema.ActivationFunctionType,
    "weights_format": schema.FullyConnectedOptionsWeightsFormat,
    "quantized_bias_type": schema.TensorType,
    "output_type": schema.TensorType,
}


def _enum_values(enum: type) -> dict[str, int]:
    return {k: v for k, v in vars(enum).items() if not k.startswith("_")}


_BUILTIN_CODES = _enum_values(schema.BuiltinOperator)
_OPTIONS_TYPES = _enum_values(schema.BuiltinOptions)
_TENSOR_TYPES = _enum_values(schema.TensorType)


def _snake(camel: str) -> str:
    """Schema field name in the object API (dilationWFactor) -> option keyword (dilation_w_factor)."""
    return re.sub(r"([A-Z])", r"_\1", camel).lower()


class _AlignedBufferT(schema.BufferT):
    """A buffer whose data vector starts on a 16-byte boundary, as the TFLite converter writes it."""

    def Pack(self, builder: flatbuffers.Builder) -> int:  # noqa: N802 (flatbuffers object API name)
        data = None
        if self.data is not None:
            payload = self.data.tobytes()
            builder.StartVector(1, len(payload), _BUFFER_ALIGNMENT)
            builder.head -= len(payload)
            builder.Bytes[builder.head: builder.head + len(payload)] = payload
            data = builder.EndVector()
        schema.BufferStart(builder)
        if data is not None:
            schema.BufferAddData(builder, data)
        return schema.BufferEnd(builder)


def _quantization(scale: Any, zero_point: Any, axis: int) -> schema.QuantizationParametersT | None:
    if scale is None:
        if zero_point is not None:
            raise ValueError("zero_point given without scale")
        return None
    scales = np.atleast_1d(np.asarray(scale, dtype=np.float32))
    zero_points = np.atleast_1d(np.asarray(0 if zero_point is None else zero_point, dtype=np.int64))
    if len(zero_points) == 1 and len(scales) > 1:
        zero_points = np.repeat(zero_points, len(scales))
    if len(zero_points) != len(scales):
        raise ValueError(f"{len(scales)} scales but {len(zero_points)} zero points")
    q = schema.QuantizationParametersT()
    q.scale = scales
    q.zeroPoint = zero_points
    q.quantizedDimension = int(axis)
    return q


def _options_table(op_type: str, options: dict[str, Any]) -> tuple[int, Any]:
    """(BuiltinOptions union type, options object) for an op; (0, None) for ops without options."""
    if op_type not in _OPTIONS:
        if options:
            raise ValueError(f"{op_type} takes no options (got {sorted(options)})")
        return 0, None
    table_name, defaults = _OPTIONS[op_type]
    table = getattr(schema, table_name + "T")()
    fields = {_snake(field): field for field in vars(table)}
    for key, value in {**defaults, **options}.items():
        if key not in fields:
            raise ValueError(f"{op_type} has no option '{key}' (known: {sorted(fields)})")
        if key in _ENUM_FIELDS and isinstance(value, str):
            names = _enum_values(_ENUM_FIELDS[key])
            if value not in names:
                raise ValueError(f"{op_type} option {key}={value!r}: expected one of {sorted(names)}")
            value = names[value]
        elif isinstance(value, (list, tuple, np.ndarray)):
            value = [int(v) for v in value]
        setattr(table, fields[key], value)
    return _OPTIONS_TYPES[table_name], table


class ModelBuilder:
    """Collects tensors and ops of a single-subgraph model; `build()` returns the .tflite bytes."""

    def __init__(self, description: str = "mtk") -> None:
        self.description = description
        self._tensors: list[schema.TensorT] = []
        self._buffers: list[schema.BufferT] = [_AlignedBufferT()]   # buffer 0: the empty sentinel
        self._opcodes: dict[str, int] = {}
        self._operators: list[schema.OperatorT] = []
        self._inputs: list[int] = []
        self._outputs: list[int] = []

    def tensor(self, name: str, shape: Sequence[int], dtype: str, scale: Any = None,
               zero_point: Any = None, axis: int = 0, variable: bool = False) -> int:
        """An activation tensor; returns its index. scale/zero_point: scalars or per-channel arrays;
        `variable`: state the runtime keeps between inferences (SVDF's activation state)."""
        index = self._add_tensor(name, shape, dtype, _quantization(scale, zero_point, axis), buffer=0)
        self._tensors[index].isVariable = variable
        return index

    def const(self, name: str, data: np.ndarray, scale: Any = None, zero_point: Any = None, axis: int = 0) -> int:
        """A constant tensor holding `data` (dtype and shape from the array); returns its index."""
        data = np.ascontiguousarray(data).reshape(np.shape(data))   # ascontiguousarray makes a scalar 1-D
        buffer = _AlignedBufferT()
        buffer.data = data
        self._buffers.append(buffer)
        return self._add_tensor(name, data.shape, data.dtype.name, _quantization(scale, zero_point, axis),
                                buffer=len(self._buffers) - 1)

    def op(self, op_type: str, inputs: Sequence[int | None], outputs: Sequence[int],
           intermediates: Sequence[int] = (), **options: Any) -> int:
        """A builtin op; None in `inputs` is an omitted optional input; `intermediates`: tensors the
        converter attaches for the op's internal scales (an integer LSTM's). Returns the op's index."""
        if op_type not in _BUILTIN_CODES:
            raise ValueError(f"unknown TFLite builtin op {op_type!r}")
        for index in [i for i in inputs if i is not None] + list(outputs) + list(intermediates):
            self._check_index(index)
        operator = schema.OperatorT()
        operator.opcodeIndex = self._opcodes.setdefault(op_type, len(self._opcodes))
        operator.inputs = [-1 if i is None else int(i) for i in inputs]
        operator.outputs = [int(i) for i in outputs]
        if intermediates:
            operator.intermediates = [int(i) for i in intermediates]
        operator.builtinOptionsType, operator.builtinOptions = _options_table(op_type, options)
        self._operators.append(operator)
        return len(self._operators) - 1

    def custom_op(self, name: str, inputs: Sequence[int], outputs: Sequence[int], **options: Any) -> int:
        """A custom op `name` (TFLM's "SignalWindow", ...) whose options are a flexbuffer map, as TFLM's
        custom kernels read them. Returns the op's index."""
        for index in [*inputs, *outputs]:
            self._check_index(index)
        operator = schema.OperatorT()
        operator.opcodeIndex = self._opcodes.setdefault(CUSTOM_PREFIX + name, len(self._opcodes))
        operator.inputs = [int(i) for i in inputs]
        operator.outputs = [int(i) for i in outputs]
        if options:
            operator.customOptions = list(flexbuffers.Dumps(options))
            operator.customOptionsFormat = schema.CustomOptionsFormat.FLEXBUFFERS
        self._operators.append(operator)
        return len(self._operators) - 1

    def inputs(self, tensors: Sequence[int]) -> None:
        self._inputs = [self._check_index(t) for t in tensors]

    def outputs(self, tensors: Sequence[int]) -> None:
        self._outputs = [self._check_index(t) for t in tensors]

    def build(self) -> bytes:
        if not self._inputs or not self._outputs:
            raise ValueError("call inputs() and outputs() before build()")
        subgraph = schema.SubGraphT()
        subgraph.tensors = self._tensors
        subgraph.operators = self._operators
        subgraph.inputs = self._inputs
        subgraph.outputs = self._outputs
        subgraph.name = "main"

        model = schema.ModelT()
        model.version = _SCHEMA_VERSION
        model.description = self.description
        model.operatorCodes = [self._operator_code(name) for name in self._opcodes]
        model.subgraphs = [subgraph]
        model.buffers = self._buffers
        model.signatureDefs = [self._signature()]

        builder = flatbuffers.Builder(1024)
        builder.Finish(model.Pack(builder), file_identifier=_FILE_IDENTIFIER)
        return bytes(builder.Output())

    def save(self, path: str | Path) -> Path:
        path = Path(path)
        path.write_bytes(self.build())
        return path

    def _add_tensor(self, name: str, shape: Sequence[int], dtype: str,
                    quantization: schema.QuantizationParametersT | None, buffer: int) -> int:
        type_name = np.dtype(dtype).name.upper()
        if type_name not in _TENSOR_TYPES:
            raise ValueError(f"tensor {name!r}: dtype {dtype} has no TFLite tensor type")
        if any(t.name == name for t in self._tensors):
            raise ValueError(f"a tensor named {name!r} exists already")
        tensor = schema.TensorT()
        tensor.name = name
        tensor.shape = [int(d) for d in shape]
        tensor.type = _TENSOR_TYPES[type_name]
        tensor.buffer = buffer
        tensor.quantization = quantization
        self._tensors.append(tensor)
        return len(self._tensors) - 1

    def _check_index(self, index: int) -> int:
        if not 0 <= index < len(self._tensors):
            raise ValueError(f"no tensor with index {index}")
        return int(index)

    @staticmethod
    def _operator_code(op_type: str) -> schema.OperatorCodeT:
        code = schema.OperatorCodeT()
        if op_type.startswith(CUSTOM_PREFIX):
            code.builtinCode = code.deprecatedBuiltinCode = schema.BuiltinOperator.CUSTOM
            code.customCode = op_type.removeprefix(CUSTOM_PREFIX)
            code.version = 1
            return code
        code.builtinCode = _BUILTIN_CODES[op_type]
        code.deprecatedBuiltinCode = min(code.builtinCode, schema.BuiltinOperator.PLACEHOLDER_FOR_GREATER_OP_CODES)
        code.version = 1
        return code

    def _signature(self) -> schema.SignatureDefT:
        def tensor_map(index: int) -> schema.TensorMapT:
            entry = schema.TensorMapT()
            entry.name = self._tensors[index].name
            entry.tensorIndex = index
            return entry

        signature = schema.SignatureDefT()
        signature.signatureKey = SIGNATURE_KEY
        signature.subgraphIndex = 0
        signature.inputs = [tensor_map(i) for i in self._inputs]
        signature.outputs = [tensor_map(i) for i in self._outputs]
        return signature
