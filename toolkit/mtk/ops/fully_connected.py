"""FULLY_CONNECTED: TFLite's int8 reference kernel (integer_ops/fully_connected.h).

acc = Σ w · (x − in_zp) + bias per output unit, requantized (per tensor or per channel),
+ out_zp, clamped. As in conv.py the −in_zp·Σw term is folded into the bias offline.
"""

from __future__ import annotations

import numpy as np

from ..errors import ModelError
from ..graph import Graph, Op
from ..target import Cpu
from .base import Lowered, io
from .conv import check_int8_weighted, folded_bias, requant_params
from .gemm import GemmOpDef, GemmSchedule, gemm_kernel


class FullyConnected(GemmOpDef):
    types = ("FULLY_CONNECTED",)

    def check(self, op: Op, graph: Graph) -> None:
        check_int8_weighted(op, graph, weight_axis=0)
        (x, w, *_), y = io(op, graph)
        if len(w.shape) != 2 or x.size % w.shape[1] != 0:
            raise ModelError(f"op {op.index} (FULLY_CONNECTED): input of {x.size} values does not divide "
                             f"into rows of {w.shape[-1]}")
        if op.options.get("weights_format", 0) != 0:
            raise ModelError(f"op {op.index} (FULLY_CONNECTED): shuffled weights are not supported")

    def macs(self, op: Op, graph: Graph) -> int:
        (x, w, *_), _ = io(op, graph)
        return x.size * w.shape[0]

    def lower_scheduled(self, op: Op, graph: Graph, cpu: Cpu, schedule: GemmSchedule) -> Lowered:
        (x, w, *rest), y = io(op, graph)
        bias = rest[0] if rest else None
        units = w.shape[0]
        rq = requant_params(x, w, y, units, op.options.get("fused_activation_function", "NONE"))
        bias_f = folded_bias(bias, w.data.astype(np.int64).sum(axis=1), x.quant.zp)

        return Lowered([gemm_kernel("fully_connected", op, y, w.data, bias_f, rq, None, cpu, schedule)])


OPS = [FullyConnected()]
