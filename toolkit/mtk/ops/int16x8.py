"""16x8 CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED (int16 activations with zero point 0, int8 weights,
int64 or int32 bias), as TFLM's 16x8 reference kernels compute them; Requant16 serves TRANSPOSE_CONV too.

References (tensorflow/tflite-micro):
  micro/kernels/conv.cc, fully_connected.cc (Eval, kTfLiteInt16): an int32 bias, or none with the option
      quantized_bias_type INT32, takes the kernel templated on an int32 accumulator, which requantizes with
      MultiplyByQuantizedMultiplier(int32_t, ...) (TFLite's double rounding); an int64 bias, or none otherwise,
      the int64 one, which calls MultiplyByQuantizedMultiplier(int64_t, ...) (internal/common.cc: the
      multiplier reduced to 16 bits, one rounding; fixedpoint.reduced_multiplier).
  micro/kernels/depthwise_conv.cc: an int64 bias (or none) only, the int64 accumulator.
  kernels/internal/reference/integer_ops/conv.h, depthwise_conv.h (ConvPerChannel, DepthwiseConvPerChannel on
      int16_t input): acc = Σ w·x over the taps inside the image (zero points are not read), + bias, scaled,
      clamped to the activation range (CalculateActivationRangeQuantized within int16), no output offset;
      depthwise output channel c reads input channel c / depth_multiplier.
  integer_ops/fully_connected.h (FullyConnectedPerChannel, FullyConnected): acc = Σ w·(x + input_offset), +
      output_offset after scaling: both offsets 0 here.
  Multipliers: PopulateConvolutionQuantizationParams (s_in·s_w[c]/s_out in double). fully_connected_common.cc
      computes a per-tensor one through GetQuantizedConvolutionMultipler, whose source multiplies s_in·s_w in
      float32, but the tflite-micro interpreter mtk is checked against behaves as double there too
      (tests/compile/test_ops_16x8.py test_per_tensor_fully_connected_multiplier, as fully_connected.py's int8 path).

mtk requires zero point 0 on the int16 tensors, as 16x8 quantization makes them (TFLM's conv kernel would
ignore another, its fully connected kernel would read it). An int64 accumulator is exact in int32 when no
channel's Σ|w|·32768 reaches 2^31 (the weights are constants): the loops then sum in int32 and widen once,
for the bias and the requantization. Otherwise the CONV_2D / FULLY_CONNECTED GEMM sums chunks of the depth
short enough for int32 and adds those in int64 (chunk_len), as TRANSPOSE_CONV does per phase.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import tvm
from tvm import te, tirx
from tvm.script import tirx as T

from ..errors import ModelError
from ..graph import Graph, Op, Tensor
from ..target import Cpu
from .base import Axis, Const, Kernel, Lowered, OpData, OpDef, Rows, Scratch, constant_kernel, io, jit, specialize
from .common import check_fully_connected_shapes, check_int8_weights, op_error, require_per_tensor
from .fixedpoint import activation_range, convolution_multipliers, multiply_by_quantized_multiplier_s64, reduced_multiplier
from .geometry import ConvGeometry, conv_geometry
from .microkernels import pad_to_groups
from .requant import RSHIFT_FIELDS, Requant, requant_placeholders
from .schedules import schedule_per_output

INT16_MIN, INT16_MAX = -32768, 32767
TENSOR_TYPE_INT32 = 2       # schema TensorType.INT32: the options' quantized_bias_type
# Bias element types TFLM's Eval reads for int16 input (an int32 bias given to depthwise would be read as int64).
BIAS_DTYPES = {"CONV_2D": ("int32", "int64"), "DEPTHWISE_CONV_2D": ("int64",), "FULLY_CONNECTED": ("int32", "int64"),
               "TRANSPOSE_CONV": ("int16", "int64")}
WEIGHT_AXIS = {"CONV_2D": 0, "DEPTHWISE_CONV_2D": 3, "FULLY_CONNECTED": 0, "TRANSPOSE_CONV": 0}


@dataclass(frozen=True)
class Requant16(Requant):
    """acc → MultiplyByQuantizedMultiplier → clamp → int16, no output offset. `wide` (int64 accumulator):
    multiplier/shift hold reduced_multiplier's 16-bit multipliers and right shifts; otherwise TFLite's int32
    multiplier and shift (Requant's requantization)."""

    wide: bool = True

    @classmethod
    def of(cls, op: Op, multiplier: np.ndarray, shift: np.ndarray, y: Tensor, wide: bool) -> Requant16:
        lo, hi = activation_range(op.options.get("fused_activation_function", "NONE"), y.quant, INT16_MIN, INT16_MAX)
        if wide:
            try:
                pairs = [reduced_multiplier(int(m), int(s)) for m, s in zip(multiplier, shift)]
            except ModelError as err:
                raise op_error(op, err.message) from None
            multiplier, shift = (np.array(p, np.int32) for p in zip(*pairs))
        return cls(multiplier, shift, 0, lo, hi, wide)

    @property
    def acc_dtype(self) -> str:
        return "int64" if self.wide else "int32"

    def consts(self) -> dict[str, Const]:
        """The arrays `output` reads, as Requant's (wide: the multipliers and shifts per channel, no rshift table)."""
        if self.wide:
            return {} if self.per_tensor else {"mult": Const("mult", self.multiplier), "shift": Const("shift", self.shift)}
        return super().consts()

    def output(self, acc, c, table=None, mult=None, shift=None):
        """The int16 output of channel `c` from `acc` (acc_dtype); table/mult/shift the kernel's buffers of consts()."""
        if not self.wide:
            scaled = self.scaled(acc, c, table, mult, shift)
        elif self.per_tensor:
            scaled = multiply_by_quantized_multiplier_s64(acc, int(self.multiplier[0]), int(self.shift[0]))
        else:
            scaled = tirx.call_extern("int32", "mtk_requant_s64", acc, mult[c], shift[c])
        saturated = tirx.call_extern("int32", "mtk_sat_s16", scaled)   # one SSAT where the core has it
        if self.act_min > INT16_MIN:
            saturated = tirx.Max(saturated, tirx.const(self.act_min, "int32"))
        if self.act_max < INT16_MAX:
            saturated = tirx.Min(saturated, tirx.const(self.act_max, "int32"))
        return saturated.astype("int16")


def sums_fit_int32(w: np.ndarray, weight_axis: int) -> bool:
    """Whether no output channel's Σ w·x can leave int32 (|x| ≤ 32768)."""
    channel_bound = np.abs(np.moveaxis(w.astype(np.int64), weight_axis, 0)).reshape(w.shape[weight_axis], -1).sum(axis=1)
    return int(channel_bound.max(initial=0)) * 32768 < 2**31


def check_16x8(op: Op, x: Tensor, w: Tensor, bias: Tensor | None, y: Tensor) -> bool:
    """TFLM's 16x8 Prepare checks, and mtk's zero points; whether the accumulator is int64 (`wide`)."""
    require_per_tensor(op, x, y, dtypes=("int16",))
    for t in (x, y):
        if t.quant.zp != 0:
            raise op_error(op, f"int16 tensor '{t.name}' has zero point {t.quant.zp}; 16x8 quantization needs 0")
    check_int8_weights(op, w, WEIGHT_AXIS[op.type])
    allowed = BIAS_DTYPES[op.type]
    if bias is not None and (bias.dtype not in allowed or not bias.is_constant):
        raise op_error(op, f"bias must be constant {' or '.join(allowed)} with int16 input (got {bias.dtype})")
    if op.type in ("DEPTHWISE_CONV_2D", "TRANSPOSE_CONV"):
        return True
    if bias is not None:
        return bias.dtype == "int64"
    return op.options.get("quantized_bias_type", 0) != TENSOR_TYPE_INT32


@dataclass(frozen=True)
class Params16x8:
    bias: np.ndarray             # int64 (wide) or int32, one per output channel (zeros without a bias)
    requant: Requant16
    exact_in_int32: bool         # sums_fit_int32
    geometry: ConvGeometry | None = None   # conv and depthwise

    @property
    def sum_dtype(self) -> str:
        """The loops' accumulator: int32 when exact or when TFLM's is int32 too, else int64."""
        return "int32" if self.exact_in_int32 or not self.requant.wide else "int64"


def plan_16x8(op: Op, graph: Graph) -> Params16x8:
    """CONV_2D, DEPTHWISE_CONV_2D or FULLY_CONNECTED with an int16 output."""
    (x, w, *rest), y = io(op, graph)
    bias = rest[0] if rest else None
    wide = check_16x8(op, x, w, bias, y)
    axis = WEIGHT_AXIS[op.type]
    channels = w.shape[axis]
    geometry = None
    if op.type == "FULLY_CONNECTED":
        check_fully_connected_shapes(op, x, w)
    elif op.type == "CONV_2D" and w.shape[3] != x.shape[3]:
        raise op_error(op, f"grouped convolution ({x.shape[3]} input channels, filter depth {w.shape[3]}) "
                           "is not supported")
    elif op.type == "DEPTHWISE_CONV_2D" and (y.shape[3] != w.shape[3] or w.shape[3] % x.shape[3] != 0):
        raise op_error(op, f"filter channels {w.shape[3]} do not match input channels {x.shape[3]} × depth multiplier")
    if op.type != "FULLY_CONNECTED":
        geometry = conv_geometry(op, x, w, y)
    mult, shift = convolution_multipliers(x.quant.s, w.quant.scale, y.quant.s, channels)
    requant = Requant16.of(op, mult, shift, y, wide)
    bias_data = (np.zeros(channels, np.int64) if bias is None else bias.data.reshape(-1)).astype(requant.acc_dtype)
    return Params16x8(bias_data, requant, sums_fit_int32(w.data, axis), geometry)


def _window_sum(op_type: str, X: te.Tensor, W: te.Tensor, out_shape, g: ConvGeometry, dtype: str) -> te.Tensor:
    """Σ w·x over the taps of each output inside the image (conv.h, depthwise_conv.h)."""
    ky = te.reduce_axis((0, g.k_h), "ky")
    kx = te.reduce_axis((0, g.k_w), "kx")
    depthwise = op_type == "DEPTHWISE_CONV_2D"
    kc = None if depthwise else te.reduce_axis((0, g.in_c), "kc")
    multiplier = g.out_c // g.in_c
    zero = tirx.const(0, dtype)

    def tap(n, oy, ox, c):
        iy = oy * g.stride_h - g.pad_top + ky * g.dil_h
        ix = ox * g.stride_w - g.pad_left + kx * g.dil_w
        inside = tirx.all(iy >= 0, iy < g.in_h, ix >= 0, ix < g.in_w)
        if depthwise:
            product = X[n, iy, ix, c // multiplier].astype(dtype) * W[0, ky, kx, c].astype(dtype)
            return te.sum(tirx.if_then_else(inside, product, zero), axis=[ky, kx])
        product = X[n, iy, ix, kc].astype(dtype) * W[c, ky, kx, kc].astype(dtype)
        return te.sum(tirx.if_then_else(inside, product, zero), axis=[ky, kx, kc])
    return te.compute(out_shape, tap, name="acc")


def _row_sum(X: te.Tensor, W: te.Tensor, out_shape, dtype: str) -> te.Tensor:
    """Σ w·x along each row (fully_connected.h)."""
    k = te.reduce_axis((0, int(W.shape[1])), "k")
    return te.compute(out_shape, lambda r, u: te.sum(X[r, k].astype(dtype) * W[u, k].astype(dtype), axis=k),
                      name="acc")


DOT_S16_HEADER = "dot_s16"


def pack_channel_pairs(w: np.ndarray) -> np.ndarray:
    """Weights [C, K] → int8 blocks of 2 channels (the last zero-padded), mtk_dot_2x2_s16's order: per pair of
    values j the word (w[c0][2j], w[c1][2j], w[c0][2j+1], w[c1][2j+1]) (SXTB16 and SXTB16 ROR #8 of it give c0's and
    c1's int16 pair), an odd K's last values as a pair with zeros: whole words a block."""
    padded = pad_to_groups(pad_to_groups(w.astype(np.int8), 2, axis=0), 2, axis=1)
    blocks, depth = padded.shape[0] // 2, padded.shape[1]
    return np.ascontiguousarray(padded.reshape(blocks, 2, depth).transpose(0, 2, 1)).reshape(-1)


def pack_channel_rows(w: np.ndarray) -> np.ndarray:
    """Weights [C, K] → int8 blocks of 2 channels (the last zero-padded), each channel's K values in a row:
    mtk_dot_2x2_rows_s16's order (Helium: 8 values of one channel a widening load)."""
    return pad_to_groups(w.astype(np.int8), 2, axis=0).reshape(-1)


@dataclass(frozen=True)
class DotS16:
    """A weight layout of c/mtk_dot_s16.h and its micro-kernels of 2 rows (`two_rows`) and of 1 row (`one_row`),
    both times a block of 2 output channels."""

    two_rows: str
    one_row: str
    pack: Callable[[np.ndarray], np.ndarray]   # [C, K] → the blocks one after the other

    def block_len(self, depth: int) -> int:
        """The bytes of a block of 2 channels over `depth` values."""
        return self.pack(np.zeros((2, depth), np.int8)).size

    def pack_chunks(self, w: np.ndarray, chunk: int) -> np.ndarray:
        """Weights [C, K] → per block of 2 channels its chunks of `chunk` values (the last one shorter) one after the
        other, each packed as a block of its own: a micro-kernel call of `chunk` values reads one."""
        w = pad_to_groups(w.astype(np.int8), 2, axis=0)
        return np.concatenate([self.pack(w[c:c + 2, s:s + chunk]) for c in range(0, w.shape[0], 2)
                               for s in range(0, w.shape[1], chunk)])


DOT_PAIRS = DotS16("mtk_dot_2x2_s16", "mtk_dot_1x2_s16", pack_channel_pairs)
DOT_ROWS = DotS16("mtk_dot_2x2_rows_s16", "mtk_dot_1x2_rows_s16", pack_channel_rows)


def gemm_dot(cpu: Cpu) -> DotS16:
    """The layout and micro-kernels of mtk_dot_s16.h for `cpu`: weight rows on Helium, interleaved pairs elsewhere."""
    return DOT_ROWS if cpu.mve else DOT_PAIRS


@dataclass(frozen=True)
class Windows:
    """Where im2col rows come from. A convolution: output pixel o reads taps from o·stride − pad on, `dilation`
    apart. A transpose convolution (`transposed`): the output pixels fall into stride_h × stride_w phases (o + pad ≡
    phase mod stride), each a convolution of its own over the input with its own weights (the filter taps
    phase + k·stride), reading taps from (o + pad) / stride backwards (dilation −1); `k_h`, `k_w` are then the
    phase filters' sizes, ⌈filter / stride⌉."""

    in_h: int
    in_w: int
    in_c: int
    out_h: int
    out_w: int
    k_h: int
    k_w: int
    stride: tuple[int, int]
    pad: tuple[int, int]
    dilation: tuple[int, int]
    transposed: bool = False

    @classmethod
    def of_conv(cls, g: ConvGeometry) -> Windows:
        return cls(g.in_h, g.in_w, g.in_c, g.out_h, g.out_w, g.k_h, g.k_w, (g.stride_h, g.stride_w),
                   (g.pad_top, g.pad_left), (g.dil_h, g.dil_w))

    @property
    def phases(self) -> tuple[int, int]:
        return self.stride if self.transposed else (1, 1)

    @property
    def depth(self) -> int:
        return self.k_h * self.k_w * self.in_c

    def first(self, phase, axis: int):
        """The first output position of `phase` along `axis` (0: rows, 1: columns)."""
        return T.floormod(phase - self.pad[axis], self.stride[axis]) if self.transposed else 0

    def step(self, axis: int) -> int:
        return self.stride[axis] if self.transposed else 1

    def origin(self, o, axis: int):
        """The input position output position `o` reads its first tap from."""
        if self.transposed:
            return T.floordiv(o + self.pad[axis], self.stride[axis])
        return o * self.stride[axis] - self.pad[axis]

    def tap_step(self, axis: int) -> int:
        return -1 if self.transposed else self.dilation[axis]


def chunk_len(w: np.ndarray) -> int:
    """The most values (a multiple of 8, Helium's vector) over which no sum of int16 values times w [C, K] can leave
    int32, so that int32 micro-kernel sums of chunks of it added in int64 are the int64 accumulator's."""
    bound = int(np.abs(w.astype(np.int32)).max(initial=1)) * 32768
    return max((2**31 - 1) // bound // 8 * 8, 8)


def gemm_s16_kernel(data: OpData, windows: Windows | None, weights: np.ndarray, bias: np.ndarray, depth: int,
                    chunk: int | None = None, phase_taps: list[tuple[int, int]] | None = None) -> Kernel:
    """Rows of `depth` values × `weights` (gemm_dot's packing, one after the other per phase), 2 rows × 2 channels per
    gemm_dot call (1 row when that is all there is): rows are the input's own (`windows` None: fully connected, a 1×1
    stride-1 unpadded conv) or im2col rows of `windows` gathered into a scratch (mtk_im2col_s16; an int8 input's
    gathered as x - zero point, mtk_im2col_s8_s16, its output requantized to int8); the requantization in
    TIR, with an int64 accumulator as one multiply-accumulate (requant_s64_table, mtk_requant_table_s16). A `chunk`
    below `depth` (weights packed by DotS16.pack_chunks): the int64 accumulator as the int64 sum of the int32 sums of
    each chunk's call (chunk_len), requantized as TFLM does (Requant16.output). `phase_taps` (unchunked transposed
    windows): each phase's own window (k_h, k_w), its weights packed over that depth alone; else `windows`' for all."""
    op, y, rq = data.op, data.output, data.params.requant
    x = data.inputs[2] if op.type == "TRANSPOSE_CONV" else data.inputs[0]
    dot = gemm_dot(data.cpu)
    channels = y.shape[-1]
    rows = y.size // channels
    blocks = -(-channels // 2)
    chunk = min(chunk or depth, depth)
    chunks = -(-depth // chunk)
    chunk_block = dot.block_len(chunk)
    block = (chunks - 1) * chunk_block + dot.block_len(depth - (chunks - 1) * chunk)
    (n_py, n_px) = windows.phases if windows else (1, 1)
    taps = phase_taps or [(windows.k_h, windows.k_w) if windows else (1, 1)] * (n_py * n_px)
    phase_depths = [k_h * k_w * windows.in_c for k_h, k_w in taps] if phase_taps else [depth] * len(taps)
    phase_blocks = [dot.block_len(d) for d in phase_depths] if phase_taps else [block] * len(taps)
    phase_at = np.cumsum([0] + [blocks * b for b in phase_blocks])[:-1]

    def by_phase(values, py, px):
        """The value of phase (py, px) among `values` (one per phase, row-major): a literal when all are one."""
        if len(set(values)) == 1:
            return int(values[0])
        phase = py * n_px + px
        chosen = int(values[-1])
        for i in reversed(range(len(values) - 1)):
            chosen = T.if_then_else(phase == i, int(values[i]), chosen)
        return chosen
    row_len = depth + depth % 2            # the second gathered row starts word-aligned
    requant = rq.consts()
    high = None
    wide = isinstance(rq, Requant16) and rq.wide
    if wide and chunks == 1:
        bias, mult, shift, high = requant_s64_table(bias, np.broadcast_to(rq.multiplier, (channels,)),
                                                    np.broadcast_to(rq.shift, (channels,)))
        requant = {"mult": Const("mult", mult), "shift": Const("shift", shift)}
    acc_dtype = rq.acc_dtype if isinstance(rq, Requant16) else "int32"
    i32 = "int32"
    wn = windows
    offset = () if x.dtype == "int16" else (x.quant.zp,)   # an int8 input's values less its zero point

    def output(acc, c, bias, table, mult, shift):
        if high is None:
            return rq.output(T.Cast(acc_dtype, acc) + bias[c], c, table, mult, shift)
        return T.call_extern("int16", "mtk_requant_table_s16", acc, bias[c], mult[c], shift[c], high, rq.act_min,
                             rq.act_max)
    gathered = wn is not None

    def first(phase, axis: int):
        return wn.first(phase, axis) if gathered else 0

    def count(first_pos, axis: int):
        """The phase's output positions along `axis` (direct rows: `rows` × 1)."""
        if not gathered:
            return rows if axis == 0 else 1
        return T.max((wn.out_h, wn.out_w)[axis] - first_pos + wn.step(axis) - 1, 0) // wn.step(axis)

    def position(py, px, q):
        """Output row and column of the phase's row q."""
        nx = count(first(px, 1), 1)
        return first(py, 0) + q // nx * wn.step(0), first(px, 1) + q % nx * wn.step(1)

    def pixel(py, px, q):
        """The output pixel of the phase's row q."""
        if not gathered:
            return q
        oy, ox = position(py, px, q)
        return oy * wn.out_w + ox

    def im2col(x, scratch, py, px, q, i):
        """Gather the phase's row q (the last one past its end) into scratch row i."""
        oy, ox = position(py, px, T.min(q, count(first(py, 0), 0) * count(first(px, 1), 1) - 1))
        return T.call_extern(i32, "mtk_im2col_s8_s16" if offset else "mtk_im2col_s16", T.address_of(x[0]),
                             wn.origin(oy, 0), wn.origin(ox, 1), wn.in_h, wn.in_w, wn.in_c,
                             by_phase([t[0] for t in taps], py, px), by_phase([t[1] for t in taps], py, px),
                             wn.tap_step(0), wn.tap_step(1), *offset, T.address_of(scratch[i * row_len]))

    def in_output(r, py, px, c):
        total = count(first(py, 0), 0) * count(first(px, 1), 1)
        checks = ([r < total] if gathered or rows % 2 else []) + ([c < channels] if channels % 2 else [])
        return tvm.tirx.all(*checks) if checks else True

    def dot_call(x, scratch, wp, acc, py, px, pb, cb, ch):
        """The micro-kernel call of chunk ch (values from ch·chunk on) of block cb's channels and row pair pb."""
        at = ch * chunk
        k = by_phase(phase_depths, py, px) if chunks == 1 else T.min(chunk, depth - at)
        uniform = len(set(phase_blocks)) == 1   # phases alike: the offset as a product, no choice
        at_phase = (py * n_px + px) * blocks * phase_blocks[0] if uniform else by_phase(phase_at, py, px)
        w = T.address_of(wp[at_phase + cb * by_phase(phase_blocks, py, px) + ch * chunk_block])
        if gathered:
            return T.call_extern(i32, dot.two_rows, T.address_of(scratch[at]), T.address_of(scratch[row_len + at]), w,
                                 k, acc.access_ptr("w"))
        if rows == 1:
            return T.call_extern(i32, dot.one_row, T.address_of(x[at]), w, k, acc.access_ptr("w"))
        return T.call_extern(i32, dot.two_rows, T.address_of(x[pb * 2 * depth + at]),
                             T.address_of(x[T.min(pb * 2 + 1, rows - 1) * depth + at]), w, k, acc.access_ptr("w"))
    chunked = chunks > 1

    @jit
    def gemm(x: T.Buffer((x.size,), x.dtype), wp: T.Buffer((weights.size,), "int8"),
             bias: T.Buffer((channels,), acc_dtype), table: T.Optional(T.Buffer((channels * RSHIFT_FIELDS,), i32)),
             mult: T.Optional(T.Buffer((channels,), i32)), shift: T.Optional(T.Buffer((channels,), i32)),
             out: T.Buffer((rows * channels,), y.dtype), scratch: T.Optional(T.Buffer((2 * row_len,), "int16"))):
        acc = T.alloc_buffer((4,), i32)
        sums = T.alloc_buffer((4,), "int64")   # chunked: the int64 accumulators
        for py, px in T.grid(n_py, n_px):
            # the phase's output pixels: ny × nx, row q at (oy0 + (q / nx)·step_h, ox0 + (q % nx)·step_w)
            for pb in T.serial((count(first(py, 0), 0) * count(first(px, 1), 1) + 1) // 2):
                if gathered:
                    for i in T.serial(2):
                        T.evaluate(im2col(x, scratch, py, px, pb * 2 + i, i))
                for cb in T.serial(blocks):
                    if chunked:
                        for i in T.unroll(4):
                            sums[i] = T.int64(0)
                        for ch in T.serial(chunks):
                            T.evaluate(dot_call(x, scratch, wp, acc, py, px, pb, cb, ch))
                            for i in T.unroll(4):
                                sums[i] = sums[i] + T.Cast("int64", acc[i])
                    else:
                        T.evaluate(dot_call(x, scratch, wp, acc, py, px, pb, cb, 0))
                    for i in T.unroll(2):
                        for j in T.unroll(2):
                            if in_output(pb * 2 + i, py, px, cb * 2 + j):
                                out[pixel(py, px, pb * 2 + i) * channels + cb * 2 + j] = output(
                                    sums[i * 2 + j] if chunked else acc[i * 2 + j], cb * 2 + j, bias, table, mult,
                                    shift)

    scratch = [Scratch(4 * row_len)] if gathered else []   # the im2col rows
    args = [op.inputs[2] if op.type == "TRANSPOSE_CONV" else op.inputs[0], Const("w", weights), Const("bias", bias),
            *requant.values(), op.outputs[0], *scratch]
    func = specialize(gemm, [*requant, "scratch"] if gathered else requant)
    headers = (DOT_S16_HEADER,) if high is None else (DOT_S16_HEADER, DEPTHWISE_S16_HEADER)
    c_call = dot.one_row if rows == 1 and not gathered else dot.two_rows
    return Kernel(op.type.lower() + ("_s16" if x.dtype == "int16" else ""), args, func=func, headers=headers,
                  c_calls=(c_call,))


def transpose_conv_gemm_kernel(data: OpData, stride: tuple[int, int], pad: tuple[int, int],
                               bias: np.ndarray) -> Kernel:
    """TRANSPOSE_CONV as stride_h × stride_w convolutions (Windows.transposed) on the GEMM above: 16x8 in chunks
    (chunk_len) when a phase's sums can leave int32; int8 on values less the input's zero point (at most 255 in size:
    int32 sums, as TFLM's)."""
    _, w, x, *_ = data.inputs
    y = data.output
    channels, f_h, f_w, in_c = w.shape
    k_h, k_w = -(-f_h // stride[0]), -(-f_w // stride[1])
    phases = []
    for py in range(stride[0]):
        for px in range(stride[1]):
            taps = w.data[:, py::stride[0], px::stride[1], :]
            phase = np.zeros((channels, k_h, k_w, in_c), np.int8)
            phase[:, :taps.shape[1], :taps.shape[2]] = taps
            phases.append(phase.reshape(channels, -1))
    windows = Windows(x.shape[1], x.shape[2], in_c, y.shape[1], y.shape[2], k_h, k_w, stride, pad, (-1, -1), True)
    fit = x.dtype == "int8" or all(sums_fit_int32(p, 0) for p in phases)
    pack = gemm_dot(data.cpu).pack_chunks
    if not fit:
        chunk = chunk_len(w.data)
        return gemm_s16_kernel(data, windows, np.concatenate([pack(p, chunk) for p in phases]), bias, windows.depth,
                               chunk)
    # each phase over its own taps (a filter not a multiple of the stride leaves some phases fewer), at least one
    taps = [(max(len(range(py, f_h, stride[0])), 1), max(len(range(px, f_w, stride[1])), 1))
            for py in range(stride[0]) for px in range(stride[1])]
    own = [p.reshape(channels, k_h, k_w, in_c)[:, :t_h, :t_w].reshape(channels, -1)
           for p, (t_h, t_w) in zip(phases, taps)]
    return gemm_s16_kernel(data, windows, np.concatenate([pack(p, p.shape[1]) for p in own]), bias, windows.depth,
                           phase_taps=taps)


DEPTHWISE_S16_HEADER = "depthwise_s16"
DW16_PAIRS, DW16_SPLIT, DW16_BROADCAST = 0, 1, 2   # mtk_depthwise_s16.h's lane modes


def depthwise_lanes(multiplier: int) -> tuple[int, int]:
    """(mode, padded multiplier) of mtk_depthwise_s16: multiplier 1 reads channel pairs, 2 splits a pair over
    4 lanes, any other is padded to a multiple of 4 lanes that share one input channel."""
    if multiplier <= 2:
        return (DW16_PAIRS, DW16_SPLIT)[multiplier - 1], multiplier
    return DW16_BROADCAST, -(-multiplier // 4) * 4


def pack_depthwise_s16(w: np.ndarray, multiplier: int) -> np.ndarray:
    """Depthwise weights [1, k_h, k_w, C] → int32 words [⌈padded C / 4⌉][k_h·k_w][2], each word an int16 pair of
    lanes (0, 1) or (2, 3), lane j of block b being padded channel 4b + j (depthwise_lanes; zero past C and in
    padding lanes)."""
    taps, channels = w.size // w.shape[-1], w.shape[-1]
    padded = depthwise_lanes(multiplier)[1]
    in_c = channels // multiplier
    blocks = -(-in_c * padded // 4)
    lanes = np.zeros((taps, in_c, padded), np.int16)
    lanes[:, :, :multiplier] = w.reshape(taps, in_c, multiplier)
    flat = np.zeros((taps, blocks * 4), np.int16)
    flat[:, :in_c * padded] = lanes.reshape(taps, -1)
    words = np.ascontiguousarray(flat.reshape(taps, blocks, 4).transpose(1, 0, 2)).astype("<i2")
    return words.reshape(-1).view("<i4").astype(np.int32)


def requant_s64_table(bias: np.ndarray, reduced: np.ndarray, total_shift: np.ndarray
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """MultiplyByQuantizedMultiplier(int64_t acc + bias) per channel as one multiply-accumulate acc·r + B and a
    shift (c/mtk_depthwise_s16.h mtk_dw16_requant): (B, r, s, high). B = bias·r + 2^(total − 1), wrapped to
    int64 as the C's int64 arithmetic. When every total shift is 16 or more (high 1, or 2 when no s is left),
    r and B are shifted left by 32 − total where that is positive (r stays below 2^31), so that the result is
    the product's high word >> s; otherwise (high 0) r and s are the reduced multiplier and the total shift."""
    high = int(total_shift.min(initial=32) >= 16)
    lift = [max(0, 32 - int(t)) if high else 0 for t in total_shift]
    rounded = [((int(b) * int(r) + (1 << (int(t) - 1))) << k) & (2**64 - 1)
               for b, r, t, k in zip(bias, reduced, total_shift, lift)]
    b = np.array([v - 2**64 if v >= 2**63 else v for v in rounded], np.int64)
    r = np.array([int(r) << k for r, k in zip(reduced, lift)], np.int32)
    s = np.array([max(0, int(t) - 32) for t in total_shift] if high else total_shift, np.int32)
    return b, r, s, 2 if high and not s.any() else high


def depthwise_s16_kernel(data: OpData) -> Kernel:
    """16x8 DEPTHWISE_CONV_2D in one mtk_depthwise_s16 call (c/mtk_depthwise_s16.h), requantization included."""
    op, p, rq = data.op, data.params, data.params.requant
    g = p.geometry
    channels = g.out_c
    multiplier = channels // g.in_c
    mode, padded = depthwise_lanes(multiplier)
    weights = pack_depthwise_s16(data.inputs[1].data, multiplier)
    bias, mult, shift, high = requant_s64_table(p.bias, np.broadcast_to(rq.multiplier, (channels,)),
                                                np.broadcast_to(rq.shift, (channels,)))
    i32 = "int32"

    @T.prim_func
    def depthwise(x: T.Buffer((g.n * g.in_h * g.in_w * g.in_c,), "int16"), wp: T.Buffer((weights.size,), i32),
                  b: T.Buffer((channels,), "int64"), r: T.Buffer((channels,), i32),
                  s: T.Buffer((channels,), i32), out: T.Buffer((g.n * g.out_h * g.out_w * channels,), "int16")):
        T.evaluate(T.call_extern(i32, "mtk_depthwise_s16", T.address_of(x[0]), T.address_of(wp[0]),
                                 T.address_of(b[0]), T.address_of(r[0]), T.address_of(s[0]),
                                 T.address_of(out[0]), g.n, g.in_h, g.in_w, g.in_c, g.out_h, g.out_w, g.k_h, g.k_w,
                                 g.stride_h, g.stride_w, g.pad_top, g.pad_left, g.dil_h, g.dil_w, multiplier, padded,
                                 mode, high, rq.act_min, rq.act_max))

    args = [op.inputs[0], Const("w", weights), Const("bias", bias), Const("mult", mult), Const("shift", shift),
            op.outputs[0]]
    return Kernel("depthwise_conv_2d_s16", args, func=depthwise, headers=(DEPTHWISE_S16_HEADER,),
                  c_calls=("mtk_depthwise_s16",))


def lower_16x8(data: OpData) -> Lowered:
    op, p, y = data.op, data.params, data.output
    rq = p.requant
    if rq.constant_output is not None:
        return Lowered([constant_kernel(data, rq.constant_output)])
    if op.type == "DEPTHWISE_CONV_2D" and p.exact_in_int32:
        return Lowered([depthwise_s16_kernel(data)])
    if op.type != "DEPTHWISE_CONV_2D" and (p.exact_in_int32 or rq.wide):
        w = data.inputs[1]
        g = p.geometry
        direct = g is None or (g.k_h, g.k_w, g.stride_h, g.stride_w, g.pad_top, g.pad_left) == (1, 1, 1, 1, 0, 0)
        rows = w.data.reshape(w.shape[0], -1)
        chunk = rows.shape[1] if p.exact_in_int32 else chunk_len(rows)
        weights = gemm_dot(data.cpu).pack_chunks(rows, chunk)
        return Lowered([gemm_s16_kernel(data, None if direct else Windows.of_conv(g), weights, p.bias, rows.shape[1],
                                        chunk)])
    x, w, *_ = data.inputs
    if op.type == "FULLY_CONNECTED":
        x_shape, out_shape = (x.size // w.shape[1], w.shape[1]), (y.size // w.shape[0], w.shape[0])
    else:
        x_shape, out_shape = x.shape, y.shape
    X = te.placeholder(x_shape, "int16", name="x")
    W = te.placeholder(w.shape, "int8", name="w")
    B = te.placeholder((len(p.bias),), rq.acc_dtype, name="bias")
    requant = rq.consts()
    buffers = requant_placeholders(requant)
    if op.type == "FULLY_CONNECTED":
        acc = _row_sum(X, W, out_shape, p.sum_dtype)
    else:
        acc = _window_sum(op.type, X, W, out_shape, p.geometry, p.sum_dtype)
    out = te.compute(out_shape, lambda *i: rq.output(acc[i].astype(rq.acc_dtype) + B[i[-1]], i[-1], **buffers),
                     name="out")
    func = schedule_per_output(te.create_prim_func([X, W, B, *buffers.values(), out]))
    args = [op.inputs[0], op.inputs[1], Const("bias", p.bias), *requant.values(), op.outputs[0]]
    return Lowered([Kernel(f"{op.type.lower()}_s16", args, func=func)])


def with_16x8(opdef: type[OpDef]) -> type[OpDef]:
    """`opdef` (an int8 family of conv.py, fully_connected.py) that also computes its 16x8 form (With16x8)."""
    return type(opdef.__name__, (With16x8, opdef), {"__doc__": opdef.__doc__, "__module__": opdef.__module__})


class With16x8:
    """Mixed in ahead of an int8 op family: an int16 output takes the 16x8 kernel here (no variants to
    tune), any other the family's own."""

    def prepare(self, op: Op, graph: Graph, cpu: Cpu) -> OpData:
        if graph.tensors[op.outputs[0]].dtype == "int16":
            return OpData.of(op, graph, cpu, plan_16x8(op, graph))
        return super().prepare(op, graph, cpu)

    def variants(self, data: OpData) -> list:
        return [] if isinstance(data.params, Params16x8) else super().variants(data)

    def axis_map(self, data: OpData, axis: Axis) -> Rows | None:
        return None if isinstance(data.params, Params16x8) else super().axis_map(data, axis)

    def lower(self, data: OpData, variant=None) -> Lowered:
        return lower_16x8(data) if isinstance(data.params, Params16x8) else super().lower(data, variant)
