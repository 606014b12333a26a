"""CONV_2D and DEPTHWISE_CONV_2D: TFLite's int8 reference kernels (integer_ops/conv.h, depthwise_conv.h);
16x8 (int16 activations): int16x8.py.

Math: acc = Σ w · (x − in_zp) over the taps inside the input, + bias; requantized per output
channel; + out_zp; clamped to the fused activation range. Padding the input with in_zp makes
the out-of-bounds taps contribute 0, so the kernel computes Σ w·x_padded and the constant
part −in_zp·Σw is folded into the bias at compile time.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace

import numpy as np

from ..graph import Graph, Op, Tensor
from ..kernels.table import Family, weight_group
from ..target import Cpu, Isa
from . import conv_few_dsp, depthwise, depthwise3x3_dsp, depthwise_dsp, depthwise_mve, winograd_dsp
from .base import Axis, Band, Lowered, OpData, OpDef, Rows, constant_kernel, io
from .common import check_int8_weights, op_error, require_per_tensor
from .fixedpoint import activation_range, convolution_multipliers
from .gemm import GemmOpDef, GemmParams, Patches, micro_kernel, packed_weight_bytes
from .gemm_calls import row_source
from .geometry import ConvGeometry, conv_geometry
from .int16x8 import with_16x8
from .requant import Requant
from .variants import Variant, VariantTable

FIRST_LAYER_EXTRA_FLASH = 4096   # bytes int16-expanded weights of a gathered-patch GEMM may add by default
# output channels up to which a 1 -> N depthwise layer that dsp-3x3 takes runs there rather than on the GEMM: the
# GEMM packs each pixel's taps once for all N channels, the sliding window reads each input column once a channel
SLIDING_ONE_CHANNEL_MAX = 16


def requant_params(x: Tensor, w: Tensor, y: Tensor, out_c: int, activation: str) -> Requant:
    """Per-output-channel requantization, as TFLM's PopulateConvolutionQuantizationParams computes it."""
    mult, shift = convolution_multipliers(x.quant.s, w.quant.scale, y.quant.s, out_c)
    lo, hi = activation_range(activation, y.quant)
    return Requant(mult, shift, y.quant.zp, lo, hi)


def check_int8_weighted(op: Op, graph: Graph, weight_axis: int) -> None:
    """Checks shared by conv, depthwise and fully connected: int8 data, symmetric int8 weights, int32 bias."""
    (x, w, *rest), y = io(op, graph)
    bias = rest[0] if rest else None
    require_per_tensor(op, x, y)
    check_int8_weights(op, w, weight_axis)
    if bias is not None and (bias.dtype != "int32" or not bias.is_constant):
        raise op_error(op, f"bias must be constant int32 (got {bias.dtype})")


def folded_bias(bias: Tensor | None, weight_sums: np.ndarray, in_zp: int) -> np.ndarray:
    b = np.zeros_like(weight_sums, dtype=np.int64) if bias is None else bias.data.astype(np.int64)
    return (b - in_zp * weight_sums.astype(np.int64)).astype(np.int32)


def first_layer_variants(data: OpData, variants: list[Variant]) -> list[Variant]:
    """`variants` of a GEMM, the default first; for one over gathered patches (input channels not in 4s:
    image and spectrogram first layers, 1→N depthwise) whose default is a biased kernel, int16-expanded
    weights first when they add at most FIRST_LAYER_EXTRA_FLASH bytes: at a depth of a few groups the
    biased kernels' per-call row sums cost more than they save. The fused 2x2 kernel, where it may run,
    stays first: it beats int16 there. 1x4 blocks unless they pad more channels than 2x2 ones (13
    channels: 16 against 14)."""
    p: GemmParams = data.params
    if p.patches is None or row_source(p.patches) != "gather" or micro_kernel(variants[0]).weights != "biased":
        return variants
    channels, depth = p.weights.shape
    group = weight_group(data.cpu)
    lean = packed_weight_bytes(channels, depth, variants[0], group)
    wide = [v for v in variants if micro_kernel(v).weights == "int16"
            and packed_weight_bytes(channels, depth, v, group) - lean <= FIRST_LAYER_EXTRA_FLASH]
    if not wide:
        return variants
    best = min(wide, key=lambda v: (-(-channels // micro_kernel(v).cols) * micro_kernel(v).cols,
                                    micro_kernel(v).block != (1, 4)))
    return [best] + [v for v in variants if v != best]


class ConvWindow:
    """Mixed in ahead of a convolution family (GemmParams or DepthwiseParams): its window's traits."""

    def axis_map(self, data: OpData, axis: Axis) -> Rows:
        p = data.params
        g = p.geometry if isinstance(p, DepthwiseParams) else p.patches
        return Rows.pointwise(data, axis) if g is None else g.axis_map(axis)

    def band_params(self, data: OpData, band: Band) -> GemmParams | DepthwiseParams:
        p = data.params
        if isinstance(p, DepthwiseParams):
            return replace(p, geometry=p.geometry.band(band))
        return p if p.patches is None else replace(p, patches=p.patches.band(band))


FEW_INPUTS = Variant(conv_few_dsp.KERNEL.id)


def _few_inputs(variant: Variant | None) -> bool:
    """dsp-few's variant in either form (its stream copied to RAM or read from flash); a 16x8 layer has none."""
    return variant is not None and variant.kernel == FEW_INPUTS.kernel


class Conv2D(ConvWindow, GemmOpDef):
    """The GEMM's variants and, on DSP cores, a 3x3 stride-1 layer's Winograd kernels (winograd_dsp.py): the default
    from winograd_dsp.MIN_CHANNELS input channels on, the last choices below; on DSP cores a layer of 1 to 4 input
    channels that conv_few_dsp.py takes runs there by default."""

    types = ("CONV_2D",)

    def variants(self, data: OpData) -> list[Variant]:
        gemm = first_layer_variants(data, super().variants(data))
        if conv_few_dsp.takes(data):
            gemm = [FEW_INPUTS, *gemm]
        winograd = [t.variant for t in winograd_dsp.transforms(data)]
        if not winograd:
            return gemm
        if data.params.patches.in_c >= winograd_dsp.MIN_CHANNELS:
            return [*winograd, *gemm]
        return [*gemm, *winograd]

    def weight_bytes(self, data: OpData, variant: Variant) -> int:
        if variant in winograd_dsp.BY_VARIANT:
            return winograd_dsp.weight_bytes(data, variant)
        if _few_inputs(variant):
            return conv_few_dsp.weight_bytes(data)
        return super().weight_bytes(data, variant)

    def chunked(self, data: OpData, variant: Variant) -> Variant | None:
        if variant in winograd_dsp.BY_VARIANT or _few_inputs(variant):
            return None
        return super().chunked(data, variant)

    def leaner(self, data: OpData, variant: Variant) -> Variant | None:
        """Winograd's scratch (two tiles' transformed inputs) is the GEMM's twice or more, F(4x4)'s F(2x2)'s twice:
        under a RAM limit, F(4x4)'s F(2x2) where its sums are exact, F(2x2)'s the GEMM; a GEMM's its own (smaller
        chunks); dsp-few's copy of its stream in RAM its stream read from flash, then the GEMM."""
        if variant == winograd_dsp.F4.variant and winograd_dsp.F2 in winograd_dsp.transforms(data):
            return winograd_dsp.F2.variant
        if variant == FEW_INPUTS and (planned := conv_few_dsp.plan(data)) is not None and planned.stream_in_ram:
            return replace(variant, lean=True)
        if variant in winograd_dsp.BY_VARIANT or _few_inputs(variant):
            return first_layer_variants(data, super().variants(data))[0]
        return super().leaner(data, variant)

    def constant_passes(self, data: OpData, variant: Variant | None) -> int:
        """A Winograd kernel's blocks of tiles (each reads every transformed weight once); dsp-few's stream, once (it
        copies it to RAM itself); else the GEMM's."""
        transform = winograd_dsp.BY_VARIANT.get(variant)
        if transform is not None:
            g = data.params.patches
            tiles = -(-g.out_h // transform.tile_rows) * -(-g.out_w // transform.tile_rows)
            return -(-tiles // winograd_dsp.TILES)
        return 1 if _few_inputs(variant) else super().constant_passes(data, variant)

    def band_row_block(self, data: OpData, variant: Variant) -> int:
        transform = winograd_dsp.BY_VARIANT.get(variant)
        return transform.tile_rows if transform else 1

    def lower(self, data: OpData, variant: Variant | None = None) -> Lowered:
        variant = variant or self.variants(data)[0]
        if variant in winograd_dsp.BY_VARIANT:
            return Lowered([winograd_dsp.lower(data, variant)], variant=variant)
        if _few_inputs(variant):   # (a band of a tiled layer it does not take: the GEMM's default)
            if conv_few_dsp.takes(data):
                return Lowered([conv_few_dsp.lower(data, variant.lean)], variant=variant)
            variant = first_layer_variants(data, super().variants(data))[0]
        return super().lower(data, variant)

    def prepare(self, op: Op, graph: Graph, cpu: Cpu) -> OpData:
        check_int8_weighted(op, graph, weight_axis=0)
        (x, w, *rest), y = io(op, graph)
        if w.shape[3] != x.shape[3]:
            raise op_error(op, f"grouped convolution ({x.shape[3]} input channels, filter depth {w.shape[3]}) "
                               "is not supported")
        if x.shape[0] != 1:
            raise op_error(op, f"batch {x.shape[0]}; mtk compiles batch-1 convolutions")
        g = conv_geometry(op, x, w, y)
        rq = requant_params(x, w, y, g.out_c, op.options.get("fused_activation_function", "NONE"))
        bias = folded_bias(rest[0] if rest else None, w.data.astype(np.int64).sum(axis=(1, 2, 3)), x.quant.zp)
        direct = (g.k_h, g.k_w, g.stride_h, g.stride_w, g.pad_top, g.pad_left) == (1, 1, 1, 1, 0, 0)
        patches = None if direct else Patches(**asdict(g), in_zp=x.quant.zp)
        return OpData.of(op, graph, cpu, GemmParams("conv2d", w.data.reshape(g.out_c, -1), bias, rq, patches))

    def macs(self, data: OpData) -> int:
        _, w, *_ = data.inputs
        return data.output.size * w.shape[1] * w.shape[2] * w.shape[3]


@dataclass(frozen=True)
class DepthwiseParams:
    geometry: ConvGeometry
    bias: np.ndarray          # −in_zp·Σw folded in
    requant: Requant


class DepthwiseConv2D(ConvWindow, GemmOpDef):
    """With one input channel a convolution (the GEMM, its variants tunable), but for few output channels where
    dsp-3x3 takes it; otherwise depthwise.py."""

    types = ("DEPTHWISE_CONV_2D",)

    def prepare(self, op: Op, graph: Graph, cpu: Cpu) -> OpData:
        check_int8_weighted(op, graph, weight_axis=3)
        (x, w, *rest), y = io(op, graph)
        if y.shape[3] != w.shape[3] or w.shape[3] % x.shape[3] != 0:
            raise op_error(op, f"filter channels {w.shape[3]} do not match input channels {x.shape[3]} "
                               "× depth multiplier")
        g = conv_geometry(op, x, w, y)
        rq = requant_params(x, w, y, g.out_c, op.options.get("fused_activation_function", "NONE"))
        bias = folded_bias(rest[0] if rest else None, w.data.astype(np.int64).sum(axis=(0, 1, 2)), x.quant.zp)
        layer = OpData.of(op, graph, cpu, DepthwiseParams(g, bias, rq))
        sliding = cpu.isa is Isa.DSP and g.out_c <= SLIDING_ONE_CHANNEL_MAX and depthwise3x3_dsp.takes(layer)
        if g.in_c > 1 or sliding:
            return layer
        # one input channel: a convolution with out_c output channels, on the GEMM
        return OpData.of(op, graph, cpu, GemmParams("depthwise_conv2d", w.data.reshape(-1, g.out_c).T, bias, rq,
                                                    Patches(**asdict(g), in_zp=x.quant.zp)))

    def macs(self, data: OpData) -> int:
        _, w, *_ = data.inputs
        return data.output.size * w.shape[1] * w.shape[2]

    def variants(self, data: OpData) -> list[Variant]:
        p = data.params
        if isinstance(p, GemmParams):
            return first_layer_variants(data, super().variants(data))
        return [] if p.requant.constant_output is not None else DEPTHWISE_KERNELS.variants(data)

    def weight_bytes(self, data: OpData, variant: Variant) -> int:
        if isinstance(data.params, GemmParams):
            return super().weight_bytes(data, variant)
        return OpDef.weight_bytes(self, data, variant)

    def lower(self, data: OpData, variant: Variant | None = None) -> Lowered:
        p = data.params
        if isinstance(p, GemmParams):
            return super().lower(data, variant)
        if p.requant.constant_output is not None:
            return Lowered([constant_kernel(data, p.requant.constant_output)])
        return DEPTHWISE_KERNELS.lower(data, variant)


# Depthwise with several input channels (DepthwiseParams)
DEPTHWISE_KERNELS = VariantTable(Family.DEPTHWISE, (depthwise_mve.KERNEL, depthwise3x3_dsp.KERNEL,
                                                    depthwise_dsp.KERNEL, depthwise.KERNEL))


OPS = [with_16x8(Conv2D)(), with_16x8(DepthwiseConv2D)()]
