"""Per-layer variants: the layers a model can tune, their keys, and the tuning file users keep.

A layer key names an op by everything its kernel depends on: the op type, the shapes of its
inputs (weights and bias included) and output, its window (pooling), strides, dilation, padding and
depth multiplier, the output type unless int8, "lshift" when a channel's requantization shifts
left (which some kernels cannot do), and the CPU. Equal keys get equal kernels, in any
model. `mtk tune` measures the variants of each key in QEMU and writes to a JSON file (tuning
file), under the board whose estimated cycles it measured (the cycle model's, mtk.cycles: a QEMU board's own, or
with --emulate a physical board's, run on its core's QEMU board), the cycles of each variant, the code its kernels
take as if alone (its layer's function and the kernels only layers of that variant call, in the build that
measured it), the flash each variant takes (its weights and that code) over the leanest variant's, and the variant
chosen from them with `flash_per_instruction` bytes allowed per cycle saved (autotune.choose; null: no limit):

    {"format": "mtk-tuning/2",
     "boards": {"nucleo_l4r5zi": {
                 "<key>": {"schedule": {"kernel": "2x4/compact"},
                           "cycles": {"2x4/compact": 842439, "2x4/fused": 1758169, ...},
                           "code_bytes": {"2x4/compact": 984, "2x4/fused": 8816, ...},
                           "extra_flash_bytes": {"2x4/compact": 324, "2x4/fused": 8156, ...},
                           "flash_per_instruction": 1.0,
                           "emulated_on": "mps2/an386", "mtk_version": "0.1.0"}}}}

`mtk compile/run/bench/validate --board B --tuning FILE` compile each layer whose key the file holds for B with its
variant, every other layer with the default; a file holding other boards only is refused (load_tuning), so that
one board's choices are never taken for another's with other memory timing. Files of "mtk-tuning/1", the layers of
every board in one "layers" object each naming its "board", read the same and are rewritten as mtk-tuning/2 when
tuned again; their layers without code_bytes are priced by their weights, those counted in "instructions" (files
written before the cycle model) are measured again in cycles.
A layer's variant (ops/variants.Variant) is what the file, the messages and metadata.json call its "schedule":
{"kernel": id}, the id of its kernel in its family's table: for a GEMM (conv, fully connected, 1→N depthwise)
its micro-kernel's label, "<block>/<weights>"; for depthwise with several input channels
and average/max pooling a kernel's name (both kernels/table.py). Files of older versions hold a GEMM's as
{"block": "2x2", "weights": "int16"}: read the same.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from .configfile import read_json
from .errors import MtkError
from .fsutil import atomic_output_file
from .graph import Op
from .ops import op_def
from .ops.base import OpData
from .ops.variants import Variant

FORMAT = "mtk-tuning/2"
FORMAT_BY_LAYER = "mtk-tuning/1"   # the layers of every board together, each naming its board: read, rewritten
KEY_OPTIONS = ("filter_height", "filter_width", "stride_h", "stride_w", "dilation_h_factor", "dilation_w_factor",
               "padding", "depth_multiplier")


@dataclass(frozen=True)
class Layer:
    """An op whose kernel takes a variant."""

    data: OpData                    # the op prepared
    key: str
    variants: list[Variant]         # the default first

    @property
    def op(self) -> Op:
        return self.data.op

    @cached_property
    def weight_bytes(self) -> dict[str, int]:
        """By variant label: the flash of the variant's weights and tables (OpDef.weight_bytes)."""
        opdef = op_def(self.op.type)
        return {s.label: opdef.weight_bytes(self.data, s) for s in self.variants}

    def flash(self, code: dict[str, int | None] | None = None) -> dict[str, int]:
        """By variant label: the flash of its constants (weight_bytes) and of its own code, `code` by label (what
        `mtk tune`'s builds measured: codegen/code_size.py; a variant without is priced by its constants)."""
        return {label: size + ((code or {}).get(label) or 0) for label, size in self.weight_bytes.items()}

    def leanest(self, code: dict[str, int | None] | None = None) -> Variant:
        """The variant that takes the least flash (the first of equals): what others pay against."""
        flash = self.flash(code)
        return min(self.variants, key=lambda s: flash[s.label])

    def extra_flash(self, code: dict[str, int | None] | None = None) -> dict[str, int]:
        """By variant label: the flash it takes over the leanest variant's (bytes)."""
        flash = self.flash(code)
        lean = flash[self.leanest(code).label]
        return {label: size - lean for label, size in flash.items()}


@dataclass(frozen=True)
class Tuning:
    """Variants by layer key, and where they come from (named in errors)."""

    variants: dict[str, Variant] = field(default_factory=dict)
    source: str = "tuning"

    def variant(self, layer: Layer) -> Variant:
        chosen = self.variants.get(layer.key, layer.variants[0])
        if chosen not in layer.variants:
            raise MtkError(f"{self.source}: schedule {chosen.label} is not one op {layer.op.index} can take "
                           f"({', '.join(s.label for s in layer.variants)}) for layer '{layer.key}'",
                           hint="tune the model again with this mtk version (`mtk tune`)")
        return chosen


def _shape(shape) -> str:
    return "x".join(str(d) for d in shape)


def layer_key(data: OpData) -> str:
    op = data.op
    inputs = ",".join(_shape(t.shape) for t in data.inputs if t is not None)
    options = [f"{name}={op.options[name]}" for name in KEY_OPTIONS if name in op.options]
    dtype = [] if data.output.dtype == "int8" else [data.output.dtype]   # int16 pools: keys of int8 layers kept
    requant = getattr(data.params, "requant", None)   # a channel shifting left rules out the fused kernels
    lshift = ["lshift"] if requant is not None and requant.rshift_table is None else []
    return " ".join([op.type, f"in={inputs}", f"out={_shape(data.output.shape)}", *options, *dtype, *lshift,
                     data.cpu.name])


def tunable_layers(prepared: list[OpData]) -> list[Layer]:
    """The prepared ops whose kernels take a variant (ops.prepare_ops)."""
    layers = []
    for data in prepared:
        variants = op_def(data.op.type).variants(data)
        if variants:
            layers.append(Layer(data, layer_key(data), variants))
    return layers


# ---- the tuning file ---------------------------------------------------------------------------

Entries = dict[str, dict[str, Any]]   # a board's layers: by layer key, what `mtk tune` measured and chose


def read_entries(path: Path) -> dict[str, Entries]:
    """The layers of the tuning file at `path` by the board they were measured for, each checked (a file of
    FORMAT_BY_LAYER: its layers grouped by their "board"); MtkError naming the file if it is not one."""
    if not Path(path).exists():
        raise MtkError(f"tuning file {path} does not exist", hint="make one with `mtk tune model.tflite`")
    data = read_json(path, "tuning file")
    if not isinstance(data, dict) or data.get("format") not in (FORMAT, FORMAT_BY_LAYER):
        raise MtkError(f"{path} is not an mtk tuning file (expected an object with \"format\": \"{FORMAT}\" "
                       "and \"boards\")")
    if data["format"] == FORMAT_BY_LAYER:
        return _by_board(path, data.get("layers"))
    boards = data.get("boards")
    if not (isinstance(boards, dict) and all(isinstance(layers, dict) for layers in boards.values())):
        raise MtkError(f"tuning file {path}: \"boards\" is not an object of layers by board")
    for layers in boards.values():
        for key, entry in layers.items():
            _check_entry(path, key, entry)
    return boards


def _by_board(path: Path, layers: Any) -> dict[str, Entries]:
    """A FORMAT_BY_LAYER file's layers by the board each names (every `mtk tune` wrote one)."""
    if not isinstance(layers, dict):
        raise MtkError(f"{path} is not an mtk tuning file (expected an object with \"format\": \"{FORMAT_BY_LAYER}\" "
                       "and \"layers\")")
    boards: dict[str, Entries] = {}
    for key, entry in layers.items():
        _check_entry(path, key, entry)
        if not isinstance(entry.get("board"), str):
            raise MtkError(f"tuning file {path} ({FORMAT_BY_LAYER}): layer '{key}' does not name the board it was "
                           "measured on (\"board\")", hint="tune again with this mtk version (`mtk tune --board B`)")
        boards.setdefault(entry["board"], {})[key] = {k: v for k, v in entry.items() if k != "board"}
    return boards


def _check_entry(path: Path, key: str, entry: Any) -> None:
    if Variant.from_json(entry.get("schedule") if isinstance(entry, dict) else None) is None:
        raise MtkError(f"tuning file {path}: layer '{key}' has no valid schedule ({{\"kernel\": ...}})")
    for unit in ("instructions", "cycles", "code_bytes"):
        counts = entry.get(unit, {})
        if not (isinstance(counts, dict) and all(n is None or isinstance(n, int) for n in counts.values())):
            raise MtkError(f"tuning file {path}: layer '{key}' has {unit} that are not counts by schedule "
                           "(null: its build did not fit the board)")


def load_tuning(path: str | Path, board: str | None) -> Tuning:
    """The variants the tuning file at `path` holds for `board` (a board's name; for --emulate, the emulated board's):
    MtkError if it holds layers of other boards only. `board` None (a CPU without a board): every board's, refused
    where two give one layer key different variants."""
    boards = read_entries(Path(path))
    if board is not None:
        if boards and board not in boards:
            raise MtkError(f"tuning file {path} holds schedules measured for {', '.join(sorted(boards))}, none for "
                           f"{board} (each board's are chosen by its own estimated cycles)",
                           hint=f"tune for {board} into it: `mtk tune MODEL --board {board} --tuning {path}` "
                                "(--emulate for a physical board)")
        boards = {board: boards.get(board, {})}
    variants: dict[str, Variant] = {}
    measured_on: dict[str, str] = {}
    for name, layers in sorted(boards.items()):
        for key, entry in layers.items():
            variant = Variant.from_json(entry["schedule"])
            if variants.setdefault(key, variant) != variant:
                raise MtkError(f"tuning file {path}: layer '{key}' takes {variants[key].label} on "
                               f"{measured_on[key]} and {variant.label} on {name}", hint="say which with --board")
            measured_on.setdefault(key, name)
    return Tuning(variants, str(path))


def write_entries(path: Path, board: str, entries: Entries) -> None:
    """`entries` measured for `board` merged into the tuning file at `path` (created if missing; a file of
    FORMAT_BY_LAYER rewritten in FORMAT), written atomically."""
    boards = read_entries(path) if path.exists() else {}
    boards[board] = dict(sorted({**boards.get(board, {}), **entries}.items()))
    with atomic_output_file(path) as tmp:
        tmp.write_text(json.dumps({"format": FORMAT, "boards": dict(sorted(boards.items()))}, indent=1) + "\n")
