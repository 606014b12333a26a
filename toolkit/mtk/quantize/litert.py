"""LiteRT (ai-edge-litert) helpers: a model's signature, quiet native output, running a model on a batch."""

from __future__ import annotations

import contextlib
import io
import os
import sys
import warnings
from dataclasses import dataclass
from typing import Iterator

import numpy as np
from ai_edge_litert.interpreter import Interpreter, OpResolverType

from ..errors import ModelError


@dataclass(frozen=True)
class Signature:
    """What ai-edge-quantizer needs to feed the model: the signature key and its input's name."""

    key: str
    input_name: str


@contextlib.contextmanager
def quiet_native_output() -> Iterator[None]:
    """Silence stderr, including the C++ runtime's and tqdm's, and Python warnings for the block."""
    sys.stderr.flush()
    saved_fd = os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 2)
    try:
        with contextlib.redirect_stderr(io.StringIO()), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        os.dup2(saved_fd, 2)
        os.close(saved_fd)
        os.close(devnull)


def reference_interpreter(model: bytes, what: str = "the model") -> Interpreter:
    """An interpreter with TFLite's reference kernels (bit-exact with TFLM, unlike the optimized ones)."""
    with quiet_native_output():
        interpreter = Interpreter(model_content=model, num_threads=1,
                                  experimental_op_resolver_type=OpResolverType.BUILTIN_REF)
        try:
            interpreter.allocate_tensors()
        except (RuntimeError, ValueError) as err:   # an op's Prepare refused it, e.g. a bias past int32
            reason = " ".join(line.strip() for line in str(err).splitlines() if line.strip())
            raise ModelError(f"TFLite cannot prepare {what}: {reason}",
                             hint="calibration data like the model's real inputs, or a float model whose "
                                  "batch-norm statistics were trained, gives scales it can run") from None
    return interpreter


def signature_of(model: bytes, name: str) -> Signature:
    signatures = reference_interpreter(model).get_signature_list()
    if not signatures:
        raise ModelError(f"{name} has no SignatureDef, which ai-edge-quantizer needs",
                         hint="export it with a signature (TensorFlow's converter and mtk.tflite_builder write one)")
    key, io_names = next(iter(signatures.items()))
    if len(io_names["inputs"]) != 1:
        raise ModelError(f"{name} has {len(io_names['inputs'])} inputs; mtk quantize supports models with one")
    return Signature(key, io_names["inputs"][0])


def run_model(model: bytes, x: np.ndarray, what: str = "the model") -> list[np.ndarray]:
    """Run the model on every sample of `x` (float); returns each output as float32 (N, *shape).

    Integer inputs are quantized and integer outputs dequantized with the tensors' own parameters.
    """
    interpreter = reference_interpreter(model, what)
    (input_detail,) = interpreter.get_input_details()
    output_details = interpreter.get_output_details()
    results: list[list[np.ndarray]] = [[] for _ in output_details]
    for sample in x:
        interpreter.set_tensor(input_detail["index"], _to_tensor(sample[None], input_detail))
        interpreter.invoke()
        for result, detail in zip(results, output_details):
            result.append(_from_tensor(interpreter.get_tensor(detail["index"]), detail)[0])
    return [np.stack(r) for r in results]


def _to_tensor(values: np.ndarray, detail: dict) -> np.ndarray:
    dtype = np.dtype(detail["dtype"])
    if dtype.kind == "f":
        return values.astype(dtype)
    scale, zero_point = detail["quantization"]
    info = np.iinfo(dtype)
    return np.clip(np.round(values / scale) + zero_point, info.min, info.max).astype(dtype)


def _from_tensor(values: np.ndarray, detail: dict) -> np.ndarray:
    scale, zero_point = detail["quantization"]
    if values.dtype.kind == "f" or scale == 0:
        return values.astype(np.float32)
    return ((values.astype(np.float32) - zero_point) * scale).astype(np.float32)
