"""mtk as a Python library: the CLI's main jobs as functions returning typed results.

    import logging, mtk
    logging.basicConfig(level=logging.INFO)          # progress lines (silent without a handler)
    lib = mtk.compile("model_int8.tflite", "out/", board="mps2/an386")
    result = mtk.run("model_int8.tflite", board="mps2/an386", inputs="samples.npz")
    print(result.per_inference.median, result.outputs[0])

Errors are `mtk.MtkError` subclasses (ModelError, ToolMissing, TargetError, MismatchError), each
with the message and hint the CLI prints. Progress goes to the `mtk` logger, never to stdout/stderr.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .boards import DEFAULT_BOARD, get_board
from .compiled import CompiledModel
from .compiler import compile_model
from .pipeline import run_model
from .runoptions import RunOptions
from .runresult import RunResult
from .samples import Sample
from .quantize import QuantizeReport, quantize_model
from .tuning import Tuning, load_tuning

__all__ = ["compile", "run", "quantize"]


def _tuning(tuning: str | Path | Tuning | None, board: str | None) -> Tuning | None:
    return load_tuning(tuning, board) if isinstance(tuning, (str, Path)) else tuning


def compile(model: str | Path, output: str | Path, *, board: str | None = None, cpu: str | None = None,
            module_name: str = "default", workspace: str = "internal", tuning: str | Path | Tuning | None = None,
            force: bool = False) -> CompiledModel:
    """`mtk compile`: an int8 .tflite to a plain-C library folder at `output` (include/, src/,
    metadata.json), written atomically; returns what metadata.json holds, typed (its `path` is the
    folder). `board` sets the CPU and checks the model fits it.
    `tuning`: a tuning file from `mtk tune` (or a Tuning). A non-empty `output` needs `force`."""
    return compile_model(model, output, cpu=cpu, board=board, module_name=module_name, workspace=workspace,
                         force=force, tuning=_tuning(tuning, board))


def run(model: str | Path, board: str = DEFAULT_BOARD, *, inputs: str | Path | list[Sample] | None = None,
        calib: str | None = None, runs: int = 10, profile: bool = False, platform: str | None = None,
        tuning: str | Path | Tuning | None = None, build_dir: str | Path | None = None,
        random_samples: int = 1, **runner_options: Any) -> RunResult:
    """`mtk run`: compile `model` (quantized on the way with `calib` if it is float), build firmware
    for `board` on `platform` (default: baremetal for QEMU boards, zephyr for physical ones), run it
    and read back per-inference counts (`runs` timed), memory and outputs. `inputs`: an .npy/.npz
    file or a list of samples (one array per model input); default `random_samples` made-up ones.
    `runner_options`: runner, serial_number, port for a physical board."""
    board_info = get_board(board)
    options = RunOptions(board=board_info, platform=platform or board_info.caps.default_platform,
                         runs=runs, profile=profile, calib=calib,
                         build_dir=Path(build_dir) if build_dir is not None else None,
                         random_samples=random_samples, tuning=_tuning(tuning, board_info.name), runner_options=runner_options)
    return run_model(model, options, inputs)


def quantize(model: str | Path, calib: Any, output: str | Path | None = None, **options: Any) -> QuantizeReport:
    """`mtk quantize`: a float .tflite to full-integer int8 at `output` (default: beside it,
    _float -> _int8, never replacing an existing file unless force=True); returns the float-vs-int8
    report. `options`: eval_data, float_io, allow_float, calibration, percentile, mean, scale, force."""
    return quantize_model(model, calib, output, **options)
