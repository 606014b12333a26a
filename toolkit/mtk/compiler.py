"""`mtk compile`: graph -> op kernels (TVM) -> memory plan -> AOT C library + metadata.json."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import tvm_ffi

from . import __version__, ui
from .boards import fitting_boards_hint, get_board
from .codegen import aot, tvm_c
from .codegen.memory_plan import Buffer, MemoryPlan, plan_memory
from .errors import ModelError
from .fsutil import atomic_output_dir
from .graph import Graph, Op, Tensor, c_identifier
from .ops import op_def
from .ops.base import Const, Kernel, Lowered, Scratch
from .ops.fixedpoint import FIXEDPOINT_HEADER
from .ops.gemm import GemmSchedule
from .reader import read_model
from .target import DEFAULT_CPU, Cpu, get_cpu
from .tuning import Layer, Tuning, tunable_layers

EDGE_OPS = ("QUANTIZE", "DEQUANTIZE")
KERNEL_HEADERS = Path(__file__).parent / "ops" / "c"
_PROTOTYPE = re.compile(r"^int32_t (\w+)\(([^)]*)\) \{", re.M)


@dataclass
class CompileResult:
    out_dir: Path
    metadata: dict
    files: list[str] = field(default_factory=list)


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
            problems.append(err.message)
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


def _supported_types() -> list[str]:
    from .ops import registry
    return list(registry())


class _AliasSets:
    """Tensors that share one storage (RESHAPE and friends): a union-find over tensor indices."""

    def __init__(self) -> None:
        self.parent: dict[int, int] = {}

    def root(self, t: int) -> int:
        while self.parent.get(t, t) != t:
            t = self.parent[t]
        return t

    def members(self, t: int, universe: range) -> list[int]:
        r = self.root(t)
        return [u for u in universe if self.root(u) == r]

    def join(self, a: int, b: int) -> None:
        self.parent[self.root(b)] = self.root(a)


def _copy_kernel(op: Op, graph: Graph) -> Kernel:
    """A reshape whose input and output cannot share storage (e.g. model input straight to model output)."""
    nbytes = graph.tensors[op.outputs[0]].nbytes
    src = (f"int32_t copy_{nbytes}(void* src, void* dst) {{\n"
           f"  for (size_t i = 0; i < {nbytes}u; ++i) ((uint8_t*)dst)[i] = ((const uint8_t*)src)[i];\n"
           "  return 0;\n}\n")
    return Kernel("copy", [op.inputs[0], op.outputs[0]], c_source=src, c_name=f"copy_{nbytes}")


def _drop_unused_args(kernel: Kernel) -> Kernel:
    """A TVM kernel without the parameters its body never touches (and their arguments)."""
    if kernel.func is None:
        return kernel
    drop = tvm_c.unused_params(kernel.func)
    if not drop:
        return kernel
    return Kernel(kernel.name, [a for i, a in enumerate(kernel.args) if i not in drop],
                  func=tvm_c.without_params(kernel.func, drop), headers=kernel.headers)


class _Builder:
    """Turns lowered ops into the plan, the C sources and the metadata."""

    def __init__(self, graph: Graph, cpu: Cpu, module: str, external_workspace: bool, tuning: Tuning):
        self.graph, self.cpu, self.module, self.external = graph, cpu, module, external_workspace
        self.tuning = tuning
        self.lowered: list[tuple[Op, Lowered]] = []
        self.scheduled: dict[int, tuple[Layer, GemmSchedule]] = {}   # by op index
        self.aliases = _AliasSets()
        self.c_names = self._io_names()

    def _io_names(self) -> dict[int, str]:
        names: dict[int, str] = {}
        for t in self.graph.inputs + self.graph.outputs:
            base = c_identifier(self.graph.tensors[t].name)
            name, n = base, 1
            while name in names.values() and names.get(t) != name:
                n += 1
                name = f"{base}_{n}"
            names.setdefault(t, name)
        return names

    def external_kind(self, t: int) -> str | None:
        tensor = self.graph.tensors[t]
        if t in self.graph.inputs:
            return "input"
        if t in self.graph.outputs:
            return "output"
        return "const" if tensor.is_constant else None

    def lower_all(self) -> None:
        layers = {layer.op.index: layer for layer in tunable_layers(self.graph, self.cpu)}
        for op in self.graph.ops:
            opdef = op_def(op.type)
            if op.index in layers:
                schedule = self.tuning.schedule(layers[op.index])
                self.scheduled[op.index] = (layers[op.index], schedule)
                low = opdef.lower_scheduled(op, self.graph, self.cpu, schedule)
            else:
                low = opdef.lower(op, self.graph, self.cpu)
            low.kernels = [_drop_unused_args(k) for k in low.kernels]
            if low.alias_of is not None:
                group = set(self.aliases.members(low.alias_of, range(len(self.graph.tensors)))) | \
                        set(self.aliases.members(op.outputs[0], range(len(self.graph.tensors))))
                if sum(self.external_kind(t) is not None for t in group) <= 1:
                    self.aliases.join(low.alias_of, op.outputs[0])
                else:
                    low = Lowered([_copy_kernel(op, self.graph)])
            self.lowered.append((op, low))

    def plan(self) -> tuple[MemoryPlan, dict[int, Buffer], dict[tuple[int, int], Buffer]]:
        n_tensors = len(self.graph.tensors)
        first: dict[int, int] = {}
        last: dict[int, int] = {}
        for step, (op, low) in enumerate(self.lowered):
            for t in op.outputs:
                r = self.aliases.root(t)
                first.setdefault(r, step)
                last[r] = max(last.get(r, step), step)
            for t in op.inputs:
                if t is not None:
                    r = self.aliases.root(t)
                    first.setdefault(r, step)
                    last[r] = max(last.get(r, step), step)
        tensor_buffers: dict[int, Buffer] = {}
        for r in sorted(first):
            group = self.aliases.members(r, range(n_tensors))
            if any(self.external_kind(t) for t in group):
                continue
            name = self.graph.tensors[r].name
            tensor_buffers[r] = Buffer(name, max(self.graph.tensors[t].nbytes for t in group), first[r], last[r])
        scratch: dict[tuple[int, int], Buffer] = {}
        for step, (op, low) in enumerate(self.lowered):
            for k, kernel in enumerate(low.kernels):
                for a in kernel.args:
                    if isinstance(a, Scratch):
                        scratch[(step, k)] = Buffer(f"scratch:op{op.index}.{kernel.name}", a.nbytes, step, step)
        plan = plan_memory(list(tensor_buffers.values()) + list(scratch.values()))
        return plan, tensor_buffers, scratch

    def storage_expr(self, t: int, tensor_buffers: dict[int, Buffer], consts: "_Constants") -> str:
        group = self.aliases.members(t, range(len(self.graph.tensors)))
        for u in group:
            kind = self.external_kind(u)
            if kind == "input":
                return f"inputs->{self.c_names[u]}"
            if kind == "output":
                return f"outputs->{self.c_names[u]}"
            if kind == "const":
                return consts.symbol(c_identifier(self.graph.tensors[u].name), self.graph.tensors[u].data)
        return f"arena + {tensor_buffers[self.aliases.root(t)].offset}"


class _Constants:
    """Constant arrays in flash, each distinct content emitted once."""

    def __init__(self, module: str):
        self.module = module
        self.arrays: list[aot.ConstArray] = []
        self._by_content: dict[tuple[str, tuple, bytes], str] = {}

    def symbol(self, hint: str, data: np.ndarray) -> str:
        key = (data.dtype.str, data.shape, data.tobytes())
        if key not in self._by_content:
            sym = f"tvmgen_{self.module}_c{len(self.arrays)}_{hint[:40]}"
            self._by_content[key] = sym
            self.arrays.append(aot.ConstArray(sym, np.ascontiguousarray(data)))
        return self._by_content[key]


class _Kernels:
    """Kernel functions, structurally identical ones emitted once."""

    def __init__(self, module: str):
        self.module = module
        self.tvm_funcs: dict[str, object] = {}
        self.c_sources: dict[str, str] = {}
        self.headers: list[str] = [FIXEDPOINT_HEADER]

    def symbol(self, kernel: Kernel) -> str:
        self.headers += [h for h in kernel.headers if h not in self.headers]
        prefix = f"tvmgen_{self.module}_"
        if kernel.func is not None:
            for sym, func in self.tvm_funcs.items():
                if sym.startswith(prefix + kernel.name + "_") and tvm_ffi.structural_equal(func, kernel.func):
                    return sym
            sym = f"{prefix}{kernel.name}_{len(self.tvm_funcs) + len(self.c_sources)}"
            self.tvm_funcs[sym] = kernel.func
            return sym
        src = kernel.c_source
        for sym, existing in self.c_sources.items():
            if existing == re.sub(rf"\b{kernel.c_name}\b", sym, src):
                return sym
        sym = f"{prefix}{kernel.c_name}"
        if sym in self.c_sources:   # the same name for different code
            sym = f"{sym}_{len(self.c_sources)}"
        self.c_sources[sym] = re.sub(rf"\b{kernel.c_name}\b", sym, src)
        return sym

    def source(self, cpu: Cpu) -> str:
        parts = [aot.PRELUDE] + [f'#include "{h}"' for h in self.headers]
        parts += list(self.c_sources.values())
        parts.append(tvm_c.build_c(self.tvm_funcs, cpu))
        return "\n".join(parts)


def compile_model(model_path: str | Path, out_dir: str | Path, *, cpu: str | Cpu | None = None,
                  board: str | None = None, module_name: str = "default", workspace: str = "internal",
                  force: bool = False, tuning: Tuning | None = None) -> CompileResult:
    """Compile `model_path` into a C library folder at `out_dir` (written atomically); layers whose key
    `tuning` holds take its schedule, the others the default."""
    board_info = None
    if board is not None:
        board_info = get_board(board)
    cpu_obj = cpu if isinstance(cpu, Cpu) else get_cpu(cpu or (board_info.cpu.name if board_info else DEFAULT_CPU))
    module = re.sub(r"[^A-Za-z0-9_]", "_", module_name) or "default"   # a prefix: tvmgen_<module>_run
    if workspace not in ("internal", "external"):
        raise ModelError(f"--workspace must be 'internal' or 'external', not '{workspace}'")

    with ui.step(f"reading {Path(model_path).name}"):
        graph = read_model(model_path)
        check_supported(graph)
    builder = _Builder(graph, cpu_obj, module, workspace == "external", tuning or Tuning())
    with ui.step(f"lowering {len(graph.ops)} ops through TVM TE/TIR for {cpu_obj.name}"):
        builder.lower_all()
        plan, tensor_buffers, scratch = builder.plan()

    consts = _Constants(module)
    kernels = _Kernels(module)
    calls: list[aot.Call] = []
    op_meta = []
    with ui.step("generating C"):
        for step, (op, low) in enumerate(builder.lowered):
            symbols = []
            for k, kernel in enumerate(low.kernels):
                args = []
                for a in kernel.args:
                    if isinstance(a, Const):
                        args.append(f"(void*){consts.symbol(f'op{op.index}_{a.name}', a.data)}")
                    elif isinstance(a, Scratch):
                        args.append(f"(void*)(arena + {scratch[(step, k)].offset})")
                    else:
                        args.append(f"(void*)({builder.storage_expr(a, tensor_buffers, consts)})")
                sym = kernels.symbol(kernel)
                symbols.append(sym)
                calls.append(aot.Call(op.index, sym, args))
            out_t = graph.tensors[op.outputs[0]]
            op_meta.append({
                "index": op.index, "type": op.type,
                "input_shapes": [list(graph.tensors[i].shape) if i is not None else None for i in op.inputs],
                "output_shape": list(out_t.shape),
                "macs": op_def(op.type).macs(op, graph),
                "kernel": symbols[0] if len(symbols) == 1 else (symbols or None),
                "impl": "alias" if not low.kernels else ("+".join(sorted({k.impl for k in low.kernels}))),
            })
            if op.index in builder.scheduled:
                layer, schedule = builder.scheduled[op.index]
                op_meta[-1].update(layer_key=layer.key, schedule=asdict(schedule))
        kernel_src = kernels.source(cpu_obj)
        prototypes = [f"int32_t {m.group(1)}({m.group(2)});" for m in _PROTOTYPE.finditer(kernel_src)]
        inputs = [graph.tensors[i] for i in graph.inputs]
        outputs = [graph.tensors[i] for i in graph.outputs]
        run_src = aot.run_source(module, Path(model_path).name, consts.arrays, calls, prototypes,
                                 plan.arena_bytes, builder.external)
        header_src = aot.header(module, inputs, outputs, builder.c_names, plan.arena_bytes, builder.external)

    files = {
        f"include/tvmgen_{module}.h": header_src,
        f"src/tvmgen_{module}.c": run_src,
        f"src/tvmgen_{module}_kernels.c": kernel_src,
    }
    files.update({f"src/{h}": (KERNEL_HEADERS / h).read_text() for h in kernels.headers})
    code_bytes = measure_code_bytes(files, module, cpu_obj)
    metadata = _metadata(graph, builder, plan, tensor_buffers, consts, op_meta, cpu_obj, module,
                         Path(model_path).name, code_bytes, board_info)
    if board_info is not None:
        check_fits(metadata, board_info)

    with atomic_output_dir(Path(out_dir), force=force) as tmp:
        for rel, text in files.items():
            (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
            (tmp / rel).write_text(text)
        metadata["files"] = sorted(files)
        (tmp / "metadata.json").write_text(json.dumps(metadata, indent=1) + "\n")
    return CompileResult(Path(out_dir).resolve(), metadata, sorted(files))


def _tensor_meta(t: Tensor, c_name: str) -> dict:
    return {"name": t.name, "c_name": c_name, "shape": list(t.shape), "dtype": t.dtype,
            "scale": t.quant.s if t.quant else None, "zero_point": t.quant.zp if t.quant else None,
            "bytes": t.nbytes}


def _metadata(graph: Graph, builder: _Builder, plan: MemoryPlan, tensor_buffers: dict[int, Buffer],
              consts: _Constants, op_meta: list[dict], cpu: Cpu, module: str, model_name: str,
              code_bytes: int | None, board) -> dict:
    io_bytes = sum(graph.tensors[i].nbytes for i in graph.inputs + graph.outputs)
    return {
        "mtk_version": __version__,
        "module": module,
        "model": model_name,
        "target": {"cpu": cpu.name, "dsp": cpu.dsp, "mve": cpu.mve, "fpu": cpu.fpu,
                   "board": board.name if board else None},
        "inputs": [_tensor_meta(graph.tensors[i], builder.c_names[i]) for i in graph.inputs],
        "outputs": [_tensor_meta(graph.tensors[i], builder.c_names[i]) for i in graph.outputs],
        "ops": op_meta,
        "macs": sum(o["macs"] for o in op_meta),
        "memory": {
            "workspace": "external" if builder.external else "internal",
            "arena_bytes": plan.arena_bytes,
            "lower_bound_bytes": plan.lower_bound_bytes,
            "io_bytes": io_bytes,
            "constant_bytes": sum(c.nbytes for c in consts.arrays),
            "code_bytes": code_bytes,
            "plan": [{"tensor": b.name, "offset": b.offset, "bytes": b.nbytes,
                      "first_use": b.first_use, "last_use": b.last_use}
                     for b in sorted(plan.buffers, key=lambda b: (b.first_use, b.offset))],
        },
    }


def measure_code_bytes(files: dict[str, str], module: str, cpu: Cpu) -> int | None:
    """.text of the generated C built for the target with arm-none-eabi-gcc -O2, if that compiler is here."""
    gcc = shutil.which("arm-none-eabi-gcc")
    size = shutil.which("arm-none-eabi-size")
    if not gcc or not size:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        objs = []
        for rel, text in files.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text)
        for rel in files:
            if rel.endswith(".c"):
                obj = root / (Path(rel).stem + ".o")
                cmd = [gcc, *cpu.gcc_flags, "-O2", "-ffunction-sections", "-fdata-sections",
                       "-I", str(root / "include"), "-c", str(root / rel), "-o", str(obj)]
                if subprocess.run(cmd, capture_output=True).returncode != 0:
                    return None
                objs.append(str(obj))
        out = subprocess.run([size, "-A", *objs], capture_output=True, text=True).stdout
    return sum(int(m.group(1)) for m in re.finditer(r"^\.text\S*\s+(\d+)", out, re.M))


def check_fits(metadata: dict, board) -> None:
    mem = metadata["memory"]
    ram = mem["arena_bytes"] + mem["io_bytes"]
    flash = mem["constant_bytes"] + (mem["code_bytes"] or 0)
    hint = fitting_boards_hint(flash, ram)
    if ram > board.ram_bytes:
        raise ModelError(f"{metadata['model']} does not fit {board.name}: it needs {ram:,} B of RAM (arena "
                         f"{mem['arena_bytes']:,} + inputs/outputs {mem['io_bytes']:,}), {board.name} has "
                         f"{board.ram_bytes:,} B", hint=hint)
    if flash > board.flash_bytes:
        raise ModelError(f"{metadata['model']} does not fit {board.name}: it needs {flash:,} B of flash (constants "
                         f"{mem['constant_bytes']:,} + code {mem['code_bytes'] or 0:,}), {board.name} has "
                         f"{board.flash_bytes:,} B", hint=hint)
