"""The firmware core (firmware/) and the glue binding a compiled model to it, as every platform's
project holds them: firmware/ (the core), model/ (the compiled model), the glue C file.

The core sees all inputs as one byte buffer and all outputs as another (compiled.py's
`IOTensor.offset`, `CompiledModel.pack_inputs`).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import jinja2

from ..compiled import CompiledModel, IOTensor
from ..mlperf import Benchmark
from ..names import safe_label
from ..paths import FIRMWARE

CORE_FILES = ("mtk_core.c", "mtk_mlperf.c", "mtk_core.h", "mtk_port.h", "mtk_model.h", "mtk_layer_hook.h", "mtk_semihosting.h")
# dtype -> (enum mtk_result_type, element bytes)
RESULT_TYPES = {"int8": (1, 1), "uint8": (2, 1), "int16": (3, 2), "int32": (4, 4)}
INT32_MAX = 2**31 - 1


def _result_fields(tensor: IOTensor) -> dict[str, int]:
    """How `results%` prints the first output: type, count, zero point, scale in Q16 thousandths."""
    scale_q16 = round((tensor.scale or 1.0) * 1000 * 65536)
    if tensor.dtype not in RESULT_TYPES or scale_q16 > INT32_MAX:
        return {"type": 0, "count": 0, "zero_point": 0, "scale_milli_q16": 0}
    result_type, element_bytes = RESULT_TYPES[tensor.dtype]
    return {"type": result_type, "count": tensor.bytes // element_bytes,
            "zero_point": tensor.zero_point or 0, "scale_milli_q16": scale_q16}


def render_glue(model: CompiledModel, benchmark: Benchmark | None = None) -> str:
    """model_glue.c: the model's buffers and run function as the core's `mtk_model`; with an MLPerf
    Tiny benchmark, its `db` buffer, input conversion and results format."""
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(FIRMWARE), undefined=jinja2.StrictUndefined,
                             keep_trailing_newline=True)
    return env.get_template("model_glue.c.j2").render(
        model=model, label=safe_label(model.name), result=_result_fields(model.outputs[0]),
        benchmark=benchmark.glue_fields(model) if benchmark else None)


def write_firmware_sources(model: CompiledModel, project: Path, glue: str, benchmark: Benchmark | None = None) -> None:
    """Into a project folder: the firmware core (firmware/), the compiled model (model/) and the
    glue binding them (at `glue`, relative to the project)."""
    (project / "firmware").mkdir()
    for name in CORE_FILES:
        shutil.copy2(FIRMWARE / name, project / "firmware" / name)
    for part in ("include", "src"):
        shutil.copytree(model.path / part, project / "model" / part)
    model.write_metadata(project / "model")
    (project / glue).write_text(render_glue(model, benchmark))
