"""Where every tensor lives while the model runs: the run function's inputs and outputs, a constant
in flash, the state region (variable tensors, kept between inferences), or a place in the arena;
tensors an op only reinterprets (RESHAPE and friends) share their input's storage.

The model's inputs and outputs are the caller's pointers, and the arena also holds a place for them
(`Storage.io_blocks`): all inputs in one block laid out as the firmware's input buffer (each tensor at
a multiple of ALIGNMENT), live from before the first op to their last reader (the run may overwrite
them after, as TFLM's interpreter does), and all outputs likewise, live from their first producer to
the end of the run. A caller that passes those places (tvmgen_<module>_map_inputs) needs no I/O
buffers of its own; one that passes its own buffers leaves them unused. A block of one tensor takes
part in the plan as that tensor's buffer (an op may overwrite the model's input).

    steps = join_aliases(graph, steps)      # aliases joined, or a copy where they cannot share
    storage = plan_storage(graph, steps)    # lifetimes -> memory plan (memory_plan.py)
    storage.where(tensor)                   # "input" / "output" / "const" / "state" / an arena Buffer
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..graph import Graph, Op
from ..kernels.signature import CFunction
from ..ops.base import Kernel, Lowered, Scratch, View
from .memory_plan import ALIGNMENT, Buffer, MemoryPlan, packed_offsets, plan_memory

Step = tuple[Op, Lowered]   # one op of the run function and its kernels, in order


class AliasSets:
    """Tensors that share one storage: a union-find over tensor indices."""

    def __init__(self, tensor_count: int) -> None:
        self.parent: dict[int, int] = {}
        self.universe = range(tensor_count)

    def root(self, t: int) -> int:
        while self.parent.get(t, t) != t:
            t = self.parent[t]
        return t

    def members(self, t: int) -> list[int]:
        r = self.root(t)
        return [u for u in self.universe if self.root(u) == r]

    def join(self, a: int, b: int) -> None:
        self.parent[self.root(b)] = self.root(a)


def external_kind(graph: Graph, t: int) -> str | None:
    """"input", "output", "const" or "state" for a tensor the run function does not place in its arena."""
    if t in graph.inputs:
        return "input"
    if t in graph.outputs:
        return "output"
    if graph.tensors[t].variable:
        return "state"
    return "const" if graph.tensors[t].is_constant else None


def _copy_kernel(op: Op, graph: Graph) -> Kernel:
    """A reshape whose input and output cannot share storage (e.g. model input straight to model output)."""
    nbytes = graph.tensors[op.outputs[0]].nbytes
    function = CFunction.of(f"copy_{nbytes}", "const uint8_t* src, uint8_t* dst")
    src = (f"{function.head} {{\n"
           f"  for (size_t i = 0; i < {nbytes}u; ++i) dst[i] = src[i];\n"
           "  return 0;\n}\n")
    return Kernel("copy", [op.inputs[0], op.outputs[0]], c_source=src, c_function=function)


def join_aliases(graph: Graph, steps: list[Step]) -> tuple[list[Step], AliasSets]:
    """Each aliasing op's output joined to its input's storage, unless the joined group would hold
    two external tensors (an input and an output, say): that op copies instead."""
    aliases = AliasSets(len(graph.tensors))
    joined: list[Step] = []
    for op, low in steps:
        if low.alias_of is not None:
            group = set(aliases.members(low.alias_of)) | set(aliases.members(op.outputs[0]))
            if sum(external_kind(graph, t) is not None for t in group) <= 1:
                aliases.join(low.alias_of, op.outputs[0])
            else:
                low = Lowered([_copy_kernel(op, graph)])
        joined.append((op, low))
    return joined, aliases


IO_KINDS = {"input": "inputs", "output": "outputs"}   # external kind -> its block (the run function's struct)


@dataclass
class Storage:
    graph: Graph
    aliases: AliasSets
    plan: MemoryPlan
    tensor_buffers: dict[int, Buffer]                # by alias root (a one-tensor I/O block too)
    scratch: dict[tuple[int, int | str], Buffer]    # by scratch_key
    io_blocks: dict[str, Buffer]                     # "inputs", "outputs": the I/O tensors' places in the arena

    def io_place(self, kind: str, t: int) -> tuple[Buffer, int]:
        """The block of the model input or output `t` (external kind "input" or "output") and `t`'s offset in it."""
        tensors = self.graph.inputs if kind == "input" else self.graph.outputs
        offsets = packed_offsets([self.graph.tensors[u].nbytes for u in tensors])
        return self.io_blocks[IO_KINDS[kind]], offsets[tensors.index(t)]

    def where(self, t: int) -> tuple[str, int] | Buffer:
        """(external kind, the tensor that is external) for a tensor stored outside the arena, else its buffer."""
        for u in self.aliases.members(t):
            kind = external_kind(self.graph, u)
            if kind is not None:
                return kind, u
        return self.tensor_buffers[self.aliases.root(t)]


def scratch_key(step: int, kernel_position: int, scratch: Scratch) -> tuple[int, int | str]:
    """A kernel's own scratch, or one an op's kernels share by name."""
    return (step, scratch.name or kernel_position)


def plan_storage(graph: Graph, steps: list[Step], aliases: AliasSets) -> Storage:
    """Every arena tensor (by alias group) lives from the first step touching it to the last;
    each kernel's scratch during its step only. The memory plan places them all."""
    first: dict[int, int] = {}
    last: dict[int, int] = {}
    for step, (op, _) in enumerate(steps):
        for t in [*op.outputs, *(i for i in op.inputs if i is not None)]:
            r = aliases.root(t)
            first.setdefault(r, step)
            last[r] = max(last.get(r, step), step)
    tensor_buffers: dict[int, Buffer] = {}
    for r in sorted(first):
        group = aliases.members(r)
        if any(external_kind(graph, t) for t in group):
            continue
        tensor_buffers[r] = Buffer(graph.tensors[r].name, max(graph.tensors[t].nbytes for t in group),
                                   first[r], last[r])
    io_blocks = _io_blocks(graph, aliases, first, last, len(steps))
    for kind, block in io_blocks.items():
        tensors = graph.inputs if kind == "inputs" else graph.outputs
        if len(tensors) == 1 and aliases.root(tensors[0]) in first:
            tensor_buffers.setdefault(aliases.root(tensors[0]), block)
    scratch: dict[tuple[int, int | str], Buffer] = {}
    for step, (op, low) in enumerate(steps):
        for k, kernel in enumerate(low.kernels):
            for a in kernel.args:
                a = a.of if isinstance(a, View) else a
                if isinstance(a, Scratch) and scratch_key(step, k, a) not in scratch:
                    scratch[scratch_key(step, k, a)] = Buffer(f"scratch:op{op.index}.{a.name or kernel.name}",
                                                              a.nbytes, step, step, align=max(ALIGNMENT, a.align))
    for step, (op, low) in enumerate(steps):
        over = low.overwrites
        out, into = (tensor_buffers.get(aliases.root(t)) for t in (op.outputs[0], over.input)) if over else (None, None)
        if out is not None and into is not None:
            out.overwrites, out.below, out.above = into, over.below, None if not over.descending else over.above
        elif over is None and low.in_place and (out := tensor_buffers.get(aliases.root(op.outputs[0]))) is not None:
            dying = [b for t in low.in_place if (b := tensor_buffers.get(aliases.root(t))) is not None
                     and b.last_use == step and b is not out]
            if dying:
                out.overwrites, out.below = dying[0], 0
    blocks = [b for b in io_blocks.values() if all(b is not t for t in tensor_buffers.values())]
    plan = plan_memory(list(tensor_buffers.values()) + blocks + list(scratch.values()))
    return Storage(graph, aliases, plan, tensor_buffers, scratch, io_blocks)


def _io_blocks(graph: Graph, aliases: AliasSets, first: dict[int, int], last: dict[int, int],
               steps: int) -> dict[str, Buffer]:
    """The inputs' block, live from step 0 to the last step reading any of them, and the outputs',
    from the first step writing one to the last step."""
    end = max(steps - 1, 0)
    blocks = {}
    for kind, tensors in (("inputs", graph.inputs), ("outputs", graph.outputs)):
        roots = [aliases.root(t) for t in tensors if aliases.root(t) in first]
        offsets = packed_offsets([graph.tensors[t].nbytes for t in tensors])
        nbytes = offsets[-1] + graph.tensors[tensors[-1]].nbytes if tensors else 0
        if kind == "inputs":
            span = (0, max((last[r] for r in roots), default=0))
        else:
            span = (min((first[r] for r in roots), default=end), end)
        blocks[kind] = Buffer(f"io:{kind}", nbytes, *span)
    return blocks


def ordered_steps(steps: list[Step], storage: Storage) -> list[Step]:
    """`steps` with each op whose output the plan put over the input it overwrites computing its rows
    descending."""
    out = []
    for op, low in steps:
        buf = storage.tensor_buffers.get(storage.aliases.root(op.outputs[0])) if low.overwrites else None
        if buf is not None and buf.placed_above():
            low = replace(low, kernels=list(low.overwrites.descending))
        out.append((op, low))
    return out
