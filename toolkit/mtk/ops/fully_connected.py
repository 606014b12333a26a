"""FULLY_CONNECTED: TFLite's int8 reference kernel (integer_ops/fully_connected.h); 16x8: int16x8.py.

acc = Σ w · (x − in_zp) + bias per output unit, requantized (per tensor or per channel),
+ out_zp, clamped. As in conv.py the −in_zp·Σw term is folded into the bias offline.
"""

from __future__ import annotations

import numpy as np

from ..graph import Graph, Op
from ..target import Cpu
from .base import OpData, io
from .common import check_fully_connected_shapes
from .conv import check_int8_weighted, folded_bias, requant_params
from .gemm import GemmOpDef, GemmParams
from .int16x8 import with_16x8


class FullyConnected(GemmOpDef):
    types = ("FULLY_CONNECTED",)

    def prepare(self, op: Op, graph: Graph, cpu: Cpu) -> OpData:
        check_int8_weighted(op, graph, weight_axis=0)
        (x, w, *rest), y = io(op, graph)
        check_fully_connected_shapes(op, x, w)
        rq = requant_params(x, w, y, w.shape[0], op.options.get("fused_activation_function", "NONE"))
        bias = folded_bias(rest[0] if rest else None, w.data.astype(np.int64).sum(axis=1), x.quant.zp)
        return OpData.of(op, graph, cpu, GemmParams("fully_connected", w.data, bias, rq))

    def macs(self, data: OpData) -> int:
        x, w, *_ = data.inputs
        return x.size * w.shape[0]


OPS = [with_16x8(FullyConnected)()]
