"""CONV_2D and DEPTHWISE_CONV_2D: TFLite's int8 reference kernels (integer_ops/conv.h, depthwise_conv.h).

Math: acc = Σ w · (x − in_zp) over the taps inside the input, + bias; requantized per output
channel; + out_zp; clamped to the fused activation range. Padding the input with in_zp makes
the out-of-bounds taps contribute 0, so the kernel computes Σ w·x_padded and the constant
part −in_zp·Σw is folded into the bias at compile time.
"""

from __future__ import annotations

from dataclasses import asdict

import numpy as np

from ..errors import ModelError
from ..graph import Graph, Op, Tensor
from ..target import Cpu
from . import depthwise
from .base import Lowered, constant_kernel, io
from .fixedpoint import activation_range, quantize_multipliers
from .gemm import GemmOpDef, GemmSchedule, Patches, gemm_kernel, gemm_schedules, packed_weight_bytes, weight_group
from .geometry import conv_geometry
from .requant import Requant


def requant_params(x: Tensor, w: Tensor, y: Tensor, out_c: int, activation: str) -> Requant:
    """Per-output-channel requantization, as TFLM's PopulateConvolutionQuantizationParams computes it."""
    w_scale = np.broadcast_to(w.quant.scale, (out_c,))
    effective = (np.float64(x.quant.s) * w_scale.astype(np.float64)) / np.float64(y.quant.s)
    mult, shift = quantize_multipliers(effective)
    lo, hi = activation_range(activation, y.quant)
    return Requant(mult, shift, y.quant.zp, lo, hi)


def check_int8_weighted(op: Op, graph: Graph, weight_axis: int) -> None:
    """Checks shared by conv, depthwise and fully connected: int8 data, symmetric int8 weights, int32 bias."""
    (x, w, *rest), y = io(op, graph)
    bias = rest[0] if rest else None
    if x.dtype != "int8" or y.dtype != "int8":
        raise ModelError(f"op {op.index} ({op.type}): {x.dtype} activations; mtk supports int8 only")
    if w.dtype != "int8" or not w.is_constant or w.quant is None:
        raise ModelError(f"op {op.index} ({op.type}): weights must be constant int8 (got {w.dtype})")
    if np.any(w.quant.zero_point != 0):
        raise ModelError(f"op {op.index} ({op.type}): weights must be symmetric (zero point 0)")
    if w.quant.per_channel and (w.quant.axis != weight_axis or len(w.quant.scale) != w.shape[weight_axis]):
        raise ModelError(f"op {op.index} ({op.type}): per-channel weights quantized along axis {w.quant.axis}")
    if bias is not None and (bias.dtype != "int32" or not bias.is_constant):
        raise ModelError(f"op {op.index} ({op.type}): bias must be constant int32 (got {bias.dtype})")


def folded_bias(bias: Tensor | None, weight_sums: np.ndarray, in_zp: int) -> np.ndarray:
    b = np.zeros_like(weight_sums, dtype=np.int64) if bias is None else bias.data.astype(np.int64)
    return (b - in_zp * weight_sums.astype(np.int64)).astype(np.int32)


class Conv2D(GemmOpDef):
    types = ("CONV_2D",)

    def check(self, op: Op, graph: Graph) -> None:
        check_int8_weighted(op, graph, weight_axis=0)
        (x, w, *_), _ = io(op, graph)
        if w.shape[3] != x.shape[3]:
            raise ModelError(f"op {op.index} (CONV_2D): grouped convolution ({x.shape[3]} input channels, "
                             f"filter depth {w.shape[3]}) is not supported")
        if x.shape[0] != 1:
            raise ModelError(f"op {op.index} (CONV_2D): batch {x.shape[0]}; mtk compiles batch-1 convolutions")

    def macs(self, op: Op, graph: Graph) -> int:
        (x, w, *_), y = io(op, graph)
        return y.size * w.shape[1] * w.shape[2] * w.shape[3]

    def lower_scheduled(self, op: Op, graph: Graph, cpu: Cpu, schedule: GemmSchedule) -> Lowered:
        (x, w, *rest), y = io(op, graph)
        bias = rest[0] if rest else None
        g = conv_geometry(op, x, w, y)
        rq = requant_params(x, w, y, g.out_c, op.options.get("fused_activation_function", "NONE"))
        bias_f = folded_bias(bias, w.data.astype(np.int64).sum(axis=(1, 2, 3)), x.quant.zp)

        direct = (g.k_h, g.k_w, g.stride_h, g.stride_w, g.pad_top, g.pad_left) == (1, 1, 1, 1, 0, 0)
        patches = None if direct else Patches(**asdict(g), in_zp=x.quant.zp)
        return Lowered([gemm_kernel("conv2d", op, y, w.data.reshape(g.out_c, -1), bias_f, rq, patches, cpu,
                                    schedule)])


class DepthwiseConv2D(GemmOpDef):
    """With one input channel a convolution (the GEMM, its schedules tunable); otherwise depthwise.py."""

    types = ("DEPTHWISE_CONV_2D",)

    def check(self, op: Op, graph: Graph) -> None:
        check_int8_weighted(op, graph, weight_axis=3)
        (x, w, *_), y = io(op, graph)
        if y.shape[3] != w.shape[3] or w.shape[3] % x.shape[3] != 0:
            raise ModelError(f"op {op.index} (DEPTHWISE_CONV_2D): filter channels {w.shape[3]} do not match "
                             f"input channels {x.shape[3]} × depth multiplier")

    def macs(self, op: Op, graph: Graph) -> int:
        (x, w, *_), y = io(op, graph)
        return y.size * w.shape[1] * w.shape[2]

    def schedules(self, op: Op, graph: Graph, cpu: Cpu) -> list[GemmSchedule]:
        (x, w, *_), y = io(op, graph)
        return gemm_schedules(cpu, y.size // w.shape[3]) if x.shape[3] == 1 else []

    def weight_bytes(self, op: Op, graph: Graph, cpu: Cpu, schedule: GemmSchedule) -> int:
        (_, w, *_), _ = io(op, graph)
        return packed_weight_bytes(w.shape[3], w.shape[1] * w.shape[2], schedule, weight_group(cpu))

    def lower(self, op: Op, graph: Graph, cpu: Cpu) -> Lowered:
        schedules = self.schedules(op, graph, cpu)
        return self.lower_scheduled(op, graph, cpu, schedules[0] if schedules else None)

    def lower_scheduled(self, op: Op, graph: Graph, cpu: Cpu, schedule: GemmSchedule | None) -> Lowered:
        (x, w, *rest), y = io(op, graph)
        bias = rest[0] if rest else None
        g = conv_geometry(op, x, w, y)
        rq = requant_params(x, w, y, g.out_c, op.options.get("fused_activation_function", "NONE"))
        bias_f = folded_bias(bias, w.data.astype(np.int64).sum(axis=(0, 1, 2)), x.quant.zp)
        if rq.constant_output is not None:
            return Lowered([constant_kernel(op, y, rq.constant_output)])
        if schedule is not None:   # one input channel: a convolution with out_c output channels
            return Lowered([gemm_kernel("depthwise_conv2d", op, y, w.data.reshape(-1, g.out_c).T, bias_f, rq,
                                        Patches(**asdict(g), in_zp=x.quant.zp), cpu, schedule)])
        return Lowered([depthwise.depthwise_kernel(op, g, x.quant.zp, w.data, bias_f, rq, cpu)])


OPS = [Conv2D(), DepthwiseConv2D()]
