"""Seeded mutations of .tflite bytes for fuzzing the reader, the validation layer and the compiler.

    mutate(model_bytes, rng) -> (kind, mutant bytes)

Three kinds, picked at random: bit flips anywhere in the file, truncation, and structural edits
made through the flatbuffer object API (ai_edge_litert's schema: ModelT.InitFromPackedBuf, an
edit, Pack): tensor indices (negative, too large, -1), input/output lists (dropped, duplicated),
shapes, element types, quantization (NaN, 0, huge scales, zero points far outside the type,
per-channel lengths and axes), builtin options (each numeric field to an extreme), opcodes,
buffers and op order; zero-size channels of weighted ops, finite scales at the edges of int32
requantization, and the quantization quirks of real models (quantized_dimension past a 1-D
tensor's rank, zero-point vectors shorter or longer than the scales, or missing). Structural edits
are where the interesting bugs are: most bit flips land in weights and give a valid model.
"""

from __future__ import annotations

import random
from typing import Any, Callable

import flatbuffers
import numpy as np
from ai_edge_litert import schema_py_generated as schema

EXTREME_INTS = (-2**31, -2**15, -7, -2, -1, 0, 1, 2, 3, 127, 128, 255, 2**15, 2**16 + 1, 2**31 - 1)
EXTREME_FLOATS = (float("nan"), float("inf"), -float("inf"), 0.0, -1.0, 1e-45, 1e-30, 1e30, 3.4e38, 1.0, 0.5)
BIG_ZERO_POINTS = (2**40, -2**40, 2**31, -129, 128, 256, 2**63 - 1)


def _pick_index(rng: random.Random, n: int) -> int:
    return rng.choice([-2**31, -5, -2, -1, 0, n - 1, n, n + 1, n + 1000, 2**31 - 1, rng.randrange(max(n, 1))])


def _any_op(model: schema.ModelT, rng: random.Random) -> schema.OperatorT | None:
    ops = model.subgraphs[0].operators or []
    return rng.choice(ops) if ops else None


def _any_tensor(model: schema.ModelT, rng: random.Random) -> schema.TensorT | None:
    tensors = model.subgraphs[0].tensors or []
    return rng.choice(tensors) if tensors else None


def _as_list(v: Any) -> list:
    return [] if v is None else [int(x) for x in v]


def _op_list(model, rng) -> tuple[Any, str, list[int]] | None:
    """A random op, "inputs" or "outputs", and that list of tensor indices."""
    op = _any_op(model, rng)
    if op is None:
        return None
    field = rng.choice(["inputs", "outputs"])
    return op, field, _as_list(getattr(op, field))


def edit_op_index(model, rng):
    picked = _op_list(model, rng)
    if picked is None:
        return
    op, field, values = picked
    if values:
        values[rng.randrange(len(values))] = _pick_index(rng, len(model.subgraphs[0].tensors or []))
    setattr(op, field, values)


def edit_op_arity(model, rng):
    picked = _op_list(model, rng)
    if picked is None:
        return
    op, field, values = picked
    choice = rng.randrange(4)
    if choice == 0 and values:
        values.pop(rng.randrange(len(values)))
    elif choice == 1:
        values.append(rng.choice(values) if values else 0)
    elif choice == 2:
        values = []
    else:
        values = values + [-1] * rng.randint(1, 12)
    setattr(op, field, values)


def edit_graph_io(model, rng):
    sub = model.subgraphs[0]
    field = rng.choice(["inputs", "outputs"])
    values = _as_list(getattr(sub, field))
    choice = rng.randrange(4)
    if choice == 0 and values:
        values.append(values[0])                        # duplicate
    elif choice == 1 and values:
        values[rng.randrange(len(values))] = _pick_index(rng, len(sub.tensors or []))
    elif choice == 2:
        values = []
    else:
        values.append(rng.randrange(max(len(sub.tensors or []), 1)))
    setattr(sub, field, values)


def edit_shape(model, rng):
    t = _any_tensor(model, rng)
    if t is None:
        return
    shape = _as_list(t.shape)
    choice = rng.randrange(5)
    if choice == 0 and shape:
        shape[rng.randrange(len(shape))] = rng.choice([0, -1, -2, 1, 2, 3, 7, 2**16, 2**31 - 1])
    elif choice == 1 and shape:
        shape.pop(rng.randrange(len(shape)))
    elif choice == 2:
        shape.insert(rng.randrange(len(shape) + 1), rng.choice([1, 2, 5]))
    elif choice == 3:
        shape = [rng.choice([2**31 - 1, 65536, 46341])] * rng.randint(1, 6)
    else:
        shape = [1] * rng.choice([0, 9, 20, 100])
    t.shape = np.array(shape, dtype=np.int32)
    if rng.random() < 0.3:
        t.shapeSignature = np.array([rng.choice([-1, d]) for d in shape], dtype=np.int32)


def edit_type(model, rng):
    t = _any_tensor(model, rng)
    if t is not None:
        t.type = rng.choice(list(range(0, 18)) + [127])


def edit_quant(model, rng):
    t = _any_tensor(model, rng)
    if t is None:
        return
    q = t.quantization or schema.QuantizationParametersT()
    scale = [float(s) for s in (q.scale if q.scale is not None else [0.1])]
    zp = _as_list(q.zeroPoint) or [0]
    choice = rng.randrange(6)
    if choice == 0:
        scale[rng.randrange(len(scale))] = rng.choice(EXTREME_FLOATS)
    elif choice == 1:
        zp[rng.randrange(len(zp))] = rng.choice(BIG_ZERO_POINTS)
    elif choice == 2:
        k = rng.choice([0, 1, 2, 3, len(scale) + 1, max(len(scale) - 1, 0)])
        scale, zp = [0.05] * k, [0] * rng.choice([k, 1, 0, k + 2])
    elif choice == 3:
        q.quantizedDimension = rng.choice([-1, 0, 1, 2, 3, 4, 100])
    elif choice == 4:
        t.quantization = None
        return
    else:
        scale = [rng.choice(EXTREME_FLOATS)] * rng.randint(1, 4)
    q.scale, q.zeroPoint = np.array(scale, dtype=np.float32), np.array(zp, dtype=np.int64)
    t.quantization = q


def edit_options(model, rng):
    op = _any_op(model, rng)
    if op is None:
        return
    if op.builtinOptions is None or rng.random() < 0.1:
        op.builtinOptionsType = rng.randrange(0, 130)
        op.builtinOptions = None
        return
    fields = [k for k, v in vars(op.builtinOptions).items() if isinstance(v, (int, float)) and not isinstance(v, bool)]
    if not fields:
        return
    key = rng.choice(fields)
    value = getattr(op.builtinOptions, key)
    setattr(op.builtinOptions, key, rng.choice(EXTREME_FLOATS) if isinstance(value, float) else
            rng.choice([v for v in EXTREME_INTS if -2**31 <= v < 2**31] + [rng.randrange(0, 20)]))


def edit_opcode(model, rng):
    if rng.random() < 0.5 and model.operatorCodes:
        code = rng.choice(model.operatorCodes)
        code.builtinCode = rng.randrange(0, 210)
        code.deprecatedBuiltinCode = min(code.builtinCode, 127)
    else:
        op = _any_op(model, rng)
        if op is not None:
            op.opcodeIndex = rng.choice([len(model.operatorCodes or []), 2**31 - 1, 0, rng.randrange(40)])


def edit_buffer(model, rng):
    t = _any_tensor(model, rng)
    if t is None:
        return
    if rng.random() < 0.5:
        t.buffer = rng.choice([0, 1, len(model.buffers or []), 2**31 - 1, rng.randrange(max(len(model.buffers or []), 1))])
    elif model.buffers and 0 <= t.buffer < len(model.buffers) and model.buffers[t.buffer].data is not None:
        data = np.asarray(model.buffers[t.buffer].data, dtype=np.uint8)
        model.buffers[t.buffer].data = data[: rng.randrange(len(data) + 1)]


def edit_op_order(model, rng):
    ops = model.subgraphs[0].operators or []
    if len(ops) < 2:
        return
    i, j = rng.sample(range(len(ops)), 2)
    choice = rng.randrange(3)
    if choice == 0:
        ops[i], ops[j] = ops[j], ops[i]
    elif choice == 1:
        ops.pop(i)
    else:
        ops.insert(i, ops[j])


def edit_name(model, rng):
    t = _any_tensor(model, rng)
    if t is not None:
        t.name = rng.choice([b"", b"x */ int g; /*", b"NULL", b"arena", b"\xff\xfe", b"a\nb", b"#error x",
                             b"X", b"x", b"tvmgen_default_run", b"9lives", b"\\", b"\"quoted\""])


# Finite scales at the edges of what int32 requantization holds: rescale factors around 2^30 and 2^31
# (TFLM's largest defined left shift), below 2^-31 (flushed to zero) and float32's extremes.
EXTREME_FINITE_SCALES = (1e10, 1e9, 2.0**30, 1.5 * 2**30, 2.0**31, 1e-12, 1e-9, 2.0**-31, 2.0**-33, 1e-38, 3e38, 1e-45)
WEIGHTED_OPS = {schema.BuiltinOperator.CONV_2D, schema.BuiltinOperator.DEPTHWISE_CONV_2D,
                schema.BuiltinOperator.FULLY_CONNECTED, schema.BuiltinOperator.TRANSPOSE_CONV}


def _weighted_op(model, rng) -> schema.OperatorT | None:
    ops = [op for op in model.subgraphs[0].operators or [] if 0 <= op.opcodeIndex < len(model.operatorCodes or [])
           and max(model.operatorCodes[op.opcodeIndex].builtinCode,
                   model.operatorCodes[op.opcodeIndex].deprecatedBuiltinCode) in WEIGHTED_OPS]
    return rng.choice(ops) if ops else None


def edit_zero_channels(model, rng):
    """A conv/depthwise/FC whose channels (its input's last dimension, and the filter's matching one,
    emptied) or output channels are 0: the shapes otherwise agree, so the op's own code is reached."""
    op = _weighted_op(model, rng)
    if op is None:
        return
    tensors = model.subgraphs[0].tensors
    picked = [i for i in _as_list(op.inputs)[:2] + _as_list(op.outputs)[:1] if 0 <= i < len(tensors)]
    for i in rng.sample(picked, rng.randint(1, len(picked))):
        t = tensors[i]
        shape = _as_list(t.shape)
        if shape:
            shape[rng.choice([-1, 0]) if rng.random() < 0.3 else -1] = 0
            t.shape = np.array(shape, dtype=np.int32)
            if model.buffers and 0 < t.buffer < len(model.buffers):
                model.buffers[t.buffer].data = None


def edit_extreme_scale(model, rng):
    """A finite scale (one channel's or all) that rescale factors cannot hold, or barely can."""
    t = rng.choice([t for t in model.subgraphs[0].tensors or [] if t.quantization is not None
                    and t.quantization.scale is not None] or [None])
    if t is None:
        return
    scale = np.array(t.quantization.scale, dtype=np.float32).reshape(-1)
    value = rng.choice(EXTREME_FINITE_SCALES)
    if rng.random() < 0.5 or len(scale) == 1:
        scale[:] = value
    else:
        scale[rng.randrange(len(scale))] = value
    t.quantization.scale = scale


def edit_quant_quirk(model, rng):
    """What real converters write and TFLM tolerates or refuses: a 1-D tensor's quantized_dimension past
    its rank (person_detect's biases), fewer or more zero points than scales, no zero points at all."""
    tensors = [t for t in model.subgraphs[0].tensors or [] if t.quantization is not None
               and t.quantization.scale is not None and len(t.quantization.scale)]
    if not tensors:
        return
    t = rng.choice(tensors)
    q = t.quantization
    choice = rng.randrange(3)
    if choice == 0:
        q.quantizedDimension = rng.choice([1, 2, 3, 4, -1, len(_as_list(t.shape))])
    elif choice == 1:
        q.zeroPoint = np.zeros(rng.choice([1, 2, max(len(q.scale) - 1, 0), len(q.scale) + 1]), dtype=np.int64)
    else:
        q.zeroPoint = None


STRUCTURAL: list[Callable[[schema.ModelT, random.Random], None]] = [
    edit_op_index, edit_op_arity, edit_graph_io, edit_shape, edit_type, edit_quant, edit_options,
    edit_opcode, edit_buffer, edit_op_order, edit_name, edit_zero_channels, edit_extreme_scale, edit_quant_quirk,
]


def pack(model: schema.ModelT) -> bytes:
    builder = flatbuffers.Builder(1024)
    builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
    return bytes(builder.Output())


def structural(data: bytes, rng: random.Random, edits: int = 1) -> bytes:
    model = schema.ModelT.InitFromPackedBuf(bytearray(data), 0)
    for _ in range(edits):
        rng.choice(STRUCTURAL)(model, rng)
    return pack(model)


def bit_flips(data: bytes, rng: random.Random) -> bytes:
    out = bytearray(data)
    for _ in range(rng.choice([1, 1, 2, 4, 16])):
        # Half the flips land in the first 4 KB or the last 1 KB, where the tables are.
        pos = rng.randrange(len(out)) if rng.random() < 0.5 else \
            rng.choice([rng.randrange(min(4096, len(out))), len(out) - 1 - rng.randrange(min(1024, len(out)))])
        out[pos] ^= 1 << rng.randrange(8)
    return bytes(out)


def truncate(data: bytes, rng: random.Random) -> bytes:
    return data[: rng.randrange(len(data))]


def mutate(data: bytes, rng: random.Random) -> tuple[str, bytes]:
    """One mutant of `data`: (kind, bytes). Structural edits that the packer cannot encode fall back to a bit flip."""
    roll = rng.random()
    if roll < 0.15:
        return "bitflip", bit_flips(data, rng)
    if roll < 0.2:
        return "truncate", truncate(data, rng)
    try:
        return "structural", structural(data, rng, edits=rng.choice([1, 1, 1, 2, 3]))
    except Exception:   # noqa: BLE001 (a value the object API cannot pack, e.g. out of its field's range)
        return "bitflip", bit_flips(data, rng)
