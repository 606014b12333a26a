"""A compiled model folder (`mtk compile` output) as the firmware sees it, and its glue C file.

The firmware core sees all inputs as one byte buffer (each tensor at a multiple of
TENSOR_ALIGN, in metadata order) and all outputs likewise; `pack_inputs` and
`unpack_outputs` convert between that layout and per-tensor bytes.
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2

from ..boards import Board
from ..errors import ModelError
from ..paths import FIRMWARE
from ..target import get_cpu

CORE_FILES = ("mtk_core.c", "mtk_core.h", "mtk_port.h", "mtk_model.h", "mtk_layer_hook.h", "mtk_semihosting.h")
TENSOR_ALIGN = 16  # MTK_TENSOR_ALIGN in firmware/mtk_model.h
# dtype -> (enum mtk_result_type, element bytes)
RESULT_TYPES = {"int8": (1, 1), "uint8": (2, 1), "int16": (3, 2), "int32": (4, 4)}
INT32_MAX = 2**31 - 1


@dataclass(frozen=True)
class Tensor:
    name: str
    c_name: str
    shape: tuple[int, ...]
    dtype: str
    scale: float
    zero_point: int
    bytes: int
    offset: int  # in the firmware's input or output buffer


def _tensors(entries: list[dict[str, Any]]) -> tuple[Tensor, ...]:
    tensors, offset = [], 0
    for e in entries:
        offset = -(-offset // TENSOR_ALIGN) * TENSOR_ALIGN
        tensors.append(Tensor(e["name"], e["c_name"], tuple(e["shape"]), e["dtype"], float(e.get("scale") or 0.0),
                              int(e.get("zero_point") or 0), int(e["bytes"]), offset))
        offset += int(e["bytes"])
    return tuple(tensors)


def _buffer_bytes(tensors: tuple[Tensor, ...]) -> int:
    return tensors[-1].offset + tensors[-1].bytes


@dataclass(frozen=True)
class CompiledModel:
    path: Path
    module: str
    name: str
    inputs: tuple[Tensor, ...]
    outputs: tuple[Tensor, ...]
    op_count: int
    macs: int
    arena_bytes: int
    constant_bytes: int
    cpu: str | None = None      # what it was compiled for

    @classmethod
    def load(cls, path: Path) -> CompiledModel:
        path = Path(path)
        try:
            meta = json.loads((path / "metadata.json").read_text())
            model = cls(path=path, module=meta["module"], name=meta["model"], inputs=_tensors(meta["inputs"]),
                        outputs=_tensors(meta["outputs"]), op_count=len(meta["ops"]),
                        macs=sum(int(op.get("macs") or 0) for op in meta["ops"]),
                        arena_bytes=int(meta["memory"]["arena_bytes"]),
                        constant_bytes=int(meta["memory"]["constant_bytes"]),
                        cpu=meta.get("target", {}).get("cpu"))
        except (OSError, ValueError, KeyError, TypeError, IndexError) as err:
            raise ModelError(f"{path} is not a compiled model folder ({err!r})") from err
        if not (path / "include" / f"tvmgen_{model.module}.h").is_file():
            raise ModelError(f"{path}/include/tvmgen_{model.module}.h is missing")
        return model

    def check_runs_on(self, board: Board) -> None:
        """Refuse a board whose CPU needs other kernel layouts than the model was compiled for."""
        if self.cpu is not None and get_cpu(self.cpu).kernel_features != board.cpu.kernel_features:
            raise ModelError(f"{self.path} was compiled for {self.cpu}; {board.name} has a {board.cpu.name}, "
                             "which needs other kernels", hint=f"compile it with --board {board.name}")

    @property
    def input_bytes(self) -> int:
        return _buffer_bytes(self.inputs)

    @property
    def output_bytes(self) -> int:
        return _buffer_bytes(self.outputs)

    def pack_inputs(self, tensors: list[bytes]) -> bytes:
        """Per-input-tensor bytes -> the firmware's input buffer."""
        if len(tensors) != len(self.inputs) or any(len(b) != t.bytes for b, t in zip(tensors, self.inputs)):
            expected = ", ".join(f"{t.name}: {t.bytes} bytes" for t in self.inputs)
            got = ", ".join(f"{len(b)} bytes" for b in tensors)
            raise ModelError(f"model {self.name} takes {expected}; got {got}")
        buffer = bytearray(self.input_bytes)
        for data, tensor in zip(tensors, self.inputs):
            buffer[tensor.offset:tensor.offset + tensor.bytes] = data
        return bytes(buffer)

    def unpack_outputs(self, buffer: bytes) -> list[bytes]:
        """The firmware's output buffer -> per-output-tensor bytes."""
        return [buffer[t.offset:t.offset + t.bytes] for t in self.outputs]


def _result_fields(tensor: Tensor) -> dict[str, int]:
    """How `results%` prints the first output: type, count, zero point, scale in Q16 thousandths."""
    scale_q16 = round((tensor.scale or 1.0) * 1000 * 65536)
    if tensor.dtype not in RESULT_TYPES or scale_q16 > INT32_MAX:
        return {"type": 0, "count": 0, "zero_point": 0, "scale_milli_q16": 0}
    result_type, element_bytes = RESULT_TYPES[tensor.dtype]
    return {"type": result_type, "count": tensor.bytes // element_bytes,
            "zero_point": tensor.zero_point, "scale_milli_q16": scale_q16}


def render_glue(model: CompiledModel) -> str:
    """model_glue.c: the model's buffers and run function as the core's `mtk_model`."""
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(FIRMWARE), undefined=jinja2.StrictUndefined,
                             keep_trailing_newline=True)
    return env.get_template("model_glue.c.j2").render(model=model, label=c_safe_label(model.name),
                                                      result=_result_fields(model.outputs[0]))


def c_safe_label(name: str) -> str:
    """A model file name as it may stand in a C string, a comment and the protocol's `m-model-[...]`."""
    return re.sub(r"[^A-Za-z0-9._+-]", "_", name)


def write_firmware_sources(model: CompiledModel, project: Path, glue: str) -> None:
    """Into a project folder: the firmware core (firmware/), the compiled model (model/) and the
    glue binding them (at `glue`, relative to the project)."""
    (project / "firmware").mkdir()
    for name in CORE_FILES:
        shutil.copy2(FIRMWARE / name, project / "firmware" / name)
    for part in ("include", "src"):
        shutil.copytree(model.path / part, project / "model" / part)
    shutil.copy2(model.path / "metadata.json", project / "model" / "metadata.json")
    (project / glue).write_text(render_glue(model))
