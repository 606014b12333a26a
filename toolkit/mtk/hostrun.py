"""Run a compiled model (made by `mtk compile`) on this machine: host gcc -> shared library -> ctypes.

    model = HostModel(compile_model(...))   # or HostModel("build/model"): a folder `mtk compile` wrote
    outputs = model.run([x])          # one array per model input, in metadata order
    outputs = model.run([x], in_arena=True)   # through the I/O places in the arena (tvmgen_<module>_map_inputs)
    model.reset()                     # a model with state (variable tensors): back to its start

The library is built once per content (sources, headers, flags) into a cache in the temp dir.
Outputs (in the caller's buffers) and an external workspace start filled with a non-zero pattern, so a
kernel that skips writing an element, or reads the arena before writing it, shows up as a mismatch.
"""

from __future__ import annotations

import ctypes
import hashlib
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Sequence

import numpy as np

from . import interrupts
from .compiled import CompiledModel, IOTensor
from .errors import MtkError, TargetError, ToolMissing
from .fsutil import honour_umask

GCC_FLAGS = ("-O1", "-shared", "-fPIC", "-Wall", "-Wextra", "-Werror", "-std=c99")
WORKSPACE_ALIGNMENT = 32   # the strictest an arena asks (AotProgram.arena_align: staged quad streams)
_POISON = 0x5A


def _poisoned(tensor: IOTensor) -> np.ndarray:
    return np.full(tensor.bytes, _POISON, np.uint8).view(tensor.dtype).reshape(tensor.shape)


class HostModel:
    """A compiled model (or the folder holding one) built into a host shared library, callable from Python."""

    def __init__(self, compiled: CompiledModel | str | Path, cache_dir: str | Path | None = None) -> None:
        self.compiled = compiled if isinstance(compiled, CompiledModel) else CompiledModel.load(compiled)
        self.folder = self.compiled.path
        self.module = self.compiled.module
        self.inputs, self.outputs = self.compiled.inputs, self.compiled.outputs
        self.external_workspace = self.compiled.external_workspace
        self.arena_bytes = self.compiled.arena_bytes
        _check_header(self.folder / "include" / f"tvmgen_{self.module}.h", self.module,
                      {"inputs": self.inputs, "outputs": self.outputs})
        self.library_path = build_library(self.folder, cache_dir)
        self._library = ctypes.CDLL(str(self.library_path))
        self._run = getattr(self._library, f"tvmgen_{self.module}_run")
        self._run.restype = ctypes.c_int32
        self._reset = getattr(self._library, f"tvmgen_{self.module}_reset") if self.compiled.state else None
        self._inputs_struct = _pointer_struct("inputs", [s.c_name for s in self.inputs])
        self._outputs_struct = _pointer_struct("outputs", [s.c_name for s in self.outputs])

    def reset(self) -> None:
        """The model's state back to where it starts (tvmgen_<module>_reset); nothing for a model without.
        The state lives in the library, which one process loads once: every HostModel of it shares it."""
        if self._reset is not None:
            self._reset()

    def run(self, inputs: Sequence[np.ndarray], in_arena: bool = False) -> list[np.ndarray]:
        """Outputs for one sample, the run given the caller's own buffers, or with `in_arena` the places the
        map functions give (the inputs written there, the outputs read from there); raises MtkError on wrong
        inputs, TargetError if the model returns non-zero."""
        if len(inputs) != len(self.inputs):
            raise MtkError(f"model '{self.module}' has {len(self.inputs)} inputs, got {len(inputs)}")
        arrays = [_checked_input(spec, value) for spec, value in zip(self.inputs, inputs)]
        outputs = [_poisoned(t) for t in self.outputs]
        pools = []
        if self.external_workspace:
            workspace = _aligned_workspace(self.arena_bytes)
            pools.append(ctypes.byref(_pointer_struct("workspace_pools", ["global_workspace"])(workspace.ctypes.data)))
        if in_arena:
            places = {kind: self._map(kind, struct, pools) for kind, struct in
                      (("inputs", self._inputs_struct), ("outputs", self._outputs_struct))}
            for t, a in zip(self.inputs, arrays):   # (no poison in the output places: they may overlap the inputs')
                ctypes.memmove(getattr(places["inputs"], t.c_name), a.ctypes.data, t.bytes)
            pointers = [places["inputs"], places["outputs"]]
        else:
            pointers = [self._inputs_struct(*[a.ctypes.data for a in arrays]),
                        self._outputs_struct(*[o.ctypes.data for o in outputs])]
        status = self._run(*[ctypes.byref(p) for p in pointers], *pools)
        if status != 0:
            raise TargetError(f"tvmgen_{self.module}_run returned {status}")
        if in_arena:
            for t, o in zip(self.outputs, outputs):
                ctypes.memmove(o.ctypes.data, getattr(places["outputs"], t.c_name), t.bytes)
        return outputs

    def _map(self, kind: str, struct: type[ctypes.Structure], pools: list) -> ctypes.Structure:
        """The struct tvmgen_<module>_map_<kind>() returns: each tensor's place in the arena."""
        name = f"tvmgen_{self.module}_map_{kind}"
        try:
            function = getattr(self._library, name)
        except AttributeError:
            raise MtkError(f"{self.folder} has no {name}(): compiled by an mtk without the I/O places in the arena",
                           hint="compile the model again") from None
        function.restype = struct
        return function(*pools)


def build_library(compiled_dir: str | Path, cache_dir: str | Path | None = None) -> Path:
    """The shared library of a compiled folder, built with the host gcc unless the cache has it."""
    folder = Path(compiled_dir)
    sources = sorted((folder / "src").glob("*.c"))
    if not sources:
        raise MtkError(f"{folder} has no src/*.c: not a folder made by `mtk compile`")
    key = _content_hash(folder, sources)
    cache = Path(cache_dir) if cache_dir else Path(tempfile.gettempdir()) / "mtk-hostrun"
    library = cache / key / "libmodel.so"
    if library.exists():
        return library
    gcc = shutil.which("gcc")
    if gcc is None:
        raise ToolMissing("gcc is not installed; hostrun builds compiled models with the host C compiler",
                          hint="apt-get install gcc")
    cache.mkdir(parents=True, exist_ok=True)
    # built in a folder of its own, moved into place whole: a signal or a failure leaves nothing
    with tempfile.TemporaryDirectory(prefix=f".{key}.", dir=cache) as tmp:
        staging = Path(tmp) / key
        staging.mkdir()
        honour_umask(staging)
        command = [gcc, *GCC_FLAGS, "-I", str(folder / "include"), *map(str, sources),
                   "-o", str(staging / library.name)]
        with interrupts.child_group(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                    errors="replace") as process:
            output, _ = process.communicate()
        if process.returncode != 0:
            raise TargetError(f"the host build of {folder} failed:\n{output.strip()[-4000:]}")
        try:
            staging.rename(cache / key)
        except OSError:   # another process built the same library meanwhile
            pass
    return library


def _content_hash(folder: Path, sources: list[Path]) -> str:
    digest = hashlib.sha256(" ".join(GCC_FLAGS).encode())
    # with src/'s headers (the kernels': mtk_pool.h, ...): an edit of one is a new library
    headers = [*sorted((folder / "include").rglob("*")), *sorted((folder / "src").glob("*.h"))]
    for path in [*headers, *sources]:
        if path.is_file():
            digest.update(str(path.relative_to(folder)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:24]


def _check_header(header: Path, module: str, specs: dict[str, tuple[IOTensor, ...]]) -> None:
    """The header's struct members must be metadata's C names in metadata's order: the ctypes layout relies on it."""
    try:
        text = header.read_text()
    except OSError as err:
        raise MtkError(f"cannot read {header}: {err.strerror or err}") from None
    for kind, tensors in specs.items():
        body = re.search(rf"struct\s+tvmgen_{re.escape(module)}_{kind}\s*{{([^}}]*)}}", text)
        members = re.findall(r"void\s*\*\s*(\w+)\s*;", body.group(1)) if body else None
        expected = [t.c_name for t in tensors]
        if members != expected:
            raise MtkError(f"{header}: struct tvmgen_{module}_{kind} has members {members}, "
                           f"metadata.json says {expected}")


def _pointer_struct(name: str, members: list[str]) -> type[ctypes.Structure]:
    return type(name, (ctypes.Structure,), {"_fields_": [(m, ctypes.c_void_p) for m in members]})


def _checked_input(spec: IOTensor, value: np.ndarray) -> np.ndarray:
    array = np.asarray(value)
    if array.dtype != spec.dtype or array.shape != spec.shape:
        raise MtkError(f"input '{spec.name}' must be {spec.dtype}{list(spec.shape)}, "
                       f"got {array.dtype.name}{list(array.shape)}")
    return np.ascontiguousarray(array)


def _aligned_workspace(size: int) -> np.ndarray:
    raw = np.full(size + WORKSPACE_ALIGNMENT, _POISON, np.uint8)
    start = -raw.ctypes.data % WORKSPACE_ALIGNMENT
    return raw[start:start + size]
