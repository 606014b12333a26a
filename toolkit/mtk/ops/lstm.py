"""UNIDIRECTIONAL_SEQUENCE_LSTM, the integer LSTM as TFLM evaluates it: int8 input, output and hidden
state, int8 weights, int32 biases, an int16 cell state and int16 gate values; and its 16x8 form (int16
input, output and hidden state, int64 biases and accumulators).

Reference (tensorflow/tflite-micro): micro/kernels/unidirectional_sequence_lstm.cc (Prepare, Eval:
EvalLstm<int8_t, int8_t, int16_t, int32_t>, or <int16_t, int8_t, int16_t, int64_t>), lstm_eval.h/.cc
(LstmStep, CalculateLstmGate, UpdateLstmCell, UpdateLstmHidden, ValidateTensorStatus) and
lstm_eval_common.cc (the Prepare side: CreateGateParams, CreateInterGateMulParams,
CreateLstmCellStateInfo). Only the standard LSTM: TFLM
refuses CIFG (no input gate), peephole, projection and layer-norm tensors, and so does mtk.

Per time step and batch row, with the hidden state h and cell state c (variable tensors, kept in
mtk's state region between inferences):
  gate[g] = act_g(sat16(FC16(x_t, Wx_g, bias_g) + FC16(h, Wh_g)))   g = input, forget, cell, output
      FC16: Σ w·(v − zp) (+ bias), MultiplyByQuantizedMultiplier to the fixed gate scale 2^-12
      (s_v·s_w computed in float, divided in double: GetQuantizedConvolutionMultipler; 16x8: the sum
      and bias in int64, MultiplyByQuantizedMultiplier(int64_t)), clamped to int16; act: Logistic(int16)
      for input/forget/output gates, Tanh(int16) (shift 0) for the cell gate (lut16.py)
  c = sat16(Mul(forget, c; 2^-15) + Mul(input, cell; 2^-30/s_c)), clipped to ±cell_clip/s_c if set
  h = clamp(Mul(Tanh(c; the cell scale's rounded log2), output; 2^-30/s_h) + zp_h);  out_t = h
The output gate reads the hidden state of the previous step, as TFLM's (it updates h last). Rows
run in memory order: batch-major input is one sequence per batch row (TFLM's batch-then-time
loops), time-major input every batch row at each step; a row only touches its own state.

One TIR kernel: the four gates' int16 values of a row go to a scratch of 4·units int16 (TFLM asks
for four such buffers per batch), the zero points are folded into per-unit constants offline. The int8
LSTM's dot products run on the GEMM micro-kernels (MicroKernelDots), the 16x8 one's on the 16x8 GEMM's
(PairDots) or, when the sums may leave int32, in plain int64 loops (LoopDots).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from tvm import tirx
from tvm.script import ir_builder as IB
from tvm.script.ir_builder import tirx as T

from ..errors import ModelError
from ..graph import Graph, Op, Tensor
from ..kernels.table import KernelSpec, gemm_choices, weight_group
from ..target import Cpu
from .base import Const, Kernel, Lowered, OpData, OpDef, Scratch, io
from .common import i32, op_error
from .elementwise import Rescale
from .fixedpoint import clamp, multiply_by_quantized_multiplier_s64, quantize_multiplier, reduced_multiplier
from .int16x8 import DOT_PAIRS, DOT_S16_HEADER
from .lut16 import SIGMOID_TABLE_UINT16, input_scaling, logistic_s16, tanh_s16
from .microkernels import GROUP, HELIUM_CHUNK
from .requant import clamp_s8

# lstm_shared.h: the op's 24 inputs
INPUT = 0
INPUT_WEIGHTS = (1, 2, 3, 4)        # input-to-{input, forget, cell, output} weights
RECURRENT_WEIGHTS = (5, 6, 7, 8)
GATE_BIASES = (12, 13, 14, 15)
HIDDEN_STATE, CELL_STATE = 18, 19
VARIANTS = {"peephole weights": (9, 10, 11), "projection weights and bias": (16, 17),
            "layer-norm coefficients": (20, 21, 22, 23)}
GATE_INPUT, GATE_FORGET, GATE_CELL, GATE_OUTPUT = range(4)

BIAS_TYPES = {"int8": "int32", "int16": "int64"}   # EvalLstm's BiasType per activation type
GATE_SCALE = 2.0 ** -12       # PrepareGateParametersInteger: Q3.12 gate inputs
NONLINEAR_SCALE = 2.0 ** -15  # Q0.15 gate outputs


@dataclass(frozen=True)
class LstmPlan:
    activations: str          # "int8" or "int16" (16x8)
    rows: int                 # batch · time steps, in memory order
    steps: int
    batch: int
    time_major: bool
    depth: int                # input features
    units: int                # state dimension
    input_fc: tuple[Rescale, ...]       # per gate: x·Wx to the gate scale
    recurrent_fc: tuple[Rescale, ...]   # per gate: h·Wh to the gate scale
    forget_cell: Rescale
    input_cell: Rescale
    output_hidden: Rescale
    hidden_zp: int
    cell_clip: int | None     # quantized; None: no clipping (cell_clip 0)
    cell_tanh: tuple[int, int]          # the cell state's Tanh input multiplier and right shift
    input_bias: np.ndarray    # int32 (16x8: int64) [4, units]: bias − zp_x·ΣWx
    recurrent_bias: np.ndarray   # the same type [4, units]: −zp_h·ΣWh
    input_weights: np.ndarray    # int8 [4, units, depth]
    recurrent_weights: np.ndarray   # int8 [4, units, units]

    @property
    def accumulator(self) -> str:
        return BIAS_TYPES[self.activations]

    def row_batch(self, r):
        """The batch row that memory row `r` of the input belongs to."""
        return r % i32(self.batch) if self.time_major else r // i32(self.steps)

    def gate_input(self, gate: int, recurrent: bool, acc):
        """One FC16 of a gate from its accumulator (bias included): to the gate scale, saturated to int16."""
        r = (self.recurrent_fc if recurrent else self.input_fc)[gate]
        if self.accumulator == "int64":
            return _sat16(multiply_by_quantized_multiplier_s64(acc, *reduced_multiplier(r.multiplier, r.shift)))
        return _sat16(r.apply(acc))

    def hidden(self, product):
        """The hidden state's value from tanh(c)·output gate (MulElementwise into the activation type)."""
        scaled = self.output_hidden.apply(product) + i32(self.hidden_zp)
        return _sat16(scaled).astype("int16") if self.activations == "int16" else clamp_s8(scaled, -128, 127)


def _f32(v: float) -> np.float32:
    return np.float32(v)


def _rescale(real: float) -> Rescale:
    return Rescale(*quantize_multiplier(real))


def _fc_scale(input_scale: float, weight_scale: float) -> Rescale:
    """GetQuantizedConvolutionMultipler: the scales' product in float, over the gate scale in double."""
    return _rescale(float(_f32(input_scale) * _f32(weight_scale)) / GATE_SCALE)


def _mul_scale(scale1: float, scale2: float, out_scale: float) -> Rescale:
    """CreateInterGateMulParams: in double from the float scales."""
    return _rescale(float(_f32(scale1)) * float(_f32(scale2)) / float(_f32(out_scale)))


def cell_scale_power(scale: float) -> int:
    """CheckedLog2 (quantization_util.cc) in float: log2 of the cell state's scale, rounded (TFLM uses the
    rounded value whether or not the scale is a power of two)."""
    log2 = float(_f32(np.log(_f32(scale))) * _f32(_f32(1.0) / _f32(np.log(_f32(2.0)))))
    return int(math.copysign(math.floor(abs(log2) + 0.5), log2))   # std::round: half away from zero


def _wrap32(values: np.ndarray) -> np.ndarray:
    return ((values.astype(np.int64) + 2**31) % 2**32 - 2**31).astype(np.int32)


class UnidirectionalSequenceLstm(OpDef):
    types = ("UNIDIRECTIONAL_SEQUENCE_LSTM",)

    def plan(self, op: Op, graph: Graph) -> LstmPlan:
        inputs, y = io(op, graph)
        if len(inputs) != 24:
            raise op_error(op, f"{len(inputs)} inputs; TFLM's LSTM takes 24")
        _check_standard(op, inputs)
        x, h, c = inputs[INPUT], inputs[HIDDEN_STATE], inputs[CELL_STATE]
        wx = [inputs[i] for i in INPUT_WEIGHTS]
        wh = [inputs[i] for i in RECURRENT_WEIGHTS]
        biases = [inputs[i] for i in GATE_BIASES]
        _check_types(op, x, h, c, y, wx + wh, biases)
        activation = op.options.get("fused_activation_function", "NONE")
        if activation != "TANH":
            raise op_error(op, f"cell gate activation {activation}; TFLM's integer LSTM computes TANH only")
        time_major = bool(op.options.get("time_major", False))
        if len(x.shape) != 3 or len(y.shape) != 3:
            raise op_error(op, f"input {list(x.shape)} and output {list(y.shape)} must be 3-D")
        steps, batch = (x.shape[0], x.shape[1]) if time_major else (x.shape[1], x.shape[0])
        depth, units = x.shape[2], y.shape[2]
        if tuple(y.shape[:2]) != tuple(x.shape[:2]) or min(steps, batch, depth, units) < 1:
            raise op_error(op, f"input {list(x.shape)} does not give output {list(y.shape)}")
        for t in wx:
            _check_shape(op, t, (units, depth))
        for t in wh:
            _check_shape(op, t, (units, units))
        for t in biases:
            _check_shape(op, t, (units,))
        for t in (h, c):
            if t.size != batch * units:
                raise op_error(op, f"state '{t.name}' has {t.size} values; {batch} batch × {units} units need "
                                   f"{batch * units}")
        power = cell_scale_power(c.quant.s)
        tanh_shift = 12 + power   # lstm_eval.cc Tanh: (15 + cell_state_scale_power) - 3
        if not -31 <= tanh_shift <= 14:
            raise op_error(op, f"cell state scale {c.quant.s:g} (2^{power}) is outside what TFLM's int16 tanh "
                               "input scaling holds (2^-43 to 2^2)")
        cell_tanh = input_scaling(0, tanh_shift) if tanh_shift >= 0 else input_scaling(3, -tanh_shift)
        clip = float(op.options.get("cell_clip", 0.0))
        quantized_clip = int(min(max(clip / float(_f32(c.quant.s)), -32768.0), 32767.0)) if clip > 0 else None

        in_weights = np.stack([t.data.astype(np.int8) for t in wx])
        rec_weights = np.stack([t.data.astype(np.int8) for t in wh])
        bias = np.stack([t.data.astype(np.int64).reshape(-1) for t in biases])
        input_bias = bias - x.quant.zp * in_weights.astype(np.int64).sum(axis=2)
        recurrent_bias = -h.quant.zp * rec_weights.astype(np.int64).sum(axis=2)
        input_fc = tuple(_fc_scale(x.quant.s, t.quant.s) for t in wx)
        recurrent_fc = tuple(_fc_scale(h.quant.s, t.quant.s) for t in wh)
        if x.dtype == "int8":
            input_bias, recurrent_bias = _wrap32(input_bias), _wrap32(recurrent_bias)
        else:
            for r in (*input_fc, *recurrent_fc):
                try:
                    reduced_multiplier(r.multiplier, r.shift)
                except ModelError as err:
                    raise op_error(op, err.message) from None
        return LstmPlan(
            activations=x.dtype, rows=steps * batch, steps=steps, batch=batch, time_major=time_major, depth=depth,
            units=units,
            input_fc=input_fc, recurrent_fc=recurrent_fc,
            forget_cell=_mul_scale(NONLINEAR_SCALE, c.quant.s, c.quant.s),
            input_cell=_mul_scale(NONLINEAR_SCALE, NONLINEAR_SCALE, c.quant.s),
            output_hidden=_mul_scale(NONLINEAR_SCALE, NONLINEAR_SCALE, h.quant.s),
            hidden_zp=h.quant.zp, cell_clip=quantized_clip, cell_tanh=cell_tanh,
            input_bias=input_bias, recurrent_bias=recurrent_bias,
            input_weights=in_weights, recurrent_weights=rec_weights)

    def macs(self, data: OpData) -> int:
        p: LstmPlan = data.params
        return p.rows * 4 * p.units * (p.depth + p.units)

    def lower(self, data: OpData, variant=None) -> Lowered:
        op, p = data.op, data.params
        g = MicroKernelDots.of(p, data.cpu) if p.activations == "int8" else \
            PairDots(-(-p.units // 2) * 2, p.depth, p.units) if PairDots.fits(p) else LoopDots(p.units, p.depth)
        args = [op.inputs[INPUT], Const("lstm_wx", g.pack(p.input_weights)),
                Const("lstm_wh", g.pack(p.recurrent_weights)), Const("lstm_bx", g.pad(p.input_bias)),
                Const("lstm_bh", g.pad(p.recurrent_bias)),
                Const("sigmoid_table", SIGMOID_TABLE_UINT16), op.inputs[HIDDEN_STATE], op.inputs[CELL_STATE],
                op.outputs[0], Scratch(4 * g.units * 2, name="gates")]
        if g.packed_bytes:
            args.append(Scratch(g.packed_bytes, name="rows"))
        return Lowered([Kernel("lstm", args, func=lstm_func(p, g), headers=g.headers, c_calls=g.c_calls)])


@dataclass(frozen=True)
class LoopDots:
    """The 16x8 LSTM's dot products: plain loops, one unit at a time, int16 values times int8 weights
    summed in int64 as TFLM's FullyConnected<int16_t, int8_t, int16_t, int64_t> does."""

    units: int
    depth_x: int
    cols = 1
    packed_bytes = 0
    raw_sums = 0
    headers: tuple[str, ...] = ()
    c_calls: tuple[str, ...] = ()

    @property
    def tiles(self) -> int:
        return self.units

    weight_dtype = "int8"

    def weight_elements(self, depth: int) -> int:
        return 4 * self.units * depth

    def pack(self, weights: np.ndarray) -> np.ndarray:
        return weights.reshape(-1)

    def pad(self, bias: np.ndarray) -> np.ndarray:
        return bias.astype(np.int64).reshape(-1)

    def start_row(self, x, h, rows, r, b) -> None:
        pass

    def sums(self, gate: int, t, x, wx, h, wh, rows, acc, raw, r, b) -> None:
        I, S = self.depth_x, self.units
        u = gate * S + t
        for slot, (values, weights, n, base) in enumerate(((x, wx, I, r * I), (h, wh, S, b * S))):
            T.buffer_store(acc, tirx.const(0, "int64"), [slot])
            with T.serial(0, n) as k:
                product = values[base + k].astype("int32") * weights[u * n + k].astype("int32")
                T.buffer_store(acc, acc[slot] + product.astype("int64"), [slot])


@dataclass(frozen=True)
class PairDots:
    """The 16x8 LSTM's dot products when no unit's Σ|w|·32768 can leave int32 (then the int32 sums are the
    int64 ones): the 16x8 GEMM's one-row micro-kernel (c/mtk_dot_s16.h mtk_dot_1x2_s16, SMLAD on the int16 row
    as it is), two units per call, int8 weights interleaved in channel pairs (int16x8.DOT_PAIRS)."""

    units: int                # padded to pairs
    depth_x: int
    depth_h: int
    cols = 2
    packed_bytes = 0
    raw_sums = 4
    weight_dtype = "int8"
    headers = (DOT_S16_HEADER,)
    c_calls = (DOT_PAIRS.one_row,)

    @staticmethod
    def fits(p: LstmPlan) -> bool:
        return all(int(np.abs(w.astype(np.int64)).sum(axis=-1).max()) * 32768 < 2**31
                   for w in (p.input_weights, p.recurrent_weights))

    @property
    def tiles(self) -> int:
        return self.units // 2

    def weight_elements(self, depth: int) -> int:
        return 4 * self.tiles * DOT_PAIRS.block_len(depth)

    def pack(self, weights: np.ndarray) -> np.ndarray:
        return np.concatenate([DOT_PAIRS.pack(w) for w in weights])

    def pad(self, bias: np.ndarray) -> np.ndarray:
        padded = np.zeros((4, self.units), np.int64)
        padded[:, :bias.shape[1]] = bias
        return padded.reshape(-1)

    def start_row(self, x, h, rows, r, b) -> None:
        pass

    def sums(self, gate: int, t, x, wx, h, wh, rows, acc, raw, r, b) -> None:
        """acc = (x·Wx, h·Wh) of units 2t, 2t+1 of `gate`, widened to int64."""
        I, S = self.depth_x, self.depth_h
        for slot, (values, weights, n, base) in enumerate(((x, wx, I, r * I), (h, wh, S, b * S))):
            block = DOT_PAIRS.block_len(n)
            T.evaluate(T.call_extern("int32", DOT_PAIRS.one_row, T.address_of(values[base]),
                                     T.address_of(weights[(gate * self.tiles + t) * block]), n,
                                     T.address_of(raw[2 * slot])))
            for j in range(2):
                T.buffer_store(acc, raw[2 * slot + j].astype("int64"), [2 * slot + j])


@dataclass(frozen=True)
class MicroKernelDots:
    """The int8 LSTM's dot products: the CPU's one-row GEMM micro-kernel (kernels/table.py) over the row
    of x and the hidden state, each packed once per row, and each gate's weights packed offline in tiles
    of the micro-kernel's units (padded units compute into the scratch and are never read)."""

    kernel: KernelSpec
    group: int                # depth values per weight group
    raw_sums = 0
    units: int                # units padded to whole tiles
    depth_x: int
    depth_h: int

    @classmethod
    def of(cls, p: LstmPlan, cpu: Cpu) -> MicroKernelDots:
        kernel = gemm_choices(cpu, 1, fused=False)[0]
        return cls(kernel, weight_group(cpu), -(-p.units // kernel.cols) * kernel.cols, p.depth, p.units)

    @property
    def cols(self) -> int:
        return self.kernel.cols

    @property
    def headers(self) -> tuple[str, ...]:
        return (self.kernel.header,)

    @property
    def c_calls(self) -> tuple[str, ...]:
        return (self.kernel.name,)

    @property
    def tiles(self) -> int:
        return self.units // self.kernel.cols

    @property
    def weight_dtype(self) -> str:
        return self.kernel.pack(np.zeros((1, 1), np.int8), self.cols, self.group).dtype.name

    def weight_elements(self, depth: int) -> int:
        return 4 * self.tiles * self.tile_elements(depth)

    def tile_elements(self, depth: int) -> int:
        return self.kernel.weight_bytes(self.kernel.cols, depth, self.group) // self.kernel.bytes_per_weight

    def pack(self, weights: np.ndarray) -> np.ndarray:
        """[4 gates, units, depth] -> the gates' packed weights one after the other."""
        return np.concatenate([self.kernel.pack(w, self.kernel.cols, self.group) for w in weights])

    def pad(self, bias: np.ndarray) -> np.ndarray:
        padded = np.zeros((4, self.units), np.int32)
        padded[:, :bias.shape[1]] = bias
        return padded.reshape(-1)

    @staticmethod
    def row_bytes(depth: int) -> int:
        """A row packed by mtk_pack_row_s16: 2 bytes a value, whole chunks of 16 (gemm.GemmLayout)."""
        return -(-depth // HELIUM_CHUNK) * HELIUM_CHUNK * 2

    @property
    def packed_x(self) -> int:
        return self.row_bytes(self.depth_x)

    @property
    def packed_bytes(self) -> int:
        return self.packed_x + self.row_bytes(self.depth_h)

    def start_row(self, x, h, rows, r, b) -> None:
        """x's row and the hidden state packed for the micro-kernel (mtk_pack_row_s16)."""
        T.evaluate(T.call_extern("int32", "mtk_pack_row_s16", T.address_of(x[r * self.depth_x]), self.depth_x,
                                 T.address_of(rows[0])))
        T.evaluate(T.call_extern("int32", "mtk_pack_row_s16", T.address_of(h[b * self.depth_h]), self.depth_h,
                                 T.address_of(rows[self.packed_x])))

    def sums(self, gate: int, t, x, wx, h, wh, rows, acc, raw, r, b) -> None:
        """acc[0:cols] = x·Wx and acc[cols:2·cols] = h·Wh for the units of tile t of `gate`."""
        tile_x, tile_h = self.tile_elements(self.depth_x), self.tile_elements(self.depth_h)
        T.evaluate(T.call_extern("int32", self.kernel.name, T.address_of(rows[0]),
                                 T.address_of(wx[(gate * self.tiles + t) * tile_x]), -(-self.depth_x // GROUP),
                                 T.address_of(acc[0])))
        T.evaluate(T.call_extern("int32", self.kernel.name, T.address_of(rows[self.packed_x]),
                                 T.address_of(wh[(gate * self.tiles + t) * tile_h]), -(-self.depth_h // GROUP),
                                 T.address_of(acc[self.cols])))


def _check_standard(op: Op, inputs: list[Tensor | None]) -> None:
    """ValidateTensorStatus: the standard LSTM's tensors present, the variants' absent."""
    for what, positions in VARIANTS.items():
        given = [k for k in positions if inputs[k] is not None]
        if given:
            raise op_error(op, f"{what} given (input {given[0]}); TFLM's LSTM supports the standard LSTM only "
                               "(no peephole, projection or layer norm)")
    missing = [k for k in (INPUT, *INPUT_WEIGHTS, *RECURRENT_WEIGHTS, *GATE_BIASES, HIDDEN_STATE, CELL_STATE)
               if inputs[k] is None]
    if missing:
        cifg = " (CIFG: no input gate)" if missing[0] in (1, 5, 12) else ""
        raise op_error(op, f"input {missing[0]} is omitted{cifg}; TFLM's LSTM needs all four gates' weights and "
                           "biases and both states")


def _check_types(op: Op, x: Tensor, h: Tensor, c: Tensor, y: Tensor, weights: list[Tensor],
                 biases: list[Tensor]) -> None:
    if x.dtype not in BIAS_TYPES or y.dtype != x.dtype or h.dtype != x.dtype or c.dtype != "int16" \
            or any(t.dtype != "int8" for t in weights) or any(t.dtype != BIAS_TYPES[x.dtype] for t in biases):
        kinds = f"input {x.dtype}, weights {weights[0].dtype}, bias {biases[0].dtype}, cell state {c.dtype}"
        raise op_error(op, f"{kinds} -> {y.dtype}; TFLM's integer LSTMs take int8 (or int16) input, output and hidden "
                           "state, int8 weights, int32 (int64) biases, an int16 cell state")
    for t in (h, c):
        if not t.variable:
            raise op_error(op, f"the state '{t.name}' is not a variable tensor (TFLM requires it)")
    for t in (*weights, *biases):
        if not t.is_constant:
            raise op_error(op, f"'{t.name}' must be a constant tensor")
    for t in (x, h, c, y, *weights):
        if t.quant is None or t.quant.per_channel:
            raise op_error(op, f"tensor '{t.name}' must be quantized per tensor (TFLM's LSTM reads one scale)")
    for t in weights:
        if t.quant.zp != 0:
            raise op_error(op, f"weights '{t.name}' have zero point {t.quant.zp}; TFLM requires symmetric weights")
    if c.quant.zp != 0:
        raise op_error(op, f"cell state '{c.name}' has zero point {c.quant.zp}; TFLM's int16 cell state is symmetric")


def _check_shape(op: Op, t: Tensor, shape: tuple[int, ...]) -> None:
    if tuple(t.shape) != shape:
        raise op_error(op, f"'{t.name}' has shape {list(t.shape)}; the LSTM's sizes need {list(shape)}")


def _sat16(x):
    """x saturated to int16 (mtk_sat_s16: SSAT where there is one)."""
    return tirx.call_extern("int32", "mtk_sat_s16", x)


def lstm_func(p: LstmPlan, g: MicroKernelDots | PairDots | LoopDots) -> tirx.PrimFunc:
    """The PrimFunc (x, wx, wh, bx, bh, table, h, c, out, gates[, rows]): every row of the input, in order."""
    S, I, U, cols, act = p.units, p.depth, g.units, g.cols, p.activations
    sigmoid, cell_gate = input_scaling(0, 0), input_scaling(0, 0)   # lstm_eval.cc: Sigmoid, Tanh(-12)
    with IB.IRBuilder() as ib:
        with T.prim_func():
            T.func_name("main")
            x = T.arg("x", T.buffer((p.rows * I,), act))
            wx = T.arg("wx", T.buffer((g.weight_elements(I),), g.weight_dtype))
            wh = T.arg("wh", T.buffer((g.weight_elements(S),), g.weight_dtype))
            bx = T.arg("bx", T.buffer((4 * U,), p.accumulator))
            bh = T.arg("bh", T.buffer((4 * U,), p.accumulator))
            table = T.arg("table", T.buffer((256,), "uint16"))
            h = T.arg("h", T.buffer((p.batch * S,), act))
            c = T.arg("c", T.buffer((p.batch * S,), "int16"))
            out = T.arg("out", T.buffer((p.rows * S,), act))
            gates = T.arg("gates", T.buffer((4 * U,), "int16"))
            rows = T.arg("rows", T.buffer((g.packed_bytes,), "int8")) if g.packed_bytes else None
            acc = T.alloc_buffer((2 * cols,), p.accumulator)
            raw = T.alloc_buffer((g.raw_sums,), "int32") if g.raw_sums else None
            with T.serial(0, p.rows) as r:
                b = p.row_batch(r)
                g.start_row(x, h, rows, r, b)
                for gate in range(4):
                    with T.serial(0, g.tiles) as t:
                        g.sums(gate, t, x, wx, h, wh, rows, acc, raw, r, b)
                        with T.serial(0, cols) as j:
                            u = gate * U + t * cols + j
                            pre = _sat16(p.gate_input(gate, False, acc[j] + bx[u])
                                         + p.gate_input(gate, True, acc[cols + j] + bh[u]))
                            value = tanh_s16(pre, table, *cell_gate) if gate == GATE_CELL \
                                else logistic_s16(pre, table, *sigmoid)
                            T.buffer_store(gates, value, [u])
                with T.serial(0, S) as s:
                    def gate_value(index):
                        return gates[index * U + s].astype("int32")
                    kept = _sat16(p.forget_cell.apply(gate_value(GATE_FORGET) * c[b * S + s].astype("int32")))
                    added = _sat16(p.input_cell.apply(gate_value(GATE_INPUT) * gate_value(GATE_CELL)))
                    cell = _sat16(kept + added)
                    if p.cell_clip is not None:
                        cell = clamp(cell, -p.cell_clip, p.cell_clip)
                    T.buffer_store(c, cell.astype("int16"), [b * S + s])
                    squashed = tanh_s16(c[b * S + s].astype("int32"), table, *p.cell_tanh).astype("int32")
                    hidden = p.hidden(squashed * gate_value(GATE_OUTPUT))
                    T.buffer_store(h, hidden, [b * S + s])
                    T.buffer_store(out, hidden, [r * S + s])
    return ib.get()


OPS = [UnidirectionalSequenceLstm()]
