"""Input samples for a model: loaded from .npy/.npz (float data quantized with the input's scale), or
made up (deterministic random data over each input's range)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .compiled import CompiledModel
from .datafile import Npz, read_npy
from .errors import MtkError
from .graph import Graph, Tensor
from .reader import as_graph, read_model

Sample = list[np.ndarray]      # one array per model input

QUANTIZED_INPUTS = ("int8", "int16")   # input types whose float samples are quantized with the tensor's scale


def random_samples(compiled: CompiledModel, count: int = 1) -> list[Sample]:
    """Deterministic random data over each input's whole range (int8, int16) or about ±1 (float)."""
    rng = np.random.default_rng(0)

    def sample(t) -> np.ndarray:
        if t.dtype in QUANTIZED_INPUTS:
            info = np.iinfo(t.dtype)
            return rng.integers(info.min, info.max + 1, t.shape).astype(t.dtype)
        return rng.uniform(-1, 1, t.shape).astype(t.dtype)
    return [[sample(t) for t in compiled.inputs] for _ in range(count)]


def check_sample(compiled: CompiledModel, sample: Sample) -> Sample:
    if len(sample) != len(compiled.inputs):
        raise MtkError(f"{compiled.name} takes {len(compiled.inputs)} inputs; a sample has {len(sample)}")
    return [np.asarray(a).reshape(t.shape).astype(t.dtype) for a, t in zip(sample, compiled.inputs)]


def load_samples(path: str | Path, model: str | Path | Graph) -> list[Sample]:
    """Samples for `model` from an .npy (one sample, with or without the batch dimension, or a
    batch of them) or an .npz (`x`, or one array per input named as the model's inputs).
    Float data for an int8 or int16 input is quantized with the input's scale and zero point."""
    graph = as_graph(model)
    inputs = [graph.tensors[i] for i in graph.inputs]
    batches = [_as_input(batch, array.dtype, t) for (array, batch), t in zip(sample_batches(path, inputs), inputs)]
    return [[batch[k:k + 1] for batch in batches] for k in range(len(batches[0]))]


def model_inputs(model: str | Path) -> list[Tensor]:
    graph = read_model(model)
    return [graph.tensors[i] for i in graph.inputs]


def sample_batches(path: str | Path, inputs: list[Tensor]) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per model input: the array as the file holds it, and as a float32 batch shaped (N, *input shape)."""
    from .quantize.dataset import as_batch, batch_check, batch_shape
    path = Path(path)
    if path.suffix == ".npz":
        with Npz(path) as npz:
            if len(inputs) == 1:
                keys = ("x", inputs[0].name, "arr_0")   # arr_0: np.savez with one positional array
                key = next((k for k in keys if k in npz.headers), None)
                if key is None:
                    raise MtkError(f"{path} holds arrays {sorted(npz.headers)}; the model's input is read from "
                                   f"{' or '.join(repr(k) for k in keys)}")
                chosen = [key]
            else:
                missing = [t.name for t in inputs if t.name not in npz.headers]
                if missing:
                    raise MtkError(f"{path} has no array for input(s) {missing} (holds {sorted(npz.headers)})")
                chosen = [t.name for t in inputs]
            for key, t in zip(chosen, inputs):   # shapes checked before anything is inflated
                batch_shape(npz.headers[key][0], tuple(t.shape[1:]), str(path))
            per_input = [npz.read(key) for key in chosen]
    else:
        if len(inputs) != 1:
            raise MtkError(f"the model has {len(inputs)} inputs: give an .npz with one array per input name "
                           f"({[t.name for t in inputs]})")
        per_input = [read_npy(path, batch_check(tuple(inputs[0].shape[1:]), str(path)))]
    batches = [(array, as_batch(array, tuple(t.shape[1:]), str(path))) for array, t in zip(per_input, inputs)]
    if len({len(b) for _, b in batches}) != 1:
        raise MtkError(f"{path}: the inputs hold different numbers of samples {[len(b) for _, b in batches]}")
    return batches


def _as_input(batch: np.ndarray, source_dtype: np.dtype, tensor: Tensor) -> np.ndarray:
    """A float32 batch (as_batch gives) in the input tensor's dtype."""
    if tensor.dtype not in QUANTIZED_INPUTS:
        return batch.astype(tensor.dtype)
    info = np.iinfo(tensor.dtype)
    if np.issubdtype(source_dtype, np.integer):
        if np.iinfo(source_dtype).bits > info.bits:
            raise MtkError(f"input {tensor.name} is {tensor.dtype}: give {tensor.dtype} values (already quantized) or "
                           f"float values (quantized with scale {tensor.quant.s:g}, zero point {tensor.quant.zp}); "
                           f"the samples are {source_dtype}")
        if batch.min() < info.min or batch.max() > info.max:
            raise MtkError(f"input {tensor.name} is {tensor.dtype}; the samples hold values outside {info.min}..{info.max}")
        return batch.astype(tensor.dtype)
    q = np.round(batch / np.float32(tensor.quant.s)) + tensor.quant.zp
    return np.clip(q, info.min, info.max).astype(tensor.dtype)
