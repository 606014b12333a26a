"""The oracle: TensorFlow Lite for Microcontrollers' reference kernels, through its Python interpreter.

TFLM segfaults on some bad models and on too small an arena, so it never runs in the calling
process: a long-lived worker subprocess runs it, and a crash there becomes an MtkError here
(the next call starts a fresh worker). The worker sizes the arena generously from the model's
tensors and doubles it while TFLM reports that it cannot allocate.

    outputs = run_reference(model_bytes, [x])                     # one sample
    batch = run_reference_batch(model_path, [[x0], [x1], [x2]])   # several samples
    tensors = reference_tensors(model_bytes, [x])                 # every tensor after the run, by index
    steps = run_reference_sequence(model_path, [[x0], [x1]])      # one stream: state kept between samples
"""

from __future__ import annotations

import atexit
import os
import pickle
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import IO, Any, Sequence

import numpy as np
from ai_edge_litert import schema_py_generated as schema

from .errors import MtkError

_TIMEOUT_SECONDS = 300.0
_ARENA_DOUBLINGS = 4
_ARENA_TOO_SMALL = "Failed to allocate"   # TFLM's arena message; a failing Prepare says something else
_ELEMENT_BYTES = {schema.TensorType.INT8: 1, schema.TensorType.UINT8: 1, schema.TensorType.BOOL: 1,
                  schema.TensorType.INT16: 2, schema.TensorType.UINT16: 2, schema.TensorType.FLOAT16: 2,
                  schema.TensorType.INT32: 4, schema.TensorType.FLOAT32: 4}


def run_reference(model: bytes | Path, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """The model's outputs for one sample (one array per model input, in the model's input order)."""
    return run_reference_batch(model, [inputs])[0]


def run_reference_batch(model: bytes | Path, samples: Sequence[Sequence[np.ndarray]]) -> list[list[np.ndarray]]:
    """The model's outputs for each sample; the interpreter is reset between samples."""
    return _call("outputs", _model_bytes(model), samples)


def run_reference_sequence(model: bytes | Path, samples: Sequence[Sequence[np.ndarray]]) -> list[list[np.ndarray]]:
    """The model's outputs for consecutive samples of one stream: the interpreter is reset once, before
    the first, so variable tensors (SVDF's state) carry over from each sample to the next."""
    return _call("sequence", _model_bytes(model), samples)


def reference_tensors(model: bytes | Path, inputs: Sequence[np.ndarray]) -> dict[int, np.ndarray]:
    """Every tensor of the model after one run, by tensor index (to find the first layer that differs)."""
    return _call("tensors", _model_bytes(model), [inputs])


def _model_bytes(model: bytes | Path) -> bytes:
    if isinstance(model, (bytes, bytearray)):
        return bytes(model)
    try:
        return Path(model).read_bytes()
    except OSError as err:
        raise MtkError(f"cannot read model {model}: {err.strerror or err}") from None


class _Worker:
    """One subprocess running the TFLM interpreter; pickled requests on stdin, replies on stdout."""

    def __init__(self) -> None:
        self._log: IO[bytes] = tempfile.TemporaryFile()
        package_root = str(Path(__file__).resolve().parents[1])
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")]))}
        self._process = subprocess.Popen(
            [sys.executable, "-c", "from mtk.reference import serve; serve()"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log, env=env)
        self.pid = os.getpid()

    @property
    def alive(self) -> bool:
        return self._process.poll() is None

    def call(self, kind: str, model: bytes, samples: Sequence[Sequence[np.ndarray]]) -> Any:
        request = (kind, model, [[np.asarray(x) for x in sample] for sample in samples])
        log_start = self._log.seek(0, os.SEEK_END)
        watchdog = threading.Timer(_TIMEOUT_SECONDS, self._process.kill)
        watchdog.start()
        try:
            pickle.dump(request, self._process.stdin)
            self._process.stdin.flush()
            ok, result = pickle.load(self._process.stdout)
        except (EOFError, BrokenPipeError, pickle.UnpicklingError):
            self.close()
            raise MtkError(f"the TFLM reference interpreter crashed on this model "
                           f"({self._describe_exit()}){self._log_since(log_start)}") from None
        finally:
            watchdog.cancel()
        if not ok:
            raise MtkError(f"the TFLM reference interpreter rejected the model or inputs: {result}"
                           f"{self._log_since(log_start)}")
        return result

    def close(self) -> None:
        if self.alive:
            self._process.kill()
        self._process.wait()
        for stream in (self._process.stdin, self._process.stdout):
            try:
                stream.close()
            except OSError:  # the pipe broke with the crash; nothing left to flush
                pass

    def _describe_exit(self) -> str:
        code = self._process.wait()
        if code < 0:
            return f"killed by signal {-code}"
        return f"exit code {code}"

    def _log_since(self, offset: int) -> str:
        self._log.seek(offset)
        text = self._log.read().decode("utf-8", "replace")
        lines = list(dict.fromkeys(line.strip() for line in text.splitlines() if line.strip()))[-12:]
        return "" if not lines else "\n  TFLM says:\n    " + "\n    ".join(lines)


_lock = threading.Lock()
_current: _Worker | None = None


def _call(kind: str, model: bytes, samples: Sequence[Sequence[np.ndarray]]) -> Any:
    """One request to this process's worker, started (again) when there is none or it died."""
    global _current
    with _lock:
        if _current is None or not _current.alive or _current.pid != os.getpid():
            _current = _Worker()
        return _current.call(kind, model, samples)


@atexit.register
def _close_worker() -> None:
    if _current is not None and _current.pid == os.getpid():
        _current.close()


# ---- the worker side ------------------------------------------------------------------------

def serve() -> None:
    """Worker main loop: answer pickled requests on stdin until it closes. TFLM's prints go to stderr."""
    replies = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    requests = sys.stdin.buffer
    while True:
        try:
            kind, model, samples = pickle.load(requests)
        except EOFError:
            return
        try:
            reply = (True, _answer(kind, model, samples))
        except Exception as err:  # noqa: BLE001 (every interpreter error goes back to the caller)
            reply = (False, f"{type(err).__name__}: {err}")
        sys.stderr.flush()
        pickle.dump(reply, replies)
        replies.flush()


def _answer(kind: str, model: bytes, samples: list[list[np.ndarray]]) -> Any:
    from tflite_micro import runtime

    subgraph = schema.Model.GetRootAs(model, 0).Subgraphs(0)
    for sample in samples:
        if len(sample) != subgraph.InputsLength():
            raise ValueError(f"the model has {subgraph.InputsLength()} inputs, a sample gives {len(sample)}")
    if kind == "tensors":
        interpreter = _interpreter(model, runtime.InterpreterConfig.kPreserveAllTensors)
        _invoke(interpreter, samples[0])
        return {i: np.array(interpreter.GetTensor(i, 0)["tensor_data"]) for i in range(subgraph.TensorsLength())}
    interpreter = _interpreter(model, runtime.InterpreterConfig.kAllocationRecording)
    outputs = []
    for step, sample in enumerate(samples):
        _invoke(interpreter, sample, reset=kind == "outputs" or step == 0)
        outputs.append([np.array(interpreter.get_output(i)) for i in range(subgraph.OutputsLength())])
    return outputs


def _invoke(interpreter: Any, sample: list[np.ndarray], reset: bool = True) -> None:
    if reset:
        interpreter.reset()
    for index, value in enumerate(sample):
        interpreter.set_input(value, index)
    interpreter.invoke()


def _interpreter(model: bytes, config: Any) -> Any:
    """A TFLM interpreter for `model`, the arena doubled from the estimate while TFLM cannot allocate."""
    from tflite_micro import runtime

    arena = arena_estimate(model)
    for doubling in range(_ARENA_DOUBLINGS + 1):
        log_start = os.lseek(sys.stderr.fileno(), 0, os.SEEK_END)
        try:
            return runtime.Interpreter.from_bytes(model, arena_size=arena << doubling, intrepreter_config=config)
        except RuntimeError:
            if _ARENA_TOO_SMALL not in _stderr_since(log_start) or doubling == _ARENA_DOUBLINGS:
                raise


def _stderr_since(offset: int) -> str:
    """What TFLM's C code wrote to this worker's stderr (a file the parent owns) since `offset`."""
    fd = sys.stderr.fileno()
    return os.pread(fd, os.lseek(fd, 0, os.SEEK_END) - offset, offset).decode("utf-8", "replace")


def arena_estimate(model: bytes) -> int:
    """A generous TFLM arena for `model`: every non-constant tensor 4x over, plus per-tensor and per-op overhead."""
    parsed = schema.Model.GetRootAs(model, 0)
    subgraph = parsed.Subgraphs(0)
    activation_bytes = 0
    for i in range(subgraph.TensorsLength()):
        tensor = subgraph.Tensors(i)
        buffer_index = tensor.Buffer()
        if 0 < buffer_index < parsed.BuffersLength() and parsed.Buffers(buffer_index).DataLength() > 0:
            continue
        elements = int(np.prod(tensor.ShapeAsNumpy(), dtype=np.int64)) if tensor.ShapeLength() else 1
        element_bytes = _ELEMENT_BYTES.get(tensor.Type(), 8)
        activation_bytes += (elements * element_bytes + 15) // 16 * 16
    return 64 * 1024 + 4 * activation_bytes + 512 * subgraph.TensorsLength() + 2048 * subgraph.OperatorsLength()
