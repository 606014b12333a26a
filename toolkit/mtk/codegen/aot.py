"""mtk's AOT part: the run function as a small typed program, and its C.

The compiler hands over the lowered ops in order and where each tensor lives (storage.py); here
each kernel becomes a C function (TVM-generated or hand-written, structurally equal ones emitted
once), each op's calls bind the kernel's parameters to buffers (`BufferRef`: an input or output
of the run function, a constant in flash, a place in the arena), and the program emits, for module M:
  include/tvmgen_M.h      structs of I/O pointers, tvmgen_M_run() (microTVM's interface),
                          tvmgen_M_map_inputs/outputs() (the I/O tensors' places in the arena, as TVM's
                          USMP names them); macros of each tensor's size, type, shape, scale and zero
                          point, and of the return codes
  src/tvmgen_M.c          constants (const, in flash; or initialised data copied into RAM at startup:
                          ConstantsInRam), the arena (one pool per RAM region it uses:
                          regions.py), the state region (variable tensors and ops' own state:
                          kept between calls, set to TFLM's reset values by tvmgen_M_reset() and
                          before the first run), the run function calling kernels in order, the map functions
  src/tvmgen_M_kernels.c  the operator kernels: TVM-generated C and hand-written C kernels
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Mapping, Union

import numpy as np
import tvm_ffi

from ..compiled import IOTensor, StateTensor
from ..graph import Graph, Tensor
from ..kernels.files import c_files, project_name
from ..kernels.signature import CFunction, Param
from ..kernels.table import C_FUNCTIONS, core_files
from ..names import c_comment, c_identifier, library, macro, run_function
from ..ops.base import Const, Kernel, Scratch, State, View
from ..ops.fixedpoint import FIXEDPOINT_HEADER
from ..target import Cpu
from . import tvm_c
from .call_loops import Repeat, find_repeats
from .memory_plan import ALIGNMENT, Buffer
from .regions import Pool, constants_section
from .staging import COPY_KERNEL
from .storage import Step, Storage, scratch_key

_C_TYPES = {"int8": "int8_t", "uint8": "uint8_t", "int16": "int16_t", "uint16": "uint16_t", "int32": "int32_t",
            "uint32": "uint32_t", "int64": "int64_t", "uint64": "uint64_t", "float32": "float", "bool": "uint8_t"}

PRELUDE = """#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>
"""

ALIGN_MACRO = """#if defined(__GNUC__) || defined(__clang__)
#define TVMGEN_ALIGNED(n) __attribute__((aligned(n)))
#else
#define TVMGEN_ALIGNED(n)
#endif
"""

SECTION_MACRO = """#if defined(__GNUC__) || defined(__clang__)
#define TVMGEN_SECTION(name) __attribute__((section(name)))
#else
#define TVMGEN_SECTION(name)
#endif
"""


def c_type(dtype: str) -> str:
    return _C_TYPES[dtype]


# ---- the program's parts ------------------------------------------------------------------------

@dataclass(frozen=True)
class ArenaRef:
    offset: int
    pool: str = "arena"   # the C pointer to the pool holding it (pool_pointer)

    def c(self) -> str:
        return f"(void*)({self.pool} + {self.offset})"


def pool_pointer(pool: Pool) -> str:
    """The run function's pointer to `pool`: `arena` for the system region's (the one a board with one
    region has), `arena_<region>` for the others."""
    return "arena" if pool.section is None else "arena_" + c_identifier(pool.region.lower())


@dataclass(frozen=True)
class IORef:
    """A member of the run function's `inputs` or `outputs` struct (from byte `offset` on)."""

    struct: str     # "inputs" or "outputs"
    member: str
    offset: int = 0

    def c(self) -> str:
        if self.offset:
            return f"(void*)((uint8_t*){self.struct}->{self.member} + {self.offset})"
        return f"(void*)({self.struct}->{self.member})"


@dataclass(frozen=True)
class SymbolRef:
    """A file-scope array of the library: a constant (ConstantPool) or a state tensor."""

    symbol: str

    def c(self) -> str:
        return f"(void*){self.symbol}"


BufferRef = Union[ArenaRef, IORef, SymbolRef]


@dataclass(frozen=True)
class Call:
    op_index: int
    function: CFunction   # the kernel as the run function calls it: 0 on success
    args: tuple[BufferRef, ...]
    staging: bool = False   # a copy of a constant the op's kernels then read (staging.py): not one of its kernels


@dataclass
class ConstArray:
    symbol: str
    data: np.ndarray
    align: int = 4   # bytes its address is a multiple of

    @property
    def nbytes(self) -> int:
        return int(self.data.nbytes)


@dataclass(frozen=True)
class ConstantsInRam:
    """The constants as initialised data, copied from flash into RAM at startup (--weights-in-ram): each
    array (by symbol) into one RAM region, the system region's in its .data, another's in that region's
    linker input section (constants_section)."""

    region_of: Mapping[str, str]   # a constant array's symbol -> its RAM region
    system_region: str
    regions: tuple[str, ...]       # the regions holding some, in the board's order

    def section(self, symbol: str) -> str | None:
        region = self.region_of[symbol]
        return None if region == self.system_region else constants_section(region)


class ConstantPool:
    """Constant arrays, each distinct content emitted once."""

    def __init__(self, module: str):
        self.module = module
        self.arrays: list[ConstArray] = []
        self._by_content: dict[tuple[str, tuple, bytes], ConstArray] = {}

    def ref(self, hint: str, data: np.ndarray, align: int = 4) -> SymbolRef:
        key = (data.dtype.str, data.shape, data.tobytes())
        if key not in self._by_content:
            sym = f"tvmgen_{self.module}_c{len(self.arrays)}_{hint[:40]}"
            self._by_content[key] = ConstArray(sym, np.ascontiguousarray(data))
            self.arrays.append(self._by_content[key])
        array = self._by_content[key]
        array.align = max(array.align, align)   # (the same content for several kernels: the strictest)
        return SymbolRef(array.symbol)

    @property
    def nbytes(self) -> int:
        return sum(c.nbytes for c in self.arrays)


def state_array(module: str, tensor: Tensor, position: int) -> StateTensor:
    """A variable tensor's static array, reset to what TFLM's ResetTensorData writes: an int8 tensor's zero
    point, else 0."""
    reset = tensor.quant.zp if tensor.dtype == "int8" and tensor.quant is not None else 0
    return StateTensor(tensor.name, f"tvmgen_{module}_state{position}_{tensor.c_name[:40]}", tuple(tensor.shape),
                       tensor.dtype, tensor.nbytes, reset)


def _function(kernel: Kernel, symbol: str) -> CFunction:
    """The kernel's C function under `symbol`: a TVM kernel's parameters as its C has them
    (tvm_c.with_pointer_params), a hand-written one's as it declares them."""
    if kernel.c_function is not None:
        return kernel.c_function.renamed(symbol)
    return CFunction(symbol, tuple(Param(c_type(p.dtype) + ("*" if tvm_c.is_pointer(p) else ""), p.name)
                                   for p in kernel.func.params))


class KernelLibrary:
    """Kernel functions, structurally identical ones emitted once."""

    def __init__(self, module: str):
        self.prefix = f"tvmgen_{module}_"
        self.tvm_funcs: dict[str, object] = {}
        self.c_sources: dict[str, str] = {}
        self.headers: list[str] = [FIXEDPOINT_HEADER]   # C kernel families (kernels/files.py)

    def add(self, kernel: Kernel) -> CFunction:
        self.headers += [h for h in kernel.headers if h not in self.headers]
        return _function(kernel, self._symbol(kernel))

    def _symbol(self, kernel: Kernel) -> str:
        if kernel.func is not None:
            for sym, func in self.tvm_funcs.items():
                if sym.startswith(self.prefix + kernel.name + "_") and tvm_ffi.structural_equal(func, kernel.func):
                    return sym
            sym = f"{self.prefix}{kernel.name}_{len(self.tvm_funcs) + len(self.c_sources)}"
            self.tvm_funcs[sym] = kernel.func
            return sym
        src, name = kernel.c_source, kernel.c_function.name
        for sym, existing in self.c_sources.items():
            if existing == re.sub(rf"\b{name}\b", sym, src):
                return sym
        sym = f"{self.prefix}{name}"
        if sym in self.c_sources:   # the same name for different code
            sym = f"{sym}_{len(self.c_sources)}"
        self.c_sources[sym] = re.sub(rf"\b{name}\b", sym, src)
        return sym

    def c_files(self, cpu: Cpu, one_stream: bool = False) -> list[str]:
        """The hand-written C files the kernels include on `cpu`'s instruction set and core (kernels/c/...), in order;
        one_stream: a flash that rewards one sequential stream (kernels/table.py core_files)."""
        return c_files(cpu.isa.value, self.headers, core_files(cpu, one_stream))

    def source(self, cpu: Cpu, one_stream: bool = False) -> str:
        """The kernels' C: the files of their families on `cpu`'s instruction set (c_files), then the prototype
        (kernels/table.py) of every hand-written function the kernels call, which gcc checks against the file's
        definition and each call against, then the kernels."""
        kernels = [*self.c_sources.values(), tvm_c.build_c(self.tvm_funcs, cpu)]
        called = {name for code in kernels for name in re.findall(r"\b(mtk_\w+)\(", code)}
        prototypes = [f.prototype for name, f in C_FUNCTIONS.items() if name in called]
        includes = [f'#include "{project_name(f)}"' for f in self.c_files(cpu, one_stream)]
        return "\n".join([PRELUDE, *includes, *prototypes, *kernels])


# Size macros the header defines besides the I/O tensors' TVMGEN_<M>_<NAME>_SIZE.
_LIBRARY_SIZE_NAMES = ("ARENA", "GLOBAL_WORKSPACE_WORKSPACE_POOL", "STATE")


def io_tensors(graph: Graph) -> dict[int, IOTensor]:
    """The model's inputs and outputs by tensor index, each with a C member name distinct from the
    others' even in upper case (the size macros) and from the library's own size macros."""
    names: dict[int, str] = {}
    taken = set(_LIBRARY_SIZE_NAMES)
    for t in dict.fromkeys(graph.inputs + graph.outputs):
        base = c_identifier(graph.tensors[t].name)
        name, n = base, 1
        while name.upper() in taken:
            n += 1
            name = f"{base}_{n}"
        taken.add(name.upper())
        names[t] = name
    io = {}
    for t, c_name in names.items():
        tensor = graph.tensors[t]
        io[t] = IOTensor(tensor.name, c_name, tuple(tensor.shape), tensor.dtype,
                         tensor.quant.s if tensor.quant else None, tensor.quant.zp if tensor.quant else None,
                         tensor.nbytes)
    return io


@dataclass
class AotProgram:
    """The run function: kernel calls in order over the arena, the I/O structs and the constants."""

    module: str
    model_name: str
    inputs: tuple[IOTensor, ...]
    outputs: tuple[IOTensor, ...]
    arena_bytes: int
    external_workspace: bool
    constants: ConstantPool
    kernels: KernelLibrary
    calls: list[Call] = field(default_factory=list)
    states: dict[int | str, StateTensor] = field(default_factory=dict)   # by tensor index, or an op's by name
    pools: tuple[Pool, ...] = ()   # the arena's pools by RAM region (empty: the one arena)
    places: dict[str, tuple[ArenaRef, ...]] = field(default_factory=dict)   # "inputs"/"outputs": each tensor's in the arena
    constants_in_ram: ConstantsInRam | None = None   # None: the constants stay in flash
    arena_align: int = ALIGNMENT   # bytes the one arena's start is a multiple of: its buffers' strictest alignment

    def symbols(self, op_index: int) -> list[str]:
        """The functions of the op's kernels (not its staging copies)."""
        return [c.function.name for c in self.calls if c.op_index == op_index and not c.staging]

    def header(self) -> str:
        return _header(self.module, self.inputs, self.outputs, self.arena_bytes, self.arena_align,
                       self.external_workspace, list(self.states.values()))

    def run_source(self) -> str:
        functions = {c.function.name: c.function for c in self.calls}
        return _run_source(self.module, self.model_name, self.constants.arrays, self.calls,
                          [f.prototype for f in functions.values()], self.arena_bytes, self.arena_align,
                          self.external_workspace, list(self.states.values()), self.pools, self.places,
                          {"inputs": self.inputs, "outputs": self.outputs}, self.constants_in_ram)


def constant_pool(graph: Graph, steps: list[Step], storage: Storage, module: str) -> ConstantPool:
    """The constant arrays the steps' kernels read, each under the symbol and with the alignment build_program
    gives it (it refs them in this order), known before the arena's pools are."""
    pool = ConstantPool(module)
    for op, low in steps:
        for kernel in low.kernels:
            for a in kernel.args:
                where = storage.where(a) if isinstance(a, int) else None
                if isinstance(a, Const):
                    pool.ref(f"op{op.index}_{a.name}", a.data, a.align)
                elif isinstance(where, tuple) and where[0] == "const":
                    pool.ref(c_identifier(graph.tensors[where[1]].name), graph.tensors[where[1]].data)
    return pool


def build_program(graph: Graph, steps: list[Step], storage: Storage, module: str, model_name: str,
                  external_workspace: bool, pools: tuple[Pool, ...] = (),
                  constants_in_ram: ConstantsInRam | None = None) -> AotProgram:
    """Every kernel of every step bound to its buffers, in order; arena buffers in `pools` by their
    Buffer.pool (regions.place_in_regions), or all in the one arena."""
    io = io_tensors(graph)
    arena_bytes = sum(p.nbytes for p in pools) if pools else storage.plan.arena_bytes
    program = AotProgram(module, model_name, tuple(io[t] for t in graph.inputs), tuple(io[t] for t in graph.outputs),
                         arena_bytes, external_workspace, constant_pool(graph, steps, storage, module),
                         KernelLibrary(module), pools=pools, constants_in_ram=constants_in_ram,
                         arena_align=max((b.align for b in storage.plan.buffers), default=ALIGNMENT))
    pointers = {p.region: pool_pointer(p) for p in pools}

    def arena_ref(buf: Buffer) -> ArenaRef:
        return ArenaRef(buf.offset, pointers.get(buf.pool, "arena"))

    for kind, tensors in (("input", graph.inputs), ("output", graph.outputs)):
        places = [storage.io_place(kind, t) for t in tensors]
        program.places[kind + "s"] = tuple(replace(arena_ref(block), offset=block.offset + offset)
                                           for block, offset in places)

    def tensor_ref(t: int) -> BufferRef:
        where = storage.where(t)
        if not isinstance(where, tuple):
            return arena_ref(where)
        kind, u = where
        if kind == "const":
            return program.constants.ref(c_identifier(graph.tensors[u].name), graph.tensors[u].data)
        if kind == "state":
            state = program.states.setdefault(u, state_array(module, graph.tensors[u], len(program.states)))
            return SymbolRef(state.symbol)
        return IORef(kind + "s", io[u].c_name)

    def view_ref(step: int, k: int, view: View) -> BufferRef:
        """A tiled layer's rows: in the arena (a tensor or scratch there) or in an input or output."""
        base = operand_ref(step, k, view.of)
        if isinstance(base, ArenaRef):
            return replace(base, offset=base.offset + view.offset)
        if isinstance(base, IORef):
            return replace(base, offset=base.offset + view.offset)
        raise AssertionError(f"a view of {base} (tiling reads and writes activations only)")

    def op_state_ref(step: int, state: State) -> SymbolRef:
        name = f"op{steps[step][0].index}_{state.name}"
        symbol = f"tvmgen_{module}_state{len(program.states)}_{name}"
        kept = program.states.setdefault(name, StateTensor(name, symbol, (state.size,), state.dtype,
                                                           state.size * np.dtype(state.dtype).itemsize, 0))
        return SymbolRef(kept.symbol)

    def operand_ref(step: int, k: int, a) -> BufferRef:
        if isinstance(a, State):
            return op_state_ref(step, a)
        if isinstance(a, Const):
            return program.constants.ref(f"op{steps[step][0].index}_{a.name}", a.data, a.align)
        if isinstance(a, Scratch):
            return arena_ref(storage.scratch[scratch_key(step, k, a)])
        if isinstance(a, View):
            return view_ref(step, k, a)
        return tensor_ref(a)

    for step, (op, low) in enumerate(steps):
        for k, kernel in enumerate(low.kernels):
            args = tuple(operand_ref(step, k, a) for a in kernel.args)
            program.calls.append(Call(op.index, program.kernels.add(kernel), args, kernel.name == COPY_KERNEL))
    return program


# ---- C text -------------------------------------------------------------------------------------

def _format_values(data: np.ndarray) -> str:
    flat = data.reshape(-1)
    if flat.dtype.kind == "f":
        items = [repr(float(v)) + "f" for v in flat]
    elif flat.dtype == np.int32 or flat.dtype == np.int64:
        items = [f"{int(v)}" if int(v) != -2**31 else "(-2147483647 - 1)" for v in flat]
    elif flat.dtype in (np.uint32, np.uint64):   # beyond INT64_MAX an unsuffixed decimal is "so large" (gcc warns)
        items = [f"{int(v)}u" for v in flat]
    else:
        items = [str(int(v)) for v in flat]
    lines = [", ".join(items[i:i + 24]) for i in range(0, len(items), 24)]
    return "  " + ",\n  ".join(lines)


def _c_float(value: float) -> str:
    """A float literal that reads back as the same float32."""
    text = f"{value:.9g}"
    return text + ("" if any(c in text for c in ".en") else ".0") + "f"


def _tensor_macros(module: str, kind: str, t: IOTensor) -> list[str]:
    """What the caller needs to fill an input or read an output: its bytes, C element type, shape and,
    for a quantized tensor, real value = SCALE * (q - ZERO_POINT)."""
    def define(part: str, value: object) -> str:
        return f"#define {macro(module, t.c_name, part)} {value}"

    if t.scale is None:
        quantized = ", not quantized"
    else:
        q = "q" if not t.zero_point else f"(q {'-' if t.zero_point > 0 else '+'} {abs(t.zero_point)})"
        quantized = f", real value = {t.scale:.9g} * {q}"
    lines = [f"/* {kind} '{c_comment(t.name)}': {t.dtype}{list(t.shape)}{quantized} */",
             define("SIZE", t.bytes), define("TYPE", c_type(t.dtype)),
             define("ELEMENTS", int(np.prod(t.shape, dtype=np.int64))), define("RANK", len(t.shape)),
             define("SHAPE", "{" + ", ".join(str(d) for d in t.shape) + "}")]
    if t.scale is not None:
        lines += [define("SCALE", _c_float(t.scale)), define("ZERO_POINT", f"({t.zero_point})")]
    return lines + [""]


def _header(module: str, inputs: tuple[IOTensor, ...], outputs: tuple[IOTensor, ...], arena_bytes: int,
            arena_align: int, external_workspace: bool, states: list[StateTensor]) -> str:
    guard = f"{macro(module)}_H_"
    run = run_function(module)
    lines = [f"#ifndef {guard}", f"#define {guard}", "", "#include <stdint.h>", "",
             "#ifdef __cplusplus", 'extern "C" {', "#endif", ""]
    for kind, tensors in (("input", inputs), ("output", outputs)):
        for t in tensors:
            lines += _tensor_macros(module, kind, t)
    for kind, tensors in (("inputs", inputs), ("outputs", outputs)):
        lines.append(f"struct {library(module)}_{kind} {{")
        lines += [f"  void* {t.c_name};" for t in tensors]
        lines.append("};")
        lines.append("")
    ok, error = macro(module, "OK"), macro(module, "ERROR")
    lines += [f"/* What {run} returns (microTVM's contract): {ok} when the outputs are written;",
              f" * {error} when a kernel returned non-zero (the kernels mtk generates check nothing",
              " * at run time and always return 0). */",
              f"#define {ok} 0", f"#define {error} (-1)", ""]
    pointers = ["/* One inference. inputs and outputs point at buffers of the _SIZE bytes above: the places the",
                " * map functions below give, or the caller's own (16-byte aligned). The working memory is the"]
    places = [f"/* The inputs' and outputs' places in the working memory: passed as inputs and outputs, no I/O",
              " * buffer is needed besides it (the run copies nothing, whatever it is given). The run may",
              " * overwrite an input there once the model has read it (as TFLM's interpreter does): write",
              " * the inputs again before each run. Buffers of the caller's are only read (inputs) and",
              " * written (outputs). */"]
    inputs_struct, outputs_struct = f"struct {library(module)}_inputs", f"struct {library(module)}_outputs"
    if external_workspace:
        pools = f"struct {library(module)}_workspace_pools"
        lines += [f"#define {macro(module, 'GLOBAL_WORKSPACE_WORKSPACE_POOL_SIZE')} {arena_bytes}", "",
                  f"{pools} {{",
                  f"  void* global_workspace;  /* {arena_bytes} bytes, {arena_align}-byte aligned */", "};", "",
                  *pointers, " * caller's workspace pool, so calls with different pools may run at the same time.",
                  f" * Returns {ok} or {error}. */",
                  f"int32_t {run}({inputs_struct}* inputs, {outputs_struct}* outputs, {pools}* workspace_pools);",
                  "", *places,
                  f"{inputs_struct} {library(module)}_map_inputs({pools}* workspace_pools);",
                  f"{outputs_struct} {library(module)}_map_outputs({pools}* workspace_pools);"]
    else:
        lines += [f"/* Working memory: a static arena of {arena_bytes} bytes inside the library, the inputs'",
                  " * and outputs' places among its buffers. */",
                  f"#define {macro(module, 'ARENA_SIZE')} {arena_bytes}", "",
                  *pointers, f" * library's static arena, so one call at a time. Returns {ok} or {error}. */",
                  f"int32_t {run}({inputs_struct}* inputs, {outputs_struct}* outputs);",
                  "", *places,
                  f"{inputs_struct} {library(module)}_map_inputs(void);",
                  f"{outputs_struct} {library(module)}_map_outputs(void);"]
    if states:
        lines += ["", f"/* State kept between runs ({len(states)} arrays: variable tensors, ops' own): "
                  f"{library(module)}_reset() sets it",
                  " * back to its start (as TFLM's MicroInterpreter::Reset does); the first run does it too. */",
                  f"#define {macro(module, 'STATE_SIZE')} {sum(s.bytes for s in states)}",
                  f"void {library(module)}_reset(void);"]
    lines += ["", "#ifdef __cplusplus", "}", "#endif", "", f"#endif  /* {guard} */", ""]
    return "\n".join(lines)


def _state_source(module: str, states: list[StateTensor]) -> list[str]:
    """The state arrays (.bss), a flag saying they hold a run's state, and the reset function."""
    out = [f"static {c_type(s.dtype)} {s.symbol}[{s.size}] TVMGEN_ALIGNED(16);" for s in states]
    out += [f"static uint8_t tvmgen_{module}_state_ready;", "", f"void tvmgen_{module}_reset(void) {{"]
    out += [f"  for (size_t i = 0; i < {s.size}u; ++i) {s.symbol}[i] = ({c_type(s.dtype)})({s.reset_value});"
            for s in states]
    out += [f"  tvmgen_{module}_state_ready = 1;", "}", ""]
    return out


def _map_functions(module: str, places: dict[str, tuple[ArenaRef, ...]], io: dict[str, tuple[IOTensor, ...]],
                   pool_lines: list[str], parameter: str) -> list[str]:
    """tvmgen_M_map_inputs() and _map_outputs(): the struct of each tensor's place in the arena."""
    out = []
    for kind, refs in places.items():
        struct = f"struct tvmgen_{module}_{kind}"
        out += [f"{struct} tvmgen_{module}_map_{kind}({parameter}) {{", *pool_lines, f"  {struct} places;",
                *(f"  places.{t.c_name} = {ref.c()};" for t, ref in zip(io[kind], refs)), "  return places;", "}", ""]
    return out


def _run_source(module: str, model_name: str, constants: list[ConstArray], calls: list[Call],
               kernel_prototypes: list[str], arena_bytes: int, arena_align: int, external_workspace: bool,
               states: list[StateTensor], pools: tuple[Pool, ...], places: dict[str, tuple[ArenaRef, ...]],
               io: dict[str, tuple[IOTensor, ...]], constants_in_ram: ConstantsInRam | None = None) -> str:
    sections = {c.symbol: constants_in_ram.section(c.symbol) if constants_in_ram else None for c in constants}
    out = [f"/* Generated by mtk from {c_comment(model_name)}: static entry point, constants and arena. */",
           PRELUDE, f'#include "tvmgen_{module}.h"', "", ALIGN_MACRO,
           *([SECTION_MACRO] if any(p.section for p in pools) or any(sections.values()) else []),
           "#ifndef MTK_LAYER_HOOK", "#define MTK_LAYER_HOOK(op_index) ((void)0)", "#endif", ""]
    out += kernel_prototypes + [""]
    if constants_in_ram and constants_in_ram.regions:
        regions = constants_in_ram.regions
        where = f"region {regions[0]}" if len(regions) == 1 else f"regions {', '.join(regions)} (each array into one)"
        out.append(f"/* The constants, copied from flash into RAM {where} at startup (--weights-in-ram). */")
    qualifier = "" if constants_in_ram else "const "   # const data goes to .rodata, in flash; the others, loaded data
    for c in constants:
        section = f' TVMGEN_SECTION("{sections[c.symbol]}")' if sections[c.symbol] else ""
        out.append(f"static {qualifier}{c_type(c.data.dtype.name)} {c.symbol}[{max(c.data.size, 1)}] "
                   f"TVMGEN_ALIGNED({c.align}){section} = {{")
        out.append(_format_values(c.data) if c.data.size else "  0")
        out.append("};")
    out.append("")
    if states:
        out += _state_source(module, states)
    used = {a.pool for c in calls for a in c.args if isinstance(a, ArenaRef)}
    mapped = {ref.pool for refs in places.values() for ref in refs}
    if external_workspace:
        parameter = f"struct tvmgen_{module}_workspace_pools* workspace_pools"

        def pool_lines(pointers: set[str]) -> list[str]:
            return ["  uint8_t* arena = (uint8_t*)workspace_pools->global_workspace;" if pointers
                    else "  (void)workspace_pools;"]
    else:
        parameter = "void"
        one_arena = Pool("", arena_bytes, arena_bytes, None, arena_align)
        arrays = {pool_pointer(p): p for p in pools} if pools else {"arena": one_arena}
        arrays = {pointer: p for pointer, p in arrays.items() if p.nbytes}
        for pointer, p in arrays.items():
            section = f' TVMGEN_SECTION("{p.section}")' if p.section else ""
            region = f"   /* RAM region {p.region} */" if p.section else ""
            out.append(f"static uint8_t tvmgen_{module}_{pointer}[{p.nbytes}] "
                       f"TVMGEN_ALIGNED({p.align}){section};{region}")
        if arrays:
            out.append("")

        def pool_lines(pointers: set[str]) -> list[str]:
            return [f"  uint8_t* {pointer} = tvmgen_{module}_{pointer};" for pointer in arrays if pointer in pointers]
    run_parameters = f"struct tvmgen_{module}_inputs* inputs, struct tvmgen_{module}_outputs* outputs"
    out.append(f"int32_t tvmgen_{module}_run({run_parameters}{', ' + parameter if external_workspace else ''}) {{")
    out += pool_lines(used)
    if states:
        out.append(f"  if (!tvmgen_{module}_state_ready) tvmgen_{module}_reset();")
    out.append("  (void)inputs;   /* a model may not read them: a constant output, pruned arguments */")
    out.append("  (void)outputs;")
    out += _call_lines(calls)
    out += ["  return 0;", "}", ""]
    out += _map_functions(module, places, io, pool_lines(mapped), parameter)
    return "\n".join(out)


def _call_key(call: Call) -> tuple:
    """What two calls a loop repeats share: the op, the function, each argument but its offset."""
    return call.op_index, call.function.name, tuple(replace(a, offset=0) if hasattr(a, "offset") else a
                                                   for a in call.args)


def _arg_c(ref: BufferRef, step: int) -> str:
    """`ref` in round `r` of a loop whose rounds move it by `step` bytes."""
    if not step:
        return ref.c()
    moved = f"{ref.offset} {'+' if step > 0 else '-'} {abs(step)} * r"
    if isinstance(ref, ArenaRef):
        return f"(void*)({ref.pool} + {moved})"
    return f"(void*)((uint8_t*){ref.struct}->{ref.member} + {moved})"


def _call_line(call: Call, steps: tuple[int, ...], indent: str) -> str:
    args = ", ".join(_arg_c(a, d) for a, d in zip(call.args, steps))
    return f"{indent}if ({call.function.name}({args}) != 0) return -1;"


def _call_lines(calls: list[Call]) -> list[str]:
    """The calls in order, runs that repeat (call_loops.py) as loops, each op's last followed by its hook."""
    offsets = [tuple(getattr(a, "offset", 0) for a in c.args) for c in calls]
    out = []
    for segment in find_repeats([_call_key(c) for c in calls], offsets):
        if isinstance(segment, Repeat):
            out.append(f"  for (int32_t r = 0; r < {segment.rounds}; r++) {{")
            out += [_call_line(calls[segment.start + j], steps, "    ") for j, steps in enumerate(segment.steps)]
            out.append("  }")
            last = segment.start + segment.period * segment.rounds - 1
        else:
            out.append(_call_line(calls[segment], (0,) * len(calls[segment].args), "  "))
            last = segment
        if last + 1 == len(calls) or calls[last + 1].op_index != calls[last].op_index:
            out.append(f"  MTK_LAYER_HOOK({calls[last].op_index});")
    return out
