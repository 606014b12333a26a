"""What an op family provides (OpDef): TFLM's split of Prepare (host side, once: checks and
parameters, into an OpData) and Eval (here `lower`: kernels in TE/TIR or C that the code generator
emits and the run function calls in order).
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Callable, ClassVar, Iterable, Union

import numpy as np
from tvm import tirx
from tvm.script.parser.core import utils as script_utils
from tvm.tirx.script.parser.entry import TIRJit

from ..graph import Graph, Op, Tensor
from ..kernels.signature import CFunction
from ..target import Cpu

@dataclass(frozen=True)
class Const:
    """A constant array a kernel needs beyond the model's own tensors (prepared weights, tables)."""

    name: str
    data: np.ndarray
    align: int = 4   # bytes its address is a multiple of


@dataclass(frozen=True)
class Scratch:
    """Working memory a kernel needs while it runs; the memory planner places it in the arena.
    A named scratch is one buffer for all the op's kernels that name it (one writes, a later one reads)."""

    nbytes: int
    name: str = ""
    align: int = 1   # bytes its address must be a multiple of, beyond the memory plan's own ALIGNMENT


@dataclass(frozen=True)
class State:
    """Memory an op keeps from one inference to the next (TFLM's persistent buffer that the op's Reset clears):
    `size` elements of `dtype` in the state region, zero after tvmgen_<module>_reset()."""

    name: str
    dtype: str
    size: int


@dataclass(frozen=True)
class View:
    """The bytes of a graph tensor (its index) or of a scratch from `offset` on: the rows of a tensor
    a tiled layer reads or writes (codegen/tiling.py)."""

    of: Union[int, Scratch]
    offset: int


Operand = Union[int, Const, Scratch, State, View]   # int: index of a graph tensor


@dataclass
class Kernel:
    """One call in the generated run function.

    `func` is a TIR PrimFunc whose buffer parameters match `args` in order; or `c_source` defines
    `c_function`, whose pointer parameters take `args` in order.
    `headers` names the C kernel families (kernels/files.py) the kernel calls into (extern calls);
    `c_calls` the hand-written C functions among them that do its arithmetic (micro-kernels).
    """

    name: str
    args: list[Operand]
    func: Any = None
    c_source: str | None = None
    c_function: CFunction | None = None
    headers: tuple[str, ...] = ()
    c_calls: tuple[str, ...] = ()

    @property
    def impl(self) -> str:
        """How metadata says it is computed: "tvm", "c", or "tvm+c:<micro-kernels>"."""
        if self.func is None:
            return "c"
        return "tvm+c:" + ",".join(self.c_calls) if self.c_calls else "tvm"


@dataclass(frozen=True)
class Overwrite:
    """The op's output may overlap input tensor `input` (its last reader): starting `below` bytes or more
    under the input's start with `kernels` as they are (rows ascending), or `above` bytes or more over it
    with `descending` instead (None: not that way). The memory plan chooses (codegen/memory_plan.py)."""

    input: int
    below: int | None
    above: int | None = None
    descending: tuple[Kernel, ...] = ()


@dataclass
class Lowered:
    kernels: list[Kernel] = field(default_factory=list)
    alias_of: int | None = None   # output shares this input tensor's memory (no copy)
    variant: Any = None           # the variant the kernels compute (one of OpDef.variants), if any
    overwrites: Overwrite | None = None
    # inputs the output may take the place of where the op reads them last (its kernels read each element
    # before writing the output's element there, ascending: an elementwise op): the memory plan may put it there
    in_place: tuple[int, ...] = ()


@dataclass(frozen=True)
class OpData:
    """What `prepare` computed for one op, and all that `lower` reads (TFLM's OpData): the op, its
    tensors, the CPU, and the family's own parameters (multipliers, activation range, folded bias,
    tables, loop plans: whatever does not depend on the input values)."""

    op: Op
    inputs: tuple[Tensor | None, ...]   # None for an omitted optional input
    output: Tensor
    cpu: Cpu
    params: Any = None

    @classmethod
    def of(cls, op: Op, graph: Graph, cpu: Cpu, params: Any = None) -> OpData:
        return cls(op, tuple(graph.input_tensors(op)), graph.tensors[op.outputs[0]], cpu, params)


class Axis(Enum):
    """An axis of an NHWC image along which a tiled layer computes part of its output (value: the dimension)."""

    ROWS = 1
    COLS = 2


@dataclass(frozen=True)
class Rows:
    """How a layer's output rows read its input rows (or columns its columns): output row o reads input
    rows o·stride − pad .. o·stride − pad + extent − 1 (those inside the input)."""

    in_h: int
    out_h: int
    extent: int     # (kernel height − 1) · dilation + 1
    stride: int
    pad: int        # leading padding rows
    elementwise: bool = False   # every activation read at the output's rows (ADD): any of them may be the chain's

    def needs(self, lo: int, hi: int) -> tuple[int, int]:
        """The input rows [a, b) that output rows [lo, hi) read."""
        return max(0, lo * self.stride - self.pad), min(self.in_h, (hi - 1) * self.stride - self.pad + self.extent)

    @classmethod
    def pointwise(cls, data: OpData, axis: Axis) -> Rows:
        """Output row o reads input row o (a 1×1 convolution, an activation)."""
        return cls(data.inputs[0].shape[axis.value], data.output.shape[axis.value], 1, 1, 0)


@dataclass(frozen=True)
class Band:
    """Part of a layer's output along an axis: `size_out` rows (columns) of it computed from `size_in` of
    its input, the first `pad` of the window's leading padding rows among them."""

    axis: Axis
    size_in: int
    size_out: int
    pad: int


class OpDef:
    """An op family: TFLite builtin `types` it computes, and TFLM's Prepare/Eval split.

        data = opdef.prepare(op, graph, cpu)   # validate, compute parameters: once per op
        opdef.macs(data)                       # multiply-accumulates per inference (metadata, bench)
        opdef.variants(data)                   # ways to compute it, the default first (tunable layers)
        opdef.lower(data, variant)             # the kernels; variant None: the default

    and traits the code generator reads instead of the family's parameter types: `axis_map` and
    `band_params` (tiling), `chunked` and `leaner` (variants in less scratch; the scratch each kernel requests
    is its `Scratch` arguments).

    `prepare` raises ModelError naming the op and the tensor (`common.op_error`) for whatever TFLM
    would reject or mtk does not support; the compiler collects every op's error before failing.
    """

    types: ClassVar[tuple[str, ...]] = ()
    # Element types of the first input this family computes `types` for, where another family computes the
    # others (ops/__init__.py picks by it); () for a family that takes every op of its types.
    input_dtypes: ClassVar[tuple[str, ...]] = ()

    def plan(self, op: Op, graph: Graph) -> Any:
        """The op's parameters (OpData.params), checked; None for an op that needs none."""
        return None

    def prepare(self, op: Op, graph: Graph, cpu: Cpu) -> OpData:
        return OpData.of(op, graph, cpu, self.plan(op, graph))

    def macs(self, data: OpData) -> int:
        return 0

    def variants(self, data: OpData) -> list[Any]:
        """The variants `lower` takes, the default first (`mtk tune` measures the others); [] when the op
        is not tunable."""
        return []

    def weight_bytes(self, data: OpData, variant: Any) -> int:
        """Flash bytes of the constants `variant`'s kernels carry (prepared weights, tables): what `mtk tune`
        prices a variant by."""
        return sum(a.data.nbytes for k in self.lower(data, variant).kernels for a in k.args if isinstance(a, Const))

    def lower(self, data: OpData, variant: Any = None) -> Lowered:
        raise NotImplementedError

    # ---- traits the code generator reads ----

    def axis_map(self, data: OpData, axis: Axis) -> Rows | None:
        """How the op's output reads its input along `axis` if it can compute a band of it from a band of
        its input (its activations NHWC, batch 1: codegen/tiling.py checks); None: it cannot be tiled."""
        return None

    def band_params(self, data: OpData, band: Band) -> Any:
        """The op's params as it computes `band` (only asked of an op whose axis_map is not None)."""
        return data.params

    def chunked(self, data: OpData, variant: Any) -> Any:
        """The variant computing as `variant` does in a smaller scratch (a chunk of a row at a time and
        partial sums), if the family has one: the compiler takes it where the scratch raises the arena."""
        return None

    def leaner(self, data: OpData, variant: Any) -> Any:
        """A variant computing the same outputs in less scratch for more cycles, if the family has one: the
        compiler takes it, before tiling, when the arena is above its limit."""
        return None

    def constant_passes(self, data: OpData, variant: Any) -> int:
        """Times `variant`'s kernels read their constants through, start to end, in one inference (a GEMM: once a
        block of rows; a Winograd convolution: once a block of tiles); 1: once, or no figure. On a board whose
        flash loads wait, the constants of a layer that reads them many times are copied into the arena first
        (codegen/staging.py)."""
        return 1

    def band_row_block(self, data: OpData, variant: Any) -> int:
        """Output rows `variant`'s kernel computes at once: a band of rows not a multiple of them computes the
        rest of the block too (tiling prices it)."""
        return 1


def io(op: Op, graph: Graph) -> tuple[list[Tensor | None], Tensor]:
    """The op's input tensors and its (single) output tensor."""
    return graph.input_tensors(op), graph.tensors[op.outputs[0]]


def jit(func: Callable) -> TIRJit:
    """Decorator: TVMScript's @T.jit (a kernel whose T.Optional parameters `specialize` may leave out) that,
    as @T.prim_func does, finds the names only the parameters' annotations use in the defining function
    (TVM's T.jit misses them under `from __future__ import annotations`). TVMScript's parser takes T.Optional
    only under a decorator named `jit`."""
    kernel = TIRJit(func)
    script_utils.resolve_closure_vars(func, kernel._closure_vars, inspect.stack())
    return kernel


jit.dispatch_token = "tirx"   # the parser reads the function under this decorator as TIR


def specialize(kernel: TIRJit, reads: Iterable[str]) -> tirx.PrimFunc:
    """The PrimFunc of `kernel` (a @jit kernel) without its T.Optional parameters not named in `reads`:
    a kernel declares only the buffers its op's data says it reads."""
    return kernel.specialize(**dict.fromkeys(kernel.optional_names - set(reads)))


def constant_kernel(data: OpData, value: int) -> Kernel:
    """The output does not depend on the inputs (a fused activation range of one value, or a zero
    multiplier): TVM would fold the inputs away and leave unused parameters (-Wunused-parameter),
    so a small C kernel fills the output instead."""
    op, y = data.op, data.output
    inputs = [i for i in op.inputs if i is not None]
    bits = np.dtype(y.dtype).itemsize * 8
    name = f"fill_i{bits}_{len(inputs)}_{y.size}_{'m' if value < 0 else ''}{abs(value)}"
    function = CFunction.of(name, ", ".join([f"const void* in{k}" for k in range(len(inputs))] + [f"int{bits}_t* out"]))
    unused = " ".join(f"(void)in{k};" for k in range(len(inputs)))
    src = (f"{function.head} {{\n"
           f"  {unused}\n"
           f"  for (size_t i = 0; i < {y.size}u; ++i) out[i] = (int{bits}_t)({value});\n"
           "  return 0;\n}\n")
    return Kernel("fill", [*inputs, op.outputs[0]], c_source=src, c_function=function)


def c_call(function: CFunction, **args: Any):
    """The TIR call of a hand-written C function, its arguments given by parameter name."""
    return tirx.call_extern(function.tir_returns, function.name, *function.ordered(**args))
