"""Structural checks between the reader and the ops: after `validate(graph)` every op may assume a
well-formed graph (indices in range, arity and ranks as the op type needs, sizes that fit, options
and quantization parameters that the integer arithmetic can hold).

Refused here is only what tflite-micro's interpreter refuses too, or what mtk cannot compile. Per-channel
quantization is one example: TFLM's kernels take the channel dimension from the op (a conv filter's
0, a depthwise filter's 3) and ignore the tensor's `quantized_dimension`, so only the ops that use the
per-channel scales check their count, against the op's own channel dimension.

Each check runs once and the first problem becomes one ModelError naming the op index, the op
type and the tensor; op families then check only what is specific to them (dtypes, shapes that
must agree, TFLM's own restrictions).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .errors import ModelError
from .graph import Graph, Op, Tensor

MAX_RANK = 8                     # TFLite's RuntimeShape holds up to 6 (a few ops 8)
MAX_TENSOR_BYTES = 2**31 - 1     # the generated C indexes with 32-bit integers
OMITTED = -1                     # the flatbuffer's mark of an omitted optional input

# Zero points and constant-free activation tensors must fit their element type.
DTYPE_RANGES = {
    "int8": (-128, 127), "uint8": (0, 255), "int16": (-32768, 32767), "uint16": (0, 65535),
    "int32": (-2**31, 2**31 - 1), "uint32": (0, 2**32 - 1), "int64": (-2**63, 2**63 - 1), "uint64": (0, 2**64 - 1),
}
QUANTIZED_DTYPES = ("int8", "uint8", "int16")
# Element types a model input or output may have: those the generated C declares (codegen/aot.py's C types).
IO_DTYPES = ("int8", "uint8", "int16", "int32", "uint32", "int64", "uint64", "float32", "bool")

PADDINGS = ("SAME", "VALID")
FUSED_ACTIVATIONS = ("NONE", "RELU", "RELU_N1_TO_1", "RELU6", "TANH", "SIGN_BIT")
POSITIVE_OPTIONS = ("stride_h", "stride_w", "filter_height", "filter_width", "dilation_h_factor",
                    "dilation_w_factor", "block_size")
MAX_OUTPUTS = 1024               # SPLIT/UNPACK
MAX_OPTION = 2**16               # strides, filters and dilations beyond this fit no microcontroller


# Custom ops by name prefix: where they come from, for the message refusing them.
CUSTOM_OP_ORIGINS = (
    ("Signal", "TFLM's signal library (its audio front end)"),
    ("ethos-u", "an Arm Ethos-U NPU command stream (the model as Vela compiled it)"),
)
CUSTOM = "CUSTOM:"   # the reader's op type prefix of a custom op


def custom_ops_note(names: list[str], lead: str = "", tail: str = "") -> str:
    """'the model uses the custom ops A, B of <origin>, which mtk does not compile' after `lead`, or ''."""
    if not names:
        return ""
    origins = dict.fromkeys(origin for name in names for prefix, origin in CUSTOM_OP_ORIGINS if name.startswith(prefix))
    return (f"{lead}the model uses the custom op{'s' if len(names) > 1 else ''} {', '.join(dict.fromkeys(names))}"
            + (f" of {' and '.join(origins)}" if origins else "") + f", which mtk does not compile{tail}")


@dataclass(frozen=True)
class OpSpec:
    """What an op type takes: input and output counts, which inputs may be omitted (-1), the rank
    range of each input position (`ranks`, by position; positions absent from it take any rank up to
    MAX_RANK) and of the outputs, and input positions whose int8 tensor may lack quantization."""

    inputs: tuple[int, int]
    outputs: tuple[int, int] = (1, 1)
    optional: frozenset[int] = frozenset()
    ranks: tuple[tuple[int, int, int], ...] = ()    # (position, min rank, max rank)
    output_rank: tuple[int, int] = (0, MAX_RANK)
    unquantized: frozenset[int] = frozenset()
    reads_quantization: bool = True   # False: TFLM's kernel moves or computes plain integers, never reads a scale


_UNARY = OpSpec(inputs=(1, 1))
_MOVE = OpSpec(inputs=(1, 1), reads_quantization=False)
_CONV = OpSpec(inputs=(2, 3), optional=frozenset({2}), ranks=((0, 4, 4), (1, 4, 4), (2, 1, 1)), output_rank=(4, 4))
_POOL = OpSpec(inputs=(1, 1), ranks=((0, 4, 4),), output_rank=(4, 4))
_BINARY = OpSpec(inputs=(2, 2), ranks=((0, 0, 6), (1, 0, 6)), output_rank=(0, 6))
_REDUCE = OpSpec(inputs=(2, 2), ranks=((0, 1, 6), (1, 0, 1)))
_RESIZE = OpSpec(inputs=(2, 2), ranks=((0, 4, 4), (1, 1, 1)), output_rank=(4, 4))

_RANK1 = (1, 1)


def _signal(**spec) -> OpSpec:
    return OpSpec(**spec, reads_quantization=False)


# TFLM's signal-library ops mtk compiles (ops/signal.py), as their Prepare checks arity and ranks.
SIGNAL_SPECS: dict[str, OpSpec] = {
    "SignalWindow": _signal(inputs=(2, 2), ranks=((0, 1, MAX_RANK), (1, *_RANK1)), output_rank=(1, MAX_RANK)),
    "SignalFftAutoScale": _signal(inputs=(1, 1), outputs=(2, 2), ranks=((0, *_RANK1),), output_rank=(0, 1)),
    "SignalRfft": _signal(inputs=(1, 1), ranks=((0, 1, MAX_RANK),), output_rank=(1, MAX_RANK)),
    "SignalEnergy": _signal(inputs=(1, 1), ranks=((0, *_RANK1),), output_rank=_RANK1),
    "SignalFilterBank": _signal(inputs=(6, 6), ranks=tuple((k, *_RANK1) for k in range(6)), output_rank=_RANK1),
    "SignalFilterBankSquareRoot": _signal(inputs=(2, 2), ranks=((0, *_RANK1), (1, 0, 0)), output_rank=_RANK1),
    "SignalFilterBankSpectralSubtraction": _signal(inputs=(1, 1), outputs=(2, 2), ranks=((0, *_RANK1),),
                                                  output_rank=_RANK1),
    "SignalPCAN": _signal(inputs=(3, 3), ranks=tuple((k, *_RANK1) for k in range(3)), output_rank=_RANK1),
    "SignalFilterBankLog": _signal(inputs=(1, 1), ranks=((0, *_RANK1),), output_rank=_RANK1),
}

OP_SPECS: dict[str, OpSpec] = {
    "CONV_2D": _CONV,
    "DEPTHWISE_CONV_2D": _CONV,
    "FULLY_CONNECTED": OpSpec(inputs=(2, 3), optional=frozenset({2}), ranks=((0, 1, MAX_RANK), (1, 2, 2), (2, 1, 1)),
                              output_rank=(1, MAX_RANK)),
    "AVERAGE_POOL_2D": _POOL,
    "MAX_POOL_2D": _POOL,
    "MEAN": _REDUCE,
    "SUM": _REDUCE,
    "REDUCE_MAX": _REDUCE,
    "REDUCE_MIN": _REDUCE,
    "ARG_MAX": _REDUCE,
    "ARG_MIN": _REDUCE,
    "MINIMUM": _BINARY,
    "MAXIMUM": _BINARY,
    "PRELU": _BINARY,
    "SQUARED_DIFFERENCE": _BINARY,
    "GATHER": OpSpec(inputs=(2, 2)),
    "RESIZE_NEAREST_NEIGHBOR": _RESIZE,
    "RESIZE_BILINEAR": _RESIZE,
    "SPLIT": OpSpec(inputs=(2, 2), outputs=(1, MAX_OUTPUTS), ranks=((0, 0, 1),)),
    "SPLIT_V": OpSpec(inputs=(3, 3), outputs=(1, MAX_OUTPUTS), ranks=((1, 1, 1), (2, 0, 1))),
    "PACK": OpSpec(inputs=(1, MAX_OUTPUTS)),
    "UNPACK": OpSpec(inputs=(1, 1), outputs=(1, MAX_OUTPUTS)),
    "SPACE_TO_DEPTH": OpSpec(inputs=(1, 1), ranks=((0, 4, 4),), output_rank=(4, 4)),
    "DEPTH_TO_SPACE": OpSpec(inputs=(1, 1), ranks=((0, 4, 4),), output_rank=(4, 4)),
    "BATCH_MATMUL": OpSpec(inputs=(2, 2), ranks=((0, 2, 5), (1, 2, 5))),
    "TRANSPOSE_CONV": OpSpec(inputs=(3, 4), optional=frozenset({3}), ranks=((0, 1, 1), (1, 4, 4), (2, 4, 4), (3, 1, 1)),
                             output_rank=(4, 4)),
    "SVDF": OpSpec(inputs=(5, 5), ranks=((0, 2, 2), (1, 2, 2), (2, 2, 2), (3, 1, 1), (4, 2, 2)), output_rank=(2, 2)),
    # lstm_shared.h: input, 8 weights, 3 peephole, 4 biases, projection weights and bias, 2 states, 4 layer norms
    "UNIDIRECTIONAL_SEQUENCE_LSTM": OpSpec(
        inputs=(24, 24), optional=frozenset({1, 5, 9, 10, 11, 12, 16, 17, 20, 21, 22, 23}),
        ranks=((0, 3, 3), *((k, 2, 2) for k in (1, 2, 3, 4, 5, 6, 7, 8, 16)), *((k, 1, 1) for k in range(9, 16)),
               (17, 1, 1), *((k, 1, 1) for k in range(20, 24))), output_rank=(3, 3)),
    "ADD": _BINARY,
    "SUB": _BINARY,
    "MUL": _BINARY,
    "SOFTMAX": OpSpec(inputs=(1, 1), ranks=((0, 1, MAX_RANK),), output_rank=(1, MAX_RANK)),
    "RESHAPE": OpSpec(inputs=(1, 2), optional=frozenset({1}), ranks=((1, 0, 1),), reads_quantization=False),
    "SQUEEZE": _MOVE,
    "EXPAND_DIMS": OpSpec(inputs=(2, 2), ranks=((1, 0, 1),), reads_quantization=False),
    "CAST": _MOVE,
    "DIV": _BINARY,
    "QUANTIZE": _UNARY,
    "DEQUANTIZE": _UNARY,
    "CONCATENATION": OpSpec(inputs=(1, 10), ranks=tuple((i, 0, 6) for i in range(10)), output_rank=(0, 6)),
    "PAD": OpSpec(inputs=(2, 2), ranks=((0, 0, 5), (1, 2, 2)), output_rank=(0, 5)),
    "PADV2": OpSpec(inputs=(2, 3), optional=frozenset({2}), ranks=((0, 0, 5), (1, 2, 2)), output_rank=(0, 5),
                    unquantized=frozenset({2})),
    "STRIDED_SLICE": OpSpec(inputs=(4, 4), ranks=((0, 0, 4), (1, 1, 1), (2, 1, 1), (3, 1, 1)), output_rank=(0, 4)),
    "TRANSPOSE": OpSpec(inputs=(2, 2), ranks=((0, 0, 5), (1, 1, 1)), output_rank=(0, 5)),
    "LOGISTIC": _UNARY,
    "TANH": _UNARY,
    "LEAKY_RELU": _UNARY,
    "HARD_SWISH": _UNARY,
    "RELU": _UNARY,
    "RELU6": _UNARY,
    **{CUSTOM + name: spec for name, spec in SIGNAL_SPECS.items()},
}


def validate(graph: Graph) -> None:
    """Raise ModelError for the first structural problem of `graph`."""
    where = str(graph.source or graph.name)
    n = len(graph.tensors)
    for role, indices in (("input", graph.inputs), ("output", graph.outputs)):
        for k, t in enumerate(indices):
            if not 0 <= t < n:
                raise ModelError(f"{where}: model {role} {k} refers to tensor {t}; the model has {n} tensors")
        seen = set()
        for t in indices:
            if t in seen:
                raise ModelError(f"{where}: tensor '{graph.tensors[t].name}' is listed twice as a model {role}")
            seen.add(t)
    for t in graph.inputs:
        if graph.tensors[t].is_constant:
            raise ModelError(f"{where}: model input '{graph.tensors[t].name}' is a constant tensor")
    for t in graph.inputs + graph.outputs:
        if graph.tensors[t].dtype not in IO_DTYPES:
            raise ModelError(f"{where}: model input or output '{graph.tensors[t].name}' is {graph.tensors[t].dtype}; "
                             f"the generated C passes {', '.join(IO_DTYPES)}")
    custom = [op.type.removeprefix(CUSTOM) for op in graph.ops if op.type.startswith(CUSTOM) and op.type not in OP_SPECS]
    if custom:
        raise ModelError(f"{where}: {custom_ops_note(custom)}")
    for op in graph.ops:
        _check_indices(op, n, where)
    for t in graph.inputs + graph.outputs:
        _check_not_empty(graph.tensors[t], f"{where}: model {'input' if t in graph.inputs else 'output'}",
                         "the generated C passes no empty array")

    used = {t for op in graph.ops for t in [*op.inputs, *op.outputs] if t is not None} | set(graph.inputs) | set(graph.outputs)
    for t in sorted(used):
        _check_tensor(graph.tensors[t], where)

    # An empty tensor has nothing to read (an empty constant holds no buffer data: MEAN's no-axes list).
    # A variable tensor (SVDF's state) holds the previous inference's values from the start.
    available = set(graph.inputs) | {t.index for t in graph.tensors
                                     if t.is_constant or t.variable or (t.shape and t.size == 0)}
    for op in graph.ops:
        here = f"{where}: op {op.index} ({op.type})"
        for t in op.outputs:
            _check_not_empty(graph.tensors[t], f"{here}: output", "TFLM allocates no empty tensor (a dynamic one to it)")
        _check_dataflow(op, graph, available, here)
        spec = OP_SPECS.get(op.type)
        if spec is not None:
            _check_spec(op, graph, spec, here)
        _check_options(op, here)
        if op.type in SHAPE_RULES:
            SHAPE_RULES[op.type](op, graph, here)
    for t in graph.outputs:
        if t not in available or graph.tensors[t].is_constant:
            raise ModelError(f"{where}: model output '{graph.tensors[t].name}' is produced by no op")


def _check_indices(op: Op, n: int, where: str) -> None:
    here = f"{where}: op {op.index} ({op.type})"
    for k, t in enumerate(op.inputs):
        if t is not None and not 0 <= t < n:
            raise ModelError(f"{here}: input {k} refers to tensor {t}; the model has {n} tensors "
                             f"({OMITTED} marks an omitted optional input)")
    if not op.outputs:
        raise ModelError(f"{here}: the op has no outputs")
    for k, t in enumerate(op.outputs):
        if not 0 <= t < n:
            raise ModelError(f"{here}: output {k} refers to tensor {t}; the model has {n} tensors")


def _check_tensor(t: Tensor, where: str) -> None:
    here = f"{where}: tensor {t.index} '{t.name}'"
    if len(t.shape) > MAX_RANK:
        raise ModelError(f"{here} has {len(t.shape)} dimensions; at most {MAX_RANK} are supported")
    if any(d < 0 for d in t.shape):
        raise ModelError(f"{here} has a negative dimension in its shape {list(t.shape)}")
    nbytes = math.prod(t.shape) * (np.dtype(t.dtype).itemsize if t.dtype != "int4" else 1)
    if nbytes > MAX_TENSOR_BYTES:
        raise ModelError(f"{here}: shape {list(t.shape)} takes {nbytes} bytes; at most {MAX_TENSOR_BYTES} fit")
    q = t.quant
    if q is None:
        return
    if not np.all(np.isfinite(q.scale)) or not np.all(q.scale > 0):
        bad = next(float(s) for s in q.scale if not (math.isfinite(s) and s > 0))
        raise ModelError(f"{here} has the quantization scale {bad!r}; scales must be finite and positive")
    lo, hi = DTYPE_RANGES.get(t.dtype, (-2**31, 2**31 - 1))
    if np.any(q.zero_point < lo) or np.any(q.zero_point > hi):
        bad = next(int(z) for z in q.zero_point if not lo <= z <= hi)
        raise ModelError(f"{here} has the zero point {bad}, outside {t.dtype} [{lo}, {hi}]")


def _check_not_empty(t: Tensor, here: str, why: str) -> None:
    if t.size == 0:
        raise ModelError(f"{here} '{t.name}' has the shape {list(t.shape)}, no elements: {why}")


def _check_dataflow(op: Op, graph: Graph, available: set[int], here: str) -> None:
    """Inputs are model inputs, constants or earlier ops' outputs; each tensor is written once."""
    for t in op.inputs:
        if t is not None and t not in available:
            raise ModelError(f"{here}: input '{graph.tensors[t].name}' is not a model input, a constant or "
                             "the output of an earlier op")
    for t in op.outputs:
        tensor = graph.tensors[t]
        if tensor.is_constant or t in graph.inputs:
            raise ModelError(f"{here}: output '{tensor.name}' is a {'constant' if tensor.is_constant else 'model input'}")
        if t in available:
            raise ModelError(f"{here}: output '{tensor.name}' is written by an earlier op or twice by this one")
        available.add(t)


def _check_spec(op: Op, graph: Graph, spec: OpSpec, here: str) -> None:
    lo, hi = spec.inputs
    if not lo <= len(op.inputs) <= hi:
        raise ModelError(f"{here}: {len(op.inputs)} inputs; {op.type} takes {_count(lo, hi)}")
    lo, hi = spec.outputs
    if not lo <= len(op.outputs) <= hi:
        raise ModelError(f"{here}: {len(op.outputs)} outputs; {op.type} gives {_count(lo, hi)}")
    for k, t in enumerate(op.inputs):
        if t is None and k not in spec.optional:
            raise ModelError(f"{here}: input {k} is omitted, but {op.type} requires it")
    ranks = {k: (r_lo, r_hi) for k, r_lo, r_hi in spec.ranks}
    for k, tensor in enumerate(graph.input_tensors(op)):
        if tensor is None:
            continue
        r_lo, r_hi = ranks.get(k, (0, MAX_RANK))
        if not r_lo <= len(tensor.shape) <= r_hi:
            raise ModelError(f"{here}: input {k} '{tensor.name}' has shape {list(tensor.shape)}; "
                             f"{op.type} needs {_count(r_lo, r_hi)} dimensions there")
        if tensor.dtype in QUANTIZED_DTYPES and tensor.quant is None and k not in spec.unquantized \
                and spec.reads_quantization:
            raise ModelError(f"{here}: input {k} '{tensor.name}' is {tensor.dtype} without quantization parameters")
    for tensor in graph.output_tensors(op):
        r_lo, r_hi = spec.output_rank
        if not r_lo <= len(tensor.shape) <= r_hi:
            raise ModelError(f"{here}: output '{tensor.name}' has shape {list(tensor.shape)}; "
                             f"{op.type} needs {_count(r_lo, r_hi)} dimensions there")
        if tensor.dtype in QUANTIZED_DTYPES and tensor.quant is None and spec.reads_quantization:
            raise ModelError(f"{here}: output '{tensor.name}' is {tensor.dtype} without quantization parameters")


def _check_options(op: Op, here: str) -> None:
    o = op.options
    for key in POSITIVE_OPTIONS:
        if key in o and not (isinstance(o[key], int) and 1 <= o[key] <= MAX_OPTION):
            raise ModelError(f"{here}: option {key} is {o[key]}; it must be in [1, {MAX_OPTION}]")
    if "padding" in o and o["padding"] not in PADDINGS:
        raise ModelError(f"{here}: padding {o['padding']} is not one of {', '.join(PADDINGS)}")
    if "fused_activation_function" in o and o["fused_activation_function"] not in FUSED_ACTIVATIONS:
        raise ModelError(f"{here}: fused activation {o['fused_activation_function']} is not one of "
                         f"{', '.join(FUSED_ACTIVATIONS)}")
    for key, value in o.items():
        if isinstance(value, float) and not math.isfinite(value):
            raise ModelError(f"{here}: option {key} is {value}")


def _conv_out_size(size: int, k: int, stride: int, dilation: int, padding: str) -> int:
    """TFLM's ComputeOutSize."""
    effective = (k - 1) * dilation + 1
    return (size + stride - 1) // stride if padding == "SAME" else (size - effective + stride) // stride


def _conv_shapes(op: Op, graph: Graph, here: str) -> None:
    """CONV_2D (filter OHWI) and DEPTHWISE_CONV_2D (filter 1HWC): channels, bias and output size agree."""
    x, w, *rest = graph.input_tensors(op)
    bias, y = (rest[0] if rest else None), graph.tensors[op.outputs[0]]
    depthwise = op.type == "DEPTHWISE_CONV_2D"
    out_c = w.shape[3] if depthwise else w.shape[0]
    o = op.options
    expected = [x.shape[0], *(_conv_out_size(x.shape[1 + a], w.shape[1 + a], o.get(f"stride_{d}", 1),
                                             o.get(f"dilation_{d}_factor", 1), o.get("padding", "SAME"))
                              for a, d in enumerate("hw")), out_c]
    if list(y.shape) != expected or min(expected) < 1 or (depthwise and w.shape[0] != 1):
        raise ModelError(f"{here}: input {list(x.shape)} and filter {list(w.shape)} give output {expected}, "
                         f"not {list(y.shape)} ('{y.name}')")
    if bias is not None and bias.size != out_c:
        raise ModelError(f"{here}: bias '{bias.name}' has {bias.size} values for {out_c} output channels")
    if x.shape[3] == 0:   # TFLM divides by the input channels (a SIGFPE)
        raise ModelError(f"{here}: input '{x.name}' {list(x.shape)} has no channels")


def _fully_connected_shapes(op: Op, graph: Graph, here: str) -> None:
    x, w, *rest = graph.input_tensors(op)
    bias, y = (rest[0] if rest else None), graph.tensors[op.outputs[0]]
    units, depth = w.shape
    if depth == 0 or x.size % depth or y.size != x.size // depth * units or (y.shape and y.shape[-1] != units):
        raise ModelError(f"{here}: input {list(x.shape)} and weights {list(w.shape)} do not give output "
                         f"{list(y.shape)} ('{y.name}')")
    if bias is not None and bias.size != units:
        raise ModelError(f"{here}: bias '{bias.name}' has {bias.size} values for {units} units")


def _split_shapes(op: Op, graph: Graph, here: str) -> None:
    """SPLIT (axis, input) and SPLIT_V (input, sizes, axis): every output has the input's rank."""
    x = graph.tensors[op.inputs[1] if op.type == "SPLIT" else op.inputs[0]]
    for y in graph.output_tensors(op):
        if len(y.shape) != len(x.shape):
            raise ModelError(f"{here}: output '{y.name}' {list(y.shape)} does not have the rank of the input "
                             f"{list(x.shape)}")


# Shape relations between an op's tensors that its kernels index by (beyond ranks).
SHAPE_RULES = {"CONV_2D": _conv_shapes, "DEPTHWISE_CONV_2D": _conv_shapes, "FULLY_CONNECTED": _fully_connected_shapes,
               "SPLIT": _split_shapes, "SPLIT_V": _split_shapes}


def _count(lo: int, hi: int) -> str:
    if lo == hi:
        return str(lo)
    return f"at most {hi}" if lo == 0 else f"at least {lo}" if hi == MAX_RANK else f"{lo} to {hi}"
