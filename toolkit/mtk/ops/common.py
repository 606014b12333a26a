"""What every op family's prepare and lower use: the error naming an op, the checks TFLM's Prepare
functions share (int8 per-tensor tensors, constant int32 parameters), and two TIR shorthands."""

from __future__ import annotations

import numpy as np
from tvm import tirx

from ..errors import ModelError
from ..graph import Op, Tensor


def op_error(op: Op, message: str) -> ModelError:
    """The one-line error for an op mtk cannot compile: 'op 3 (CONV_2D): <message>'."""
    return ModelError(at_op(op, message))


def at_op(op: Op, message: str) -> str:
    """`message` prefixed with the op it is about, unless it already names it."""
    prefix = f"op {op.index} ({op.type})"
    return message if message.startswith(prefix) else f"{prefix}: {message}"


def require_per_tensor(op: Op, *tensors: Tensor, dtypes: tuple[str, ...] = ("int8",)) -> None:
    """Every tensor of one element type among `dtypes`, quantized with one scale and zero point
    (the common case of TFLM's quantized kernels)."""
    for t in tensors:
        if t.dtype not in dtypes or t.dtype != tensors[0].dtype:
            raise op_error(op, f"tensor '{t.name}' is {t.dtype}; mtk supports {' or '.join(dtypes)} only")
        if t.quant is None or t.quant.per_channel:
            raise op_error(op, f"tensor '{t.name}' must be quantized per tensor")


def check_int8_weights(op: Op, w: Tensor, weight_axis: int) -> None:
    """Constant symmetric int8 weights, per tensor or one scale per channel of `weight_axis` (TFLM's
    PopulateConvolutionQuantizationParams: the op's channel count, which the dimension the tensor's
    quantized_dimension names must also have)."""
    if w.dtype != "int8" or not w.is_constant or w.quant is None:
        raise op_error(op, f"weights must be constant int8 (got {w.dtype})")
    if np.any(w.quant.zero_point != 0):
        raise op_error(op, "weights must be symmetric (zero point 0)")
    if not w.quant.per_channel:
        return
    count, axis = len(w.quant.scale), w.quant.axis
    if count != w.shape[weight_axis]:
        raise op_error(op, f"weights '{w.name}' have {count} per-channel scales for "
                           f"{w.shape[weight_axis]} channels (dimension {weight_axis} of {list(w.shape)})")
    if not 0 <= axis < len(w.shape) or w.shape[axis] != count:
        raise op_error(op, f"weights '{w.name}' are quantized per channel along dimension {axis} of "
                           f"{list(w.shape)}; TFLM needs one with {count} channels")


def check_fully_connected_shapes(op: Op, x: Tensor, w: Tensor) -> None:
    """FULLY_CONNECTED's weights [units, depth] over an input of whole rows, in TFLite's default order."""
    if len(w.shape) != 2 or x.size % w.shape[1] != 0:
        raise op_error(op, f"input of {x.size} values does not divide into rows of {w.shape[-1]}")
    if op.options.get("weights_format", 0) != 0:
        raise op_error(op, "shuffled weights are not supported")


def const_int32(op: Op, t: Tensor | None, what: str) -> np.ndarray:
    """A constant int32 parameter tensor (TFLM reads these with GetTensorData<int32_t>)."""
    if t is None or not t.is_constant:
        raise op_error(op, f"{what} must be a constant tensor (TFLM does not support a computed one)")
    if t.dtype != "int32":
        raise op_error(op, f"{what} is {t.dtype}; TFLM reads it as int32")
    return t.data.astype(np.int64).reshape(-1)


def i32(v: int) -> tirx.PrimExpr:
    return tirx.const(v, "int32")


def let(value, body_fn, name: str, dtype: str = "int32"):
    """`body_fn(var)` with `value` computed once into `var` (tirx.Let)."""
    var = tirx.Var(name, dtype)
    return tirx.Let(var, value, body_fn(var))
