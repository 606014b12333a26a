"""Read a .tflite flatbuffer into a Graph. Nothing after this module touches the flatbuffer."""

from __future__ import annotations

import math
import re
import stat
from pathlib import Path
from typing import Any

import flatbuffers
import numpy as np
import tflite
from flatbuffers import flexbuffers
from tflite.utils import BUILTIN_OPCODE2NAME

from .errors import ModelError
from .graph import Graph, Op, Quant, Tensor
from .validation import CUSTOM, OMITTED, OP_SPECS, custom_ops_note, validate

MAX_MODEL_BYTES = 2**31 - 1   # as MAX_TENSOR_BYTES: the generated C indexes with 32-bit integers

_TENSOR_TYPES = {
    tflite.TensorType.FLOAT32: "float32", tflite.TensorType.FLOAT16: "float16",
    tflite.TensorType.INT32: "int32", tflite.TensorType.UINT8: "uint8",
    tflite.TensorType.INT64: "int64", tflite.TensorType.BOOL: "bool",
    tflite.TensorType.INT16: "int16", tflite.TensorType.INT8: "int8",
    tflite.TensorType.FLOAT64: "float64", tflite.TensorType.UINT32: "uint32",
    tflite.TensorType.UINT16: "uint16", tflite.TensorType.INT4: "int4", tflite.TensorType.UINT64: "uint64",
}

_TENSOR_TYPE_NAMES = {v: k for k, v in vars(tflite.TensorType).items() if not k.startswith("_")}

_ENUMS = {
    "padding": {v: k for k, v in vars(tflite.Padding).items() if not k.startswith("_")},
    "fused_activation_function": {v: k for k, v in vars(tflite.ActivationFunctionType).items() if not k.startswith("_")},
}

def _snake(name: str) -> str:
    return re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower()


def _read_options(operator: tflite.Operator) -> dict[str, Any]:
    """All builtin options of an operator as a plain dict (getter names in snake_case)."""
    kind = operator.BuiltinOptionsType()
    table = operator.BuiltinOptions()
    if kind == 0 or table is None:
        return {}
    class_name = next((k for k, v in vars(tflite.BuiltinOptions).items() if v == kind and not k.startswith("_")), None)
    cls = getattr(tflite, class_name, None) if class_name else None
    if cls is None:
        return {}
    opts = cls()
    opts.Init(table.Bytes, table.Pos)
    result: dict[str, Any] = {}
    for attr in dir(cls):
        if attr.startswith("_") or attr in ("Init", "GetRootAs") or attr.startswith("GetRootAs") \
                or attr.endswith(("BufferHasIdentifier", "AsNumpy", "IsNone", "Length")):
            continue
        getter = getattr(opts, attr)
        if not callable(getter):
            continue
        try:
            value = getter()
        except TypeError:
            # Vector getters take an index: read the whole vector instead.
            if hasattr(opts, attr + "AsNumpy"):
                arr = getattr(opts, attr + "AsNumpy")()
                value = [] if isinstance(arr, int) else [int(x) for x in arr]
            else:
                continue
        key = _snake(attr)
        result[key] = _ENUMS[key].get(value, value) if key in _ENUMS else value
    return result


def _op_options(operator: tflite.Operator, op_type: str, path: Path) -> dict[str, Any]:
    """A builtin op's options; a custom op's that mtk compiles: the flexbuffer map TFLM's kernels read (its signal
    library's), {} without one; {} for another custom op (ethos-u's raw bytes), which validation refuses by name."""
    if not op_type.startswith(CUSTOM):
        return _read_options(operator)
    if op_type not in OP_SPECS or operator.CustomOptionsLength() == 0:
        return {}
    try:
        options = flexbuffers.Loads(operator.CustomOptionsAsNumpy().tobytes())
    except Exception as err:  # the flexbuffers reader raises anything on a corrupt buffer
        raise ModelError(f"{path}: the options of {op_type} are not a readable flexbuffer "
                         f"({type(err).__name__}: {err})") from None
    if not isinstance(options, dict):
        raise ModelError(f"{path}: the options of {op_type} are a flexbuffer {type(options).__name__}, not a map")
    return options


def _raw_builtin_code(code: tflite.OperatorCode) -> int:
    """The int32 `builtin_code` field itself. tflite's BuiltinCode() returns the deprecated int8
    field whenever it is < 127, so writers that leave that 0 (ai-edge-quantizer's QUANTIZE)
    read as ADD; the runtimes take max(deprecated_builtin_code, builtin_code)."""
    offset = code._tab.Offset(10)
    return int(code._tab.Get(flatbuffers.number_types.Int32Flags, offset + code._tab.Pos)) if offset else 0


def _quant(q: tflite.QuantizationParameters | None, shape: tuple[int, ...]) -> Quant | None:
    if q is None or q.ScaleLength() == 0:
        return None
    scale = np.asarray(q.ScaleAsNumpy(), dtype=np.float64).reshape(-1)
    zp = np.asarray(q.ZeroPointAsNumpy(), dtype=np.int64).reshape(-1) if q.ZeroPointLength() else np.zeros_like(scale, dtype=np.int64)
    if len(zp) != len(scale):   # TFLM's allocator then gives every channel the first zero point
        zp = np.repeat(zp[:1], len(scale))
    return Quant(scale=scale, zero_point=zp, axis=int(q.QuantizedDimension()))


def _custom_op_names(model: tflite.Model) -> list[str]:
    """The custom ops of the model that mtk does not compile."""
    codes = (model.OperatorCodes(i) for i in range(model.OperatorCodesLength()))
    names = [(code.CustomCode() or b"").decode("utf-8", "replace") for code in codes
             if max(int(code.DeprecatedBuiltinCode()), _raw_builtin_code(code)) == tflite.BuiltinOperator.CUSTOM]
    return [name for name in names if CUSTOM + name not in OP_SPECS]


def read_model(path: str | Path) -> Graph:
    """Parse and validate `path`; every malformed-file case becomes a ModelError naming the file."""
    path = Path(path)
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):
            raise ModelError(f"cannot read model {path}: not a regular file")
        if info.st_size > MAX_MODEL_BYTES:
            raise ModelError(f"model {path} is {info.st_size:,} bytes; at most {MAX_MODEL_BYTES:,} are read "
                             "(no microcontroller holds more)")
        buf = path.read_bytes()
    except OSError as err:
        raise ModelError(f"cannot read model {path}: {err.strerror or err}") from None
    return parse_model(buf, path)


def as_graph(model: str | Path | Graph) -> Graph:
    """A model file parsed, or a model already parsed as it is: each stage takes either, and a model
    is parsed once however many stages it goes through."""
    return model if isinstance(model, Graph) else read_model(model)


def parse_model(buf: bytes, path: Path) -> Graph:
    """A model's bytes (`path` names it in messages)."""
    if len(buf) < 8 or buf[4:8] != b"TFL3":
        raise ModelError(f"{path} is not a TFLite model (no 'TFL3' flatbuffer identifier)")
    try:
        graph = _parse(buf, path)
    except ModelError:
        raise
    except Exception as err:  # the flatbuffers runtime raises anything on corrupt offsets
        raise ModelError(f"{path} is a corrupt or truncated TFLite flatbuffer ({type(err).__name__}: {err})") from None
    validate(graph)
    return graph


def _parse(buf: bytes, path: Path) -> Graph:
    model = tflite.Model.GetRootAsModel(buf, 0)
    if model.SubgraphsLength() != 1:
        raise ModelError(f"{path} has {model.SubgraphsLength()} subgraphs; mtk supports models with exactly one "
                         "(no control flow: WHILE/IF)")
    sub = model.Subgraphs(0)

    def buffer_data(index: int) -> bytes | None:
        if index <= 0 or index >= model.BuffersLength():
            return None
        b = model.Buffers(index)
        if b.Offset() > 1:  # large model: data stored after the flatbuffer
            return bytes(buf[b.Offset(): b.Offset() + b.Size()])
        if b.DataLength() == 0:
            return None
        return b.DataAsNumpy().tobytes()

    tensors: list[Tensor] = []
    for i in range(sub.TensorsLength()):
        t = sub.Tensors(i)
        name = (t.Name() or b"").decode("utf-8", "replace") or f"tensor_{i}"
        ttype = t.Type()
        if ttype not in _TENSOR_TYPES:
            raise ModelError(f"{path}: tensor {i} '{name}' is {_TENSOR_TYPE_NAMES.get(ttype, f'of element type {ttype}')}, "
                             "which mtk does not compile" + custom_ops_note(_custom_op_names(model), "; ", " either"))
        dtype = _TENSOR_TYPES[ttype]
        shape = tuple(int(d) for d in t.ShapeAsNumpy()) if t.ShapeLength() else ()
        sig = [int(d) for d in t.ShapeSignatureAsNumpy()] if not t.ShapeSignatureIsNone() else []
        # A free batch dimension (-1 with a stored size of 1) is how converters mark batch=None: take 1.
        if any(d < 0 for d in sig[1:]) or (sig and sig[0] < 0 and (not shape or shape[0] != 1)):
            raise ModelError(f"{path}: tensor {i} '{name}' has a dynamic shape {sig}",
                             hint="export the model with a fixed batch size (1) and fixed input shape")
        raw = buffer_data(t.Buffer())
        data = None
        if raw is not None:
            np_dtype = np.dtype(dtype) if dtype != "int4" else np.dtype("int8")
            expected = math.prod(shape) * np_dtype.itemsize
            if dtype == "int4" or len(raw) != expected:
                raise ModelError(f"{path}: constant tensor {i} '{name}' holds {len(raw)} bytes, "
                                 f"shape {list(shape)} needs {expected}")
            data = np.frombuffer(raw, dtype=np_dtype).reshape(shape).copy()
        tensors.append(Tensor(i, name, shape, dtype, _quant(t.Quantization(), shape), data, bool(t.IsVariable())))

    ops: list[Op] = []
    for i in range(sub.OperatorsLength()):
        o = sub.Operators(i)
        code = model.OperatorCodes(o.OpcodeIndex())
        builtin = max(int(code.DeprecatedBuiltinCode()), _raw_builtin_code(code))
        op_type = BUILTIN_OPCODE2NAME.get(builtin, f"BUILTIN_{builtin}")
        if op_type == "CUSTOM":
            op_type = f"{CUSTOM}{(code.CustomCode() or b'').decode('utf-8', 'replace')}"
        inputs = [None if int(x) == OMITTED else int(x) for x in (o.InputsAsNumpy() if o.InputsLength() else [])]
        outputs = [int(x) for x in (o.OutputsAsNumpy() if o.OutputsLength() else [])]
        ops.append(Op(i, op_type, inputs, outputs, _op_options(o, op_type, path)))

    graph_inputs = [int(x) for x in sub.InputsAsNumpy()] if sub.InputsLength() else []
    graph_outputs = [int(x) for x in sub.OutputsAsNumpy()] if sub.OutputsLength() else []
    if not graph_inputs or not graph_outputs:
        raise ModelError(f"{path}: the model declares no inputs or no outputs")
    return Graph(name=path.stem, tensors=tensors, ops=ops, inputs=graph_inputs, outputs=graph_outputs, source=path)
