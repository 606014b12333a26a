"""`mtk compile`: graph -> op kernels (TVM) -> storage plan -> AOT program (C library) -> CompiledModel.

Orchestration only: ops lower themselves (ops/), codegen/storage.py places the tensors,
codegen/aot.py binds the kernels into the run function and emits the C, compiled.py is the result
(metadata.json), budget.py checks it against a board.
"""

from __future__ import annotations

from dataclasses import asdict, replace
from pathlib import Path

from . import ui
from .boards import get_board
from .budget import check_fits
from .buildfiles import folder_layout, fragments
from .codegen import aot
from .codegen.code_size import measure_code_bytes
from .codegen.storage import Step, join_aliases, plan_storage
from .compiled import CompiledModel, CompiledOp, CompiledTarget, MemoryUse, PlacedBuffer
from .errors import ModelError
from .fsutil import atomic_output_dir
from .graph import Graph, Op
from .names import module as module_identifier
from .ops import op_def
from .ops.base import Lowered
from .ops.gemm import GemmSchedule
from .reader import read_model
from .target import DEFAULT_CPU, Cpu, get_cpu
from .tuning import Layer, Tuning, tunable_layers

EDGE_OPS = ("QUANTIZE", "DEQUANTIZE")
KERNEL_HEADERS = Path(__file__).parent / "ops" / "c"


def check_supported(graph: Graph) -> None:
    """Whole-model checks first, then every op; all unsupported ops are reported at once."""
    path = graph.source or graph.name
    compute_inputs = {i for op in graph.ops if op.type not in EDGE_OPS for i in op.inputs if i is not None}
    float_compute = [graph.tensors[i] for i in compute_inputs
                     if graph.tensors[i].dtype.startswith("float") and not graph.tensors[i].is_constant]
    if float_compute:
        int8_weights = any(t.is_constant and t.dtype == "int8" for t in graph.tensors)
        if int8_weights:
            raise ModelError(f"{path} is a dynamic-range quantized model (float activations, int8 weights); "
                             "mtk needs full-integer int8 models",
                             hint="quantize the float model with `mtk quantize model.tflite --calib data.npy`")
        raise ModelError(f"{path} is a float model (tensor '{float_compute[0].name}' is {float_compute[0].dtype})",
                         hint="quantize it first with `mtk quantize model.tflite --calib data.npy -o model_int8.tflite`")
    problems = []
    for op in graph.ops:
        opdef = op_def(op.type)
        if opdef is None:
            problems.append(f"op {op.index}: {op.type} ({op_dtypes(op, graph)}) is not supported")
            continue
        try:
            opdef.check(op, graph)
        except ModelError as err:
            problems.append(at_op(op, err.message))
    if problems:
        raise ModelError(f"{path}: {len(problems)} unsupported op(s):\n    " + "\n    ".join(problems),
                         hint="supported ops: " + ", ".join(sorted(_supported_types())))


def op_dtypes(op: Op, graph: Graph) -> str:
    """The element types an op computes on, as an error message names them: 'int16', 'int8 -> int32'."""
    def names(indices) -> list[str]:
        tensors = [graph.tensors[i] for i in indices if i is not None]
        return list(dict.fromkeys(t.dtype for t in tensors if not t.is_constant)) or \
            list(dict.fromkeys(t.dtype for t in tensors))
    ins, outs = names(op.inputs), names(op.outputs)
    return "/".join(ins) if ins == outs or not ins else f"{'/'.join(ins)} -> {'/'.join(outs)}"


def at_op(op: Op, message: str) -> str:
    """`message` prefixed with the op it is about, unless it already names it."""
    prefix = f"op {op.index} ({op.type})"
    return message if message.startswith(prefix) else f"{prefix}: {message}"


def _supported_types() -> list[str]:
    from .ops import registry
    return list(registry())


def lower_ops(graph: Graph, cpu: Cpu, tuning: Tuning) -> tuple[list[Step], dict[int, tuple[Layer, GemmSchedule]]]:
    """Every op's kernels, in order; the tunable layers' schedules by op index."""
    layers = {layer.op.index: layer for layer in tunable_layers(graph, cpu)}
    steps: list[Step] = []
    scheduled: dict[int, tuple[Layer, GemmSchedule]] = {}
    for op in graph.ops:
        opdef = op_def(op.type)
        try:
            if op.index in layers:
                schedule = tuning.schedule(layers[op.index])
                scheduled[op.index] = (layers[op.index], schedule)
                low = opdef.lower_scheduled(op, graph, cpu, schedule)
            else:
                low = opdef.lower(op, graph, cpu)
        except ModelError as err:
            raise ModelError(at_op(op, err.message), err.hint) from None
        low.kernels = [aot.without_unused_params(k) for k in low.kernels]
        steps.append((op, low))
    return steps, scheduled


def compile_model(model_path: str | Path, out_dir: str | Path, *, cpu: str | Cpu | None = None,
                  board: str | None = None, module_name: str = "default", workspace: str = "internal",
                  force: bool = False, tuning: Tuning | None = None) -> CompiledModel:
    """Compile `model_path` into a C library folder at `out_dir` (written atomically); layers whose key
    `tuning` holds take its schedule, the others the default. With `board`, refuse a model that
    does not fit it (budget.py)."""
    board_info = get_board(board) if board is not None else None
    cpu_obj = cpu if isinstance(cpu, Cpu) else get_cpu(cpu or (board_info.cpu.name if board_info else DEFAULT_CPU))
    module = module_identifier(module_name)   # a prefix: tvmgen_<module>_run
    if workspace not in ("internal", "external"):
        raise ModelError(f"--workspace must be 'internal' or 'external', not '{workspace}'")
    model_name = Path(model_path).name

    with ui.step(f"reading {model_name}"):
        graph = read_model(model_path)
        check_supported(graph)
    with ui.step(f"lowering {len(graph.ops)} ops through TVM TE/TIR for {cpu_obj.name}"):
        steps, scheduled = lower_ops(graph, cpu_obj, tuning or Tuning())
        steps, aliases = join_aliases(graph, steps)
        storage = plan_storage(graph, steps, aliases)
    with ui.step("generating C"):
        program = aot.build_program(graph, steps, storage, module, model_name, workspace == "external")
        files = {
            f"include/tvmgen_{module}.h": program.header(),
            f"src/tvmgen_{module}.c": program.run_source(),
            f"src/tvmgen_{module}_kernels.c": program.kernels.source(cpu_obj),
        }
        files.update({f"src/{h}": (KERNEL_HEADERS / h).read_text() for h in program.kernels.headers})

    plan = storage.plan
    compiled = CompiledModel(
        module=module, model=model_name,
        target=CompiledTarget(cpu_obj.name, cpu_obj.dsp, cpu_obj.mve, cpu_obj.fpu,
                              board_info.name if board_info else None),
        inputs=program.inputs, outputs=program.outputs,
        ops=tuple(_compiled_op(op, low, graph, program, scheduled.get(op.index)) for op, low in steps),
        memory=MemoryUse(
            workspace=workspace, arena_bytes=plan.arena_bytes, lower_bound_bytes=plan.lower_bound_bytes,
            io_bytes=sum(t.bytes for t in program.inputs + program.outputs),
            constant_bytes=program.constants.nbytes, code_bytes=measure_code_bytes(files, cpu_obj),
            plan=tuple(PlacedBuffer(b.name, b.offset, b.nbytes, b.first_use, b.last_use)
                       for b in sorted(plan.buffers, key=lambda b: (b.first_use, b.offset)))),
        files=tuple(sorted(files)))
    files.update(fragments(compiled, folder_layout(compiled)))   # CMakeLists.txt, tvmgen_<module>.mk
    compiled = replace(compiled, files=tuple(sorted(files)))
    if board_info is not None:
        check_fits(compiled, board_info)

    with atomic_output_dir(Path(out_dir), force=force) as tmp:
        for rel, text in files.items():
            (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
            (tmp / rel).write_text(text)
        compiled.write_metadata(tmp)
    return replace(compiled, path=Path(out_dir).resolve())


def _compiled_op(op: Op, low: Lowered, graph: Graph, program: aot.AotProgram,
                 scheduled: tuple[Layer, GemmSchedule] | None) -> CompiledOp:
    symbols = program.symbols(op.index)
    layer, schedule = scheduled or (None, None)
    return CompiledOp(
        index=op.index, type=op.type,
        input_shapes=[list(graph.tensors[i].shape) if i is not None else None for i in op.inputs],
        output_shape=list(graph.tensors[op.outputs[0]].shape),
        macs=op_def(op.type).macs(op, graph),
        kernel=symbols[0] if len(symbols) == 1 else (symbols or None),
        impl="alias" if not low.kernels else "+".join(sorted({k.impl for k in low.kernels})),
        layer_key=layer.key if layer else None, schedule=asdict(schedule) if schedule else None)
