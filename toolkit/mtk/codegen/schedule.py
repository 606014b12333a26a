"""The order the run function computes the ops in: the graph's, but for an op that is the last reader of a
tensor an earlier op also reads (a residual block's strided 1x1 shortcut, read from the block's input after
the block's main path): moved up to just after that earlier reader when its output is smaller than that
input, which then dies there instead of living through the main path (ResNet-8's blocks 2 and 3: 16 KB
and 8 KB inputs for 8 KB and 4 KB shortcuts)."""

from __future__ import annotations

from ..graph import Graph
from ..ops.base import OpData


def early_last_readers(graph: Graph, prepared: list[OpData]) -> list[OpData]:
    """`prepared` reordered: each op reading one activation (the rest constants, nothing variable) and not
    writing a model output, whose input an earlier op reads and no op between them does, moved to just after
    that earlier reader when the input is larger than its output and no later op reads it."""
    order = list(prepared)
    readers: dict[int, list[int]] = {}
    for data in prepared:
        for t in data.op.inputs:
            if t is not None:
                readers.setdefault(t, []).append(data.op.index)
    for data in prepared:
        acts = [t for t in data.op.inputs if t is not None and not graph.tensors[t].is_constant]
        if len(acts) != 1 or len(data.op.outputs) != 1 or data.op.outputs[0] in graph.outputs:
            continue
        x, out = acts[0], data.op.outputs[0]
        if graph.tensors[x].variable or graph.tensors[out].variable or x in graph.inputs:
            continue
        if readers[x][-1] != data.op.index or graph.tensors[x].nbytes <= graph.tensors[out].nbytes:
            continue
        at = order.index(data)
        earlier = [p for p in range(at) if x in order[p].op.inputs]
        if earlier and earlier[-1] + 1 < at:
            order.insert(earlier[-1] + 1, order.pop(at))
    return order
