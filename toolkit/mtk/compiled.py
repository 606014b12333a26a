"""The compiled model, typed: what `mtk compile` made and every later stage takes.

The compiler returns a `CompiledModel` and writes `metadata.json` from it (`to_json`); platforms,
the pipeline, hostrun and the commands take it in memory. `CompiledModel.load` reads a folder back,
only where a command starts from one (`mtk project compiled/`, hostrun on a folder).

The firmware sees all inputs as one byte buffer (each tensor at a multiple of TENSOR_ALIGN, in
metadata order) and all outputs likewise: `IOTensor.offset`, `pack_inputs`, `unpack_outputs`.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Sequence

from . import __version__
from .codegen.memory_plan import ALIGNMENT, Buffer, packed_offsets
from .errors import ModelError
from .names import identifier_read_back, is_plain_relative_path

TENSOR_ALIGN = ALIGNMENT   # MTK_TENSOR_ALIGN in firmware/mtk_model.h
METADATA = "metadata.json"
TILED_IMPL = "tiled:"   # metadata.json's impl of an op in a tiled stage: "tiled:<its kernels' impl>"


@dataclass(frozen=True)
class IOTensor:
    """A model input or output."""

    name: str
    c_name: str            # its member in struct tvmgen_<module>_inputs/outputs
    shape: tuple[int, ...]
    dtype: str             # numpy dtype name
    scale: float | None
    zero_point: int | None
    bytes: int
    offset: int = 0        # in the firmware's input or output buffer (not in metadata.json)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "c_name": self.c_name, "shape": list(self.shape), "dtype": self.dtype,
                "scale": self.scale, "zero_point": self.zero_point, "bytes": self.bytes}

    @classmethod
    def from_json(cls, e: dict[str, Any]) -> IOTensor:
        return cls(str(e["name"]), identifier_read_back(e["c_name"], "c_name"), tuple(int(d) for d in e["shape"]), str(e["dtype"]),
                   None if e["scale"] is None else float(e["scale"]),
                   None if e["zero_point"] is None else int(e["zero_point"]), int(e["bytes"]))


def with_buffer_offsets(tensors: list[IOTensor]) -> tuple[IOTensor, ...]:
    """The tensors placed one after another in one buffer, each at a multiple of TENSOR_ALIGN (the memory
    plan's I/O blocks are laid out alike)."""
    return tuple(replace(t, offset=o) for t, o in zip(tensors, packed_offsets([t.bytes for t in tensors])))


@dataclass(frozen=True)
class CompiledOp:
    """One op of the model as compiled: its kernel function(s) and how they compute it."""

    index: int
    type: str
    input_shapes: list[list[int] | None]
    output_shape: list[int]
    macs: int
    kernel: str | list[str] | None   # the C symbol(s) the run function calls for it; None: an alias
    impl: str                        # "tvm", "c", "tvm+c:<micro-kernels>", or "alias" (shares its input's memory)
    layer_key: str | None = None     # tunable layers (tuning.py): its key and the variant it took
    variant: dict[str, str | int] | None = None
    tiled: bool = False              # it runs in a tiled stage, whose first op's kernel makes the calls
    code_bytes: int | None = None    # .text its layer's kernels take as if alone (codegen/code_size.own_code)

    def to_json(self) -> dict[str, Any]:
        out = {"index": self.index, "type": self.type, "input_shapes": self.input_shapes,
               "output_shape": self.output_shape, "macs": self.macs, "kernel": self.kernel,
               "impl": TILED_IMPL + self.impl if self.tiled else self.impl}
        if self.code_bytes is not None:
            out["code_bytes"] = self.code_bytes
        if self.layer_key is not None:
            out.update(layer_key=self.layer_key, schedule=self.variant)   # metadata.json's name for it
        return out

    @classmethod
    def from_json(cls, e: dict[str, Any]) -> CompiledOp:
        impl = str(e["impl"])
        return cls(int(e["index"]), str(e["type"]), e["input_shapes"], e["output_shape"], int(e["macs"]),
                   e["kernel"], impl.removeprefix(TILED_IMPL), e.get("layer_key"), e.get("schedule"),
                   impl.startswith(TILED_IMPL), None if e.get("code_bytes") is None else int(e["code_bytes"]))


@dataclass(frozen=True)
class RegionUse:
    """The arena's pool in one RAM region of the board: its size (the peak of its buffers' plan), the
    room the region has for it, and its live bytes at each op step."""

    name: str
    arena_bytes: int
    limit_bytes: int
    live_bytes: tuple[int, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "arena_bytes": self.arena_bytes, "limit_bytes": self.limit_bytes,
                "live_bytes": list(self.live_bytes)}

    @classmethod
    def from_json(cls, e: dict[str, Any]) -> RegionUse:
        return cls(identifier_read_back(e["name"], "RAM region"), int(e["arena_bytes"]), int(e["limit_bytes"]),
                   tuple(int(v) for v in e["live_bytes"]))


@dataclass(frozen=True)
class RamConstants:
    """The model's constants one RAM region holds (--weights-in-ram), copied there from flash at startup: their
    bytes, and each array's bytes and alignment."""

    name: str
    constant_bytes: int
    arrays: tuple[tuple[int, int], ...]   # (bytes, the multiple its address is) of each array

    def to_json(self) -> dict[str, Any]:
        return {**self.summary(), "arrays": [list(a) for a in self.arrays]}

    def summary(self) -> dict[str, Any]:
        """Its region and bytes, as `mtk compile --json` and `mtk run --json` give them."""
        return {"name": self.name, "constant_bytes": self.constant_bytes}

    @classmethod
    def from_json(cls, e: dict[str, Any]) -> RamConstants:
        return cls(identifier_read_back(e["name"], "RAM region"), int(e["constant_bytes"]),
                   tuple((int(n), int(a)) for n, a in e["arrays"]))


def in_ram_bytes(shares: Sequence[RamConstants]) -> int:
    return sum(share.constant_bytes for share in shares)


def bytes_by_region(shares: Sequence[RamConstants]) -> str:
    """The constants' bytes in each RAM region, as a line says them: "DTCM 53,340 B, SRAM0 217,660 B"."""
    return ", ".join(f"{r.name} {r.constant_bytes:,} B" for r in shares)


def by_region(order: list[str], arrays: list[tuple[str, int, int]]) -> tuple[RamConstants, ...]:
    """Constant arrays, each (its region, bytes, alignment), gathered by region in `order` (the board's)."""
    return tuple(RamConstants(name, sum(n for r, n, _ in arrays if r == name),
                              tuple((n, a) for r, n, a in arrays if r == name))
                 for name in order if any(r == name for r, _, _ in arrays))


@dataclass(frozen=True)
class StateTensor:
    """A variable tensor: static storage outside the arena, kept between runs, reset by tvmgen_<module>_reset()."""

    name: str
    symbol: str            # its static array in src/tvmgen_<module>.c
    shape: tuple[int, ...]
    dtype: str
    bytes: int
    reset_value: int       # every element after a reset (TFLM: an int8 tensor's zero point, else 0)

    @property
    def size(self) -> int:
        """Its elements."""
        return math.prod(self.shape)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "symbol": self.symbol, "shape": list(self.shape), "dtype": self.dtype,
                "bytes": self.bytes, "reset_value": self.reset_value}

    @classmethod
    def from_json(cls, e: dict[str, Any]) -> StateTensor:
        return cls(str(e["name"]), str(e["symbol"]), tuple(int(d) for d in e["shape"]), str(e["dtype"]),
                   int(e["bytes"]), int(e["reset_value"]))


@dataclass(frozen=True)
class TiledStage:
    """A chain of layers the compiler tiled (codegen/tiling.py's Stage, as metadata.json gives it)."""

    ops: tuple[int, ...]
    types: tuple[str, ...]
    band_rows: int                 # rows a call computes (cached halos), or of a band of the last layer's output
    cached: bool                   # halo rows cached, else recomputed
    calls: int
    scratch_bytes: int
    moved_bytes: int
    extra_macs: int
    extra_instructions: int        # estimated (the core's Costs)
    band_cols: int = 0             # columns of a 2-D patch; 0: whole rows

    def to_json(self) -> dict[str, Any]:
        return {"ops": list(self.ops), "types": list(self.types),
                "rows_per_call" if self.cached else "band_rows": self.band_rows,
                **({"band_cols": self.band_cols} if self.band_cols else {}), "calls": self.calls,
                "halo": "cached" if self.cached else "recomputed", "scratch_bytes": self.scratch_bytes,
                "moved_bytes": self.moved_bytes, "extra_macs": self.extra_macs,
                "extra_instructions_estimate": self.extra_instructions}

    @classmethod
    def from_json(cls, e: dict[str, Any]) -> TiledStage:
        cached = e["halo"] == "cached"
        return cls(tuple(int(i) for i in e["ops"]), tuple(str(t) for t in e["types"]),
                   int(e["rows_per_call" if cached else "band_rows"]), cached, int(e["calls"]),
                   int(e["scratch_bytes"]), int(e["moved_bytes"]), int(e["extra_macs"]),
                   int(e["extra_instructions_estimate"]), int(e.get("band_cols", 0)))


@dataclass(frozen=True)
class Tiling:
    """What tiling chose (codegen/tiling.py): its stages, the arena before and after, what it costs."""

    stages: tuple[TiledStage, ...]
    untiled_arena_bytes: int
    arena_bytes: int
    extra_macs: int
    extra_macs_percent: float          # of the untiled model's MACs
    extra_instructions: int            # estimated (the core's Costs)
    extra_instructions_percent: float  # of the untiled model's instructions, estimated as its MACs' cost
    untiled_live_bytes: tuple[int, ...] = ()   # the untiled plan's live bytes at each op step

    def to_json(self) -> dict[str, Any]:
        return {"untiled_arena_bytes": self.untiled_arena_bytes, "arena_bytes": self.arena_bytes,
                "extra_macs": self.extra_macs, "extra_macs_percent": self.extra_macs_percent,
                "extra_instructions_estimate": self.extra_instructions,
                "extra_instructions_percent": self.extra_instructions_percent,
                "stages": [s.to_json() for s in self.stages], "untiled_live_bytes": list(self.untiled_live_bytes)}

    @classmethod
    def from_json(cls, e: dict[str, Any]) -> Tiling:
        return cls(tuple(TiledStage.from_json(s) for s in e["stages"]), int(e["untiled_arena_bytes"]),
                   int(e["arena_bytes"]), int(e["extra_macs"]), float(e["extra_macs_percent"]),
                   int(e["extra_instructions_estimate"]), float(e["extra_instructions_percent"]),
                   tuple(int(v) for v in e.get("untiled_live_bytes", ())))


@dataclass(frozen=True)
class MemoryUse:
    """RAM and flash the model takes (the firmware around it not counted)."""

    workspace: str                 # "internal": a static arena in the library; "external": the caller's
    arena_bytes: int
    lower_bound_bytes: int         # no plan can use less arena
    io_bytes: int                  # inputs and outputs, each at its own size (their places are in the arena)
    constant_bytes: int            # weights and tables (in flash, and in RAM too with constants_in_ram)
    code_bytes: int | None         # .text of the generated C (arm-none-eabi-gcc -O2); None: no compiler here
    plan: tuple[Buffer, ...] = ()
    stack_bytes: int | None = None   # the generated C's deepest call chain (codegen/stack_bound.py); None: unknown
    state_bytes: int = 0           # the state region (variable tensors), static RAM beside the arena
    live_bytes: tuple[int, ...] = ()        # arena bytes live at each op step (the ops' order)
    arena_limit_bytes: int | None = None    # the board's room for the arena (RAM − state, stack)
    regions: tuple[RegionUse, ...] = ()     # by RAM region, for a board with several (codegen/regions.py)
    tiling: Tiling | None = None            # the tiled stages, arena before/after, extra MACs (codegen/tiling.py)
    constants_in_ram: tuple[RamConstants, ...] = ()   # by RAM region, the constants copied there at startup; (): flash

    @property
    def constants_in_ram_bytes(self) -> int:
        return in_ram_bytes(self.constants_in_ram)

    @property
    def constants_regions(self) -> tuple[str, ...]:
        """The RAM regions the constants are copied into at startup; (): they stay in flash."""
        return tuple(r.name for r in self.constants_in_ram)

    def to_json(self) -> dict[str, Any]:
        out = {"workspace": self.workspace, "arena_bytes": self.arena_bytes,
               "lower_bound_bytes": self.lower_bound_bytes, "io_bytes": self.io_bytes,
               "constant_bytes": self.constant_bytes, "code_bytes": self.code_bytes,
               "plan": [b.to_json() for b in self.plan]}
        optional = {"state_bytes": self.state_bytes, "live_bytes": list(self.live_bytes),
                    "arena_limit_bytes": self.arena_limit_bytes, "regions": [r.to_json() for r in self.regions],
                    "tiling": self.tiling.to_json() if self.tiling else None, "stack_bytes": self.stack_bytes,
                    "constants_in_ram": [r.to_json() for r in self.constants_in_ram]}
        return {**out, **{k: v for k, v in optional.items() if v}}

    @classmethod
    def from_json(cls, e: dict[str, Any]) -> MemoryUse:
        limit = e.get("arena_limit_bytes")
        return cls(str(e["workspace"]), int(e["arena_bytes"]), int(e["lower_bound_bytes"]), int(e["io_bytes"]),
                   int(e["constant_bytes"]), None if e["code_bytes"] is None else int(e["code_bytes"]),
                   tuple(Buffer.from_json(b) for b in e["plan"]),
                   None if e.get("stack_bytes") is None else int(e["stack_bytes"]), int(e.get("state_bytes", 0)),
                   tuple(int(v) for v in e.get("live_bytes", ())), None if limit is None else int(limit),
                   tuple(RegionUse.from_json(r) for r in e.get("regions", ())),
                   Tiling.from_json(e["tiling"]) if e.get("tiling") else None,
                   tuple(RamConstants.from_json(r) for r in e.get("constants_in_ram", ())))


@dataclass(frozen=True)
class CompiledTarget:
    cpu: str | None                # None: plain C that runs on any Cortex-M (test fixtures)
    dsp: bool
    mve: bool
    fpu: str | None
    board: str | None = None       # the board whose limits the model was checked against, if any

    def to_json(self) -> dict[str, Any]:
        return {"cpu": self.cpu, "dsp": self.dsp, "mve": self.mve, "fpu": self.fpu, "board": self.board}


@dataclass(frozen=True)
class CompiledModel:
    module: str                    # C prefix: tvmgen_<module>_run
    model: str                     # the .tflite file's name
    target: CompiledTarget
    inputs: tuple[IOTensor, ...]
    outputs: tuple[IOTensor, ...]
    ops: tuple[CompiledOp, ...]
    memory: MemoryUse
    files: tuple[str, ...] = ()    # relative to the folder
    state: tuple[StateTensor, ...] = ()
    mtk_version: str = __version__
    path: Path | None = None       # the folder holding it (None until written)

    def __post_init__(self) -> None:
        object.__setattr__(self, "inputs", with_buffer_offsets(list(self.inputs)))
        object.__setattr__(self, "outputs", with_buffer_offsets(list(self.outputs)))

    # ---- figures --------------------------------------------------------------------------------

    @property
    def name(self) -> str:
        return self.model

    @property
    def cpu(self) -> str | None:
        return self.target.cpu

    @property
    def op_count(self) -> int:
        return len(self.ops)

    @property
    def macs(self) -> int:
        return sum(op.macs for op in self.ops)

    @property
    def arena_bytes(self) -> int:
        return self.memory.arena_bytes

    @property
    def constant_bytes(self) -> int:
        return self.memory.constant_bytes

    @property
    def external_workspace(self) -> bool:
        return self.memory.workspace == "external"

    @property
    def input_bytes(self) -> int:
        """The firmware's input buffer."""
        return _buffer_bytes(self.inputs)

    @property
    def output_bytes(self) -> int:
        """The firmware's output buffer."""
        return _buffer_bytes(self.outputs)

    # ---- the firmware's I/O buffers -------------------------------------------------------------

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

    # ---- metadata.json --------------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        out = {
            "mtk_version": self.mtk_version, "module": self.module, "model": self.model,
            "target": self.target.to_json(),
            "inputs": [t.to_json() for t in self.inputs], "outputs": [t.to_json() for t in self.outputs],
            "ops": [op.to_json() for op in self.ops], "macs": self.macs,
            "memory": self.memory.to_json(), "files": list(self.files),
        }
        return {**out, "state": [s.to_json() for s in self.state]} if self.state else out   # a model with state

    def write_metadata(self, folder: Path) -> None:
        (Path(folder) / METADATA).write_text(json.dumps(self.to_json(), indent=1) + "\n")

    @classmethod
    def from_json(cls, meta: dict[str, Any], path: Path | None = None) -> CompiledModel:
        target = meta["target"]
        files = tuple(meta["files"])
        if not all(is_plain_relative_path(f) for f in files):
            raise ValueError(f"files {[f for f in files if not is_plain_relative_path(f)][:3]} are not plain paths "
                             "inside the folder")
        if not meta["inputs"] or not meta["outputs"]:
            raise ValueError("a compiled model has inputs and outputs")
        return cls(module=identifier_read_back(meta["module"], "module"), model=str(meta["model"]),
                   target=CompiledTarget(target["cpu"], bool(target["dsp"]), bool(target["mve"]),
                                         target["fpu"], target["board"]),
                   inputs=tuple(IOTensor.from_json(e) for e in meta["inputs"]),
                   outputs=tuple(IOTensor.from_json(e) for e in meta["outputs"]),
                   ops=tuple(CompiledOp.from_json(e) for e in meta["ops"]),
                   memory=MemoryUse.from_json(meta["memory"]), files=files,
                   state=tuple(StateTensor.from_json(e) for e in meta.get("state", [])),
                   mtk_version=str(meta["mtk_version"]), path=path)

    @classmethod
    def load(cls, folder: str | Path) -> CompiledModel:
        """The compiled model in a folder `mtk compile` wrote; ModelError naming what is wrong if it is not one."""
        folder = Path(folder)
        path = folder / METADATA
        try:
            meta = json.loads(path.read_text())
        except OSError as err:
            raise ModelError(f"{folder} is not a compiled model folder: cannot read {path} "
                             f"({err.strerror or err})", hint="compile the model with `mtk compile`") from None
        except ValueError as err:
            raise ModelError(f"{path} is not valid JSON: {err}") from None
        try:
            model = cls.from_json(meta, folder)
        except (KeyError, TypeError, ValueError, AttributeError) as err:
            raise ModelError(f"{path} is not the metadata of a compiled model ({type(err).__name__}: {err})",
                             hint="compile the model again with this mtk version") from None
        if not (folder / "include" / f"tvmgen_{model.module}.h").is_file():
            raise ModelError(f"{folder}/include/tvmgen_{model.module}.h is missing")
        return model


def _buffer_bytes(tensors: tuple[IOTensor, ...]) -> int:
    return tensors[-1].offset + tensors[-1].bytes if tensors else 0
