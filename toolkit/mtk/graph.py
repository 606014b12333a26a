"""The model as a small typed graph: what every stage after the reader works on."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .names import c_identifier


@dataclass(frozen=True)
class Quant:
    """Affine quantization: real = scale * (q - zero_point), per tensor or per channel along `axis`."""

    scale: np.ndarray        # float64, 1-D
    zero_point: np.ndarray   # int64, 1-D, same length as scale
    axis: int = 0

    @property
    def per_channel(self) -> bool:
        return len(self.scale) > 1

    @property
    def s(self) -> float:
        """Per-tensor scale."""
        return float(self.scale[0])

    @property
    def zp(self) -> int:
        """Per-tensor zero point."""
        return int(self.zero_point[0])


@dataclass
class Tensor:
    index: int
    name: str
    shape: tuple[int, ...]
    dtype: str                          # numpy dtype name: "int8", "int32", "float32", ...
    quant: Quant | None = None
    data: np.ndarray | None = None      # constant contents (shape `shape`), None for activations
    variable: bool = False              # state kept between inferences (SVDF's activation state)

    @property
    def is_constant(self) -> bool:
        return self.data is not None

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        return self.size * np.dtype(self.dtype).itemsize

    @property
    def c_name(self) -> str:
        return c_identifier(self.name)


@dataclass
class Op:
    index: int
    type: str                           # TFLite builtin name, e.g. "CONV_2D"
    inputs: list[int | None]            # tensor indices; None for an omitted optional input
    outputs: list[int]
    options: dict[str, Any] = field(default_factory=dict)   # snake_case builtin options, enums as names


@dataclass
class Graph:
    name: str
    tensors: list[Tensor]
    ops: list[Op]
    inputs: list[int]
    outputs: list[int]
    source: Path | None = None

    def tensor(self, index: int | None) -> Tensor | None:
        return None if index is None else self.tensors[index]

    def input_tensors(self, op: Op) -> list[Tensor | None]:
        return [self.tensor(i) for i in op.inputs]

    def output_tensors(self, op: Op) -> list[Tensor]:
        return [self.tensors[i] for i in op.outputs]

    def producers(self) -> dict[int, Op]:
        return {t: op for op in self.ops for t in op.outputs}

    def consumers(self) -> dict[int, list[Op]]:
        users: dict[int, list[Op]] = {}
        for op in self.ops:
            for t in op.inputs:
                if t is not None:
                    users.setdefault(t, []).append(op)
        return users
