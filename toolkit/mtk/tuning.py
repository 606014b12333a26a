"""Per-layer variants: the layers a model can tune, their keys, and the tuning file users keep.

A layer key names an op by everything its kernel depends on: the op type, the shapes of its
inputs (weights and bias included) and output, its window (pooling), strides, dilation, padding and
depth multiplier, the output type unless int8, "lshift" when a channel's requantization shifts
left (which some kernels cannot do), and the CPU. Equal keys get equal kernels, in any
model. `mtk tune` measures the variants of each key in QEMU and writes to a JSON file (tuning
file) the estimated cycles (the cycle model's, mtk.cycles), the code each variant's kernels take as if alone
(its layer's function and the kernels only layers of that variant call, in the build that measured it), the flash each variant takes (its weights and that code) over the leanest variant's,
and the variant chosen from them with `flash_per_instruction` bytes allowed per cycle saved (autotune.choose;
null: no limit):

    {"format": "mtk-tuning/1",
     "layers": {"<key>": {"schedule": {"kernel": "2x2/int16"},
                          "cycles": {"2x2/int8": 1042720, "2x2/int16": 950100},
                          "code_bytes": {"2x2/int8": 136, "2x2/int16": 152},
                          "extra_flash_bytes": {"2x2/int8": 0, "2x2/int16": 4112},
                          "flash_per_instruction": 1.0,
                          "board": "mps2/an386", "mtk_version": "0.1.0"}}}

Files written before code_bytes, extra_flash_bytes and flash_per_instruction existed read the same (the
format is unchanged: `mtk tune` adds them; a layer without code_bytes is priced by its weights); their layers counted in "instructions" (files written before
the cycle model) are measured again in cycles. `mtk compile/run/bench/validate --tuning FILE`
compile each layer whose key the file holds with its variant, every other layer with the default.
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

FORMAT = "mtk-tuning/1"
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

def read_entries(path: Path) -> dict[str, dict[str, Any]]:
    """The layers of the tuning file at `path`, each checked; MtkError naming the file if it is not one."""
    if not Path(path).exists():
        raise MtkError(f"tuning file {path} does not exist", hint="make one with `mtk tune model.tflite`")
    data = read_json(path, "tuning file")
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("layers"), dict):
        raise MtkError(f"{path} is not an mtk tuning file (expected an object with \"format\": \"{FORMAT}\" "
                       "and \"layers\")")
    for key, entry in data["layers"].items():
        if Variant.from_json(entry.get("schedule") if isinstance(entry, dict) else None) is None:
            raise MtkError(f"tuning file {path}: layer '{key}' has no valid schedule ({{\"kernel\": ...}})")
        for unit in ("instructions", "cycles", "code_bytes"):
            counts = entry.get(unit, {})
            if not (isinstance(counts, dict) and all(n is None or isinstance(n, int) for n in counts.values())):
                raise MtkError(f"tuning file {path}: layer '{key}' has {unit} that are not counts by schedule "
                               "(null: its build did not fit the board)")
    return data["layers"]


def load_tuning(path: str | Path) -> Tuning:
    entries = read_entries(Path(path))
    return Tuning({key: Variant.from_json(entry["schedule"]) for key, entry in entries.items()}, str(path))


def write_entries(path: Path, entries: dict[str, dict[str, Any]]) -> None:
    """`entries` merged into the tuning file at `path` (created if missing), written atomically."""
    merged = {**(read_entries(path) if path.exists() else {}), **entries}
    with atomic_output_file(path) as tmp:
        tmp.write_text(json.dumps({"format": FORMAT, "layers": dict(sorted(merged.items()))}, indent=1) + "\n")
