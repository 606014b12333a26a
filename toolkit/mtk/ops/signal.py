"""TFLM's signal library: the custom ops of its audio front end (micro_speech's audio_preprocessor models), each
one call of a hand-written C kernel (kernels/c/common/mtk_signal.h) computing what TFLM computes, bit for bit.

References (tensorflow/tflite-micro): signal/micro/kernels/<op>.cc (Init reads the flexbuffer options by their
position in the key-sorted map, Prepare checks ranks and types) and signal/src/<op>.cc (the arithmetic);
kissfft v130 (kiss_fft.c, tools/kiss_fftr.c: TFLM's int16 real FFT).

    op type (CUSTOM:...)                 inputs -> outputs                        options
    SignalWindow                         int16 x, int16 window -> int16           shift
    SignalFftAutoScale                   int16 -> int16, int32 scale bits
    SignalRfft                           int16 -> int16 (re, im pairs)            T, fft_length
    SignalEnergy                         int16 (re, im) -> uint32                 end_index, start_index
    SignalFilterBank                     uint32, 5 int16 tables -> uint64         num_channels
    SignalFilterBankSquareRoot           uint64, int32 scale bits -> uint32
    SignalFilterBankSpectralSubtraction  uint32 -> uint32, uint32 noise           9 (state: the noise estimate)
    SignalPCAN                           uint32, uint32 noise, int16 lut -> uint32  snr_shift
    SignalFilterBankLog                  uint32 -> int16                          input_correction_bits, output_scale
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ..graph import Graph, Op, Tensor
from ..kernels.signature import CFunction
from ..validation import CUSTOM
from .base import Const, Kernel, Lowered, OpData, OpDef, Operand, Scratch, State
from .common import op_error

SIGNAL_HEADER = "signal"
FFT_TYPES = {7: "int16", 2: "int32", 0: "float32"}   # SignalRfft's 'T' (a TensorType) -> the element type
FFT_RADICES = (2, 3, 4, 5)   # kissfft's butterflies; TFLM's build allocates none for its generic one
MAX_FFT_LENGTH = 2**20
PCAN_LUT_SIZE = 125     # WideDynamicFunction reads up to lut[4 * 32 - 6 + 2]


@dataclass(frozen=True)
class SignalPlan:
    options: dict[str, int]
    extra: Any = None    # what one op computes beyond its options (the FFT's tables)


@dataclass(frozen=True)
class FftTables:
    twiddles: np.ndarray         # int16 (re, im) pairs of kiss_fft_alloc(fft_length / 2)
    super_twiddles: np.ndarray   # int16 (re, im) pairs of kiss_fftr_alloc
    factors: np.ndarray          # int32 (radix, stage length) pairs of kf_factor


def _kf_factor(n: int) -> list[int]:
    """kissfft's kf_factor: powers of 4, then 2, then odd primes."""
    factors, p, floor_sqrt = [], 4, math.floor(math.sqrt(n))
    while True:
        while n % p:
            p = {4: 2, 2: 3}.get(p, p + 2)
            if p > floor_sqrt:
                p = n
        n //= p
        factors += [p, n]
        if n <= 1:
            return factors


def _kf_cexp(phase: float) -> tuple[int, int]:
    """kf_cexp with FIXED_POINT 16: floor(.5 + 32767 * cos), the same for sin (this libm's, as TFLM's)."""
    return math.floor(.5 + 32767 * math.cos(phase)), math.floor(.5 + 32767 * math.sin(phase))


def fft_tables(fft_length: int) -> FftTables:
    """kiss_fftr_alloc(fft_length)'s state for the forward int16 FFT."""
    ncfft = fft_length // 2
    pi = 3.141592653589793238462643383279502884197169399375105820974944
    twiddles = [_kf_cexp(-2 * pi * i / ncfft) for i in range(ncfft)]
    super_twiddles = [_kf_cexp(-3.14159265358979323846264338327 * ((i + 1) / ncfft + .5)) for i in range(ncfft // 2)]
    return FftTables(np.array(twiddles, np.int16).reshape(-1), np.array(super_twiddles, np.int16).reshape(-1),
                     np.array(_kf_factor(ncfft), np.int32))


# ---- checks of one op's tensors and options (TFLM's Prepare, and what its Eval would read out of bounds) ----

def _sizes_equal(op: Op, *tensors: Tensor) -> None:
    if len({t.size for t in tensors}) != 1:
        raise op_error(op, "tensors " + ", ".join(f"'{t.name}' {list(t.shape)}" for t in tensors)
                       + " must have the same number of elements")


def _in_range(op: Op, options: dict[str, int], key: str, lo: int, hi: int, why: str) -> None:
    if not lo <= options[key] <= hi:
        raise op_error(op, f"option {key} is {options[key]}; it must be in [{lo}, {hi}] ({why})")


def _window(op: Op, graph: Graph, o: dict[str, int]) -> None:
    x, w = graph.input_tensors(op)
    _sizes_equal(op, x, graph.tensors[op.outputs[0]])
    if x.size % w.size:
        raise op_error(op, f"input '{x.name}' of {x.size} values is not whole windows of {w.size}")
    _in_range(op, o, "shift", 0, 31, "a shift of int32")


def _fft_auto_scale(op: Op, graph: Graph, o: dict[str, int]) -> None:
    _sizes_equal(op, graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]])


def _rfft(op: Op, graph: Graph, o: dict[str, int]) -> FftTables:
    x, y = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
    dtype = FFT_TYPES.get(o["T"])
    if dtype is None:
        raise op_error(op, f"T={o['T']} is none of TFLM's FFT types ({', '.join(FFT_TYPES.values())})")
    if x.dtype != dtype or y.dtype != dtype:
        raise op_error(op, f"input '{x.name}' is {x.dtype} and output '{y.name}' {y.dtype}; T={o['T']} is {dtype}")
    if dtype != "int16":
        raise op_error(op, f"an FFT of {dtype}; mtk computes TFLM's int16 FFT only (not yet its int32 and float ones)")
    n = o["fft_length"]
    if n < 4 or n % 2 or n > MAX_FFT_LENGTH:
        raise op_error(op, f"fft_length {n}: kissfft's real FFT needs an even length from 4 (mtk: up to "
                           f"{MAX_FFT_LENGTH:,}, whose tables alone take 3 MB of flash)")
    radices = _kf_factor(n // 2)[::2]
    if any(r not in FFT_RADICES for r in radices):
        raise op_error(op, f"fft_length {n} = 2 x {' x '.join(map(str, radices))}; TFLM's kissfft computes lengths "
                           "of factors 2, 3 and 5 only (it has no memory for another butterfly)")
    if x.shape[-1] > n:
        raise op_error(op, f"input rows of {x.shape[-1]} samples are longer than fft_length {n}")
    if len(y.shape) != len(x.shape) or y.shape[:-1] != x.shape[:-1] or y.shape[-1] < n + 2:
        raise op_error(op, f"output '{y.name}' {list(y.shape)}: each row of {list(x.shape)} needs {n + 2} values "
                           f"({n // 2 + 1} complex)")
    return fft_tables(n)


def _energy(op: Op, graph: Graph, o: dict[str, int]) -> None:
    x, y = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
    start, end = o["start_index"], o["end_index"]
    if not 0 <= start <= end <= min(x.size // 2, y.size):
        raise op_error(op, f"bins [{start}, {end}) of {x.size // 2} complex inputs and {y.size} outputs")


def _filter_bank(op: Op, graph: Graph, o: dict[str, int]) -> None:
    x, weights, unweights, starts, weight_starts, widths = graph.input_tensors(op)
    n, y = o["num_channels"], graph.tensors[op.outputs[0]]
    if n < y.size:   # TFLM copies the output's channels out of its num_channels sums
        raise op_error(op, f"num_channels {n} for output '{y.name}' of {y.size} channels")
    for t in (starts, weight_starts, widths):
        if t.size < n + 1:
            raise op_error(op, f"'{t.name}' has {t.size} values for {n} + 1 channels")
    if all(t.is_constant for t in (starts, weight_starts, widths)):   # else TFLM reads wherever they point too
        start, weight_start, width = (t.data.reshape(-1)[:n + 1].astype(np.int64) for t in (starts, weight_starts, widths))
        limit = min(weights.size, unweights.size)
        if np.any(start < 0) or np.any(weight_start < 0) or np.any(start + width > x.size) \
                or np.any(weight_start + width > limit):
            raise op_error(op, f"a channel reads outside the {x.size} inputs or {limit} weights")


def _square_root(op: Op, graph: Graph, o: dict[str, int]) -> None:
    x, bits = graph.input_tensors(op)
    _sizes_equal(op, x, graph.tensors[op.outputs[0]])
    if bits.is_constant and not 0 <= int(bits.data.reshape(-1)[0]) <= 31:
        raise op_error(op, f"scale bits {int(bits.data.reshape(-1)[0])}: a shift of uint32 takes 0 to 31")


def _spectral_subtraction(op: Op, graph: Graph, o: dict[str, int]) -> None:
    x = graph.tensors[op.inputs[0]]
    outputs = graph.output_tensors(op)
    _sizes_equal(op, x, *outputs)
    if o["num_channels"] != x.size:
        raise op_error(op, f"num_channels {o['num_channels']} for input '{x.name}' of {x.size} channels")
    _in_range(op, o, "smoothing_bits", 0, 31, "a shift of uint32")
    _in_range(op, o, "spectral_subtraction_bits", 0, 63, "a shift of uint64")


def _pcan(op: Op, graph: Graph, o: dict[str, int]) -> None:
    x, noise, lut = graph.input_tensors(op)
    _sizes_equal(op, x, noise, graph.tensors[op.outputs[0]])
    if lut.size < PCAN_LUT_SIZE:
        raise op_error(op, f"gain table '{lut.name}' has {lut.size} values; TFLM reads up to {PCAN_LUT_SIZE}")
    _in_range(op, o, "snr_shift", 0, 63, "a shift of uint64")


def _log(op: Op, graph: Graph, o: dict[str, int]) -> None:
    _sizes_equal(op, graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]])
    _in_range(op, o, "input_correction_bits", 0, 31, "a shift of uint32")


# ---- the C calls ----

def _u32(value: int) -> str:
    return f"{value & 0xFFFFFFFF}u"


@dataclass(frozen=True)
class SignalCall:
    """One op's kernel: its C parameters, the body calling kernels/c/common/mtk_signal.h, the operands the parameters take."""

    params: str
    body: str
    args: list[Operand]


def _window_call(data: OpData) -> SignalCall:
    x, w = data.inputs
    return SignalCall("const int16_t* x, const int16_t* window, int16_t* y",
                      f"mtk_signal_window(x, window, y, {x.size}, {w.size}, {data.params.options['shift']})",
                      [*data.op.inputs, data.op.outputs[0]])


def _fft_auto_scale_call(data: OpData) -> SignalCall:
    return SignalCall("const int16_t* x, int16_t* y, int32_t* scale_bits",
                      f"mtk_signal_fft_auto_scale(x, y, scale_bits, {data.output.size})",
                      [data.op.inputs[0], *data.op.outputs])


def _rfft_call(data: OpData) -> SignalCall:
    x, y, n, tables = data.inputs[0], data.output, data.params.options["fft_length"], data.params.extra
    return SignalCall(
        "const int16_t* x, int16_t* y, int16_t* work, void* points, const void* twiddles, const void* super_twiddles, "
        "const int32_t* factors",
        f"mtk_signal_rfft_s16(x, y, work, points, twiddles, super_twiddles, factors, {n}, {x.shape[-1]}, {x.size}, "
        f"{y.shape[-1] // 2})",
        [data.op.inputs[0], data.op.outputs[0], Scratch(2 * n, "fft_input"), Scratch(2 * n, "fft_points"),
         Const("twiddles", tables.twiddles), Const("super_twiddles", tables.super_twiddles),
         Const("factors", tables.factors)])


def _energy_call(data: OpData) -> SignalCall:
    o = data.params.options
    return SignalCall("const int16_t* x, uint32_t* y", f"mtk_signal_energy(x, y, {o['start_index']}, {o['end_index']})",
                      [data.op.inputs[0], data.op.outputs[0]])


def _filter_bank_call(data: OpData) -> SignalCall:
    n = data.params.options["num_channels"]
    return SignalCall(
        "const uint32_t* x, const int16_t* weights, const int16_t* unweights, const int16_t* frequency_starts, "
        "const int16_t* weight_starts, const int16_t* widths, uint64_t* work, uint64_t* y",
        f"mtk_signal_filter_bank(x, weights, unweights, frequency_starts, weight_starts, widths, work, y, {n}, "
        f"{data.output.size})",
        [*data.op.inputs, Scratch(8 * (n + 1)), data.op.outputs[0]])


def _square_root_call(data: OpData) -> SignalCall:
    return SignalCall("const uint64_t* x, const int32_t* scale_bits, uint32_t* y",
                      f"mtk_signal_filter_bank_sqrt(x, scale_bits, y, {data.output.size})",
                      [*data.op.inputs, data.op.outputs[0]])


def _spectral_subtraction_call(data: OpData) -> SignalCall:
    o = data.params.options
    n = o["num_channels"]
    body = (f"static const uint32_t smoothing[2] = {{{_u32(o['smoothing'])}, {_u32(o['alternate_smoothing'])}}};\n"
            f"  static const uint32_t one_minus[2] = {{{_u32(o['one_minus_smoothing'])}, "
            f"{_u32(o['alternate_one_minus_smoothing'])}}};\n"
            f"  mtk_signal_spectral_subtraction(x, y, noise, state, {n}, smoothing, one_minus, "
            f"{_u32(o['min_signal_remaining'])}, {o['smoothing_bits']}u, {o['spectral_subtraction_bits']}u, "
            f"{int(bool(o['clamping']))})")
    return SignalCall("const uint32_t* x, uint32_t* y, uint32_t* noise, uint32_t* state", body,
                      [data.op.inputs[0], *data.op.outputs, State("noise_estimate", "uint32", n)])


def _pcan_call(data: OpData) -> SignalCall:
    return SignalCall("const uint32_t* x, const uint32_t* noise, const int16_t* gain_lut, uint32_t* y",
                      f"mtk_signal_pcan(x, noise, gain_lut, y, {data.output.size}, {data.params.options['snr_shift']})",
                      [*data.op.inputs, data.op.outputs[0]])


def _log_call(data: OpData) -> SignalCall:
    o = data.params.options
    return SignalCall("const uint32_t* x, int16_t* y",
                      f"mtk_signal_filter_bank_log(x, y, {data.output.size}, {o['output_scale']}, "
                      f"{o['input_correction_bits']}u)", [data.op.inputs[0], data.op.outputs[0]])


@dataclass(frozen=True)
class SignalOp:
    inputs: tuple[str, ...]      # element types TFLM's Prepare requires, in order
    outputs: tuple[str, ...]
    options: tuple[str, ...]     # the flexbuffer map's keys: TFLM reads the values by position in this (sorted) order
    check: Callable[[Op, Graph, dict[str, int]], Any]
    call: Callable[[OpData], SignalCall]
    boolean_options: tuple[str, ...] = ()


SIGNAL_OPS: dict[str, SignalOp] = {
    "SignalWindow": SignalOp(("int16", "int16"), ("int16",), ("shift",), _window, _window_call),
    "SignalFftAutoScale": SignalOp(("int16",), ("int16", "int32"), (), _fft_auto_scale, _fft_auto_scale_call),
    "SignalRfft": SignalOp((), (), ("T", "fft_length"), _rfft, _rfft_call),   # the types 'T' names
    "SignalEnergy": SignalOp(("int16",), ("uint32",), ("end_index", "start_index"), _energy, _energy_call),
    "SignalFilterBank": SignalOp(("uint32", *("int16",) * 5), ("uint64",), ("num_channels",), _filter_bank,
                                 _filter_bank_call),
    "SignalFilterBankSquareRoot": SignalOp(("uint64", "int32"), ("uint32",), (), _square_root, _square_root_call),
    "SignalFilterBankSpectralSubtraction": SignalOp(
        ("uint32",), ("uint32", "uint32"),
        ("alternate_one_minus_smoothing", "alternate_smoothing", "clamping", "min_signal_remaining", "num_channels",
         "one_minus_smoothing", "smoothing", "smoothing_bits", "spectral_subtraction_bits"),
        _spectral_subtraction, _spectral_subtraction_call, boolean_options=("clamping",)),
    "SignalPCAN": SignalOp(("uint32", "uint32", "int16"), ("uint32",), ("snr_shift",), _pcan, _pcan_call),
    "SignalFilterBankLog": SignalOp(("uint32",), ("int16",), ("input_correction_bits", "output_scale"), _log,
                                    _log_call),
}


def _options(op: Op, spec: SignalOp) -> dict[str, int]:
    """The op's flexbuffer options: exactly the keys TFLM reads by position, each an int32 (a bool where it is one)."""
    if sorted(op.options) != sorted(spec.options):
        raise op_error(op, f"options {sorted(op.options)}; TFLM reads {list(spec.options)} by their position in the map")
    for key, value in op.options.items():
        wanted = bool if key in spec.boolean_options else int
        if not isinstance(value, wanted) or (wanted is int and isinstance(value, bool)) \
                or (wanted is int and not -2**31 <= value < 2**31):
            raise op_error(op, f"option {key} is {value!r}; TFLM reads an {'bool' if wanted is bool else 'int32'}")
    return dict(op.options)


class Signal(OpDef):
    types = tuple(CUSTOM + name for name in SIGNAL_OPS)

    def plan(self, op: Op, graph: Graph) -> SignalPlan:
        spec = SIGNAL_OPS[op.type.removeprefix(CUSTOM)]
        for t in [*graph.input_tensors(op), *graph.output_tensors(op)]:
            if t.size == 0:   # TFLM's loops over rows of them would not end, or divide by 0
                raise op_error(op, f"tensor '{t.name}' {list(t.shape)} has no elements")
        for role, tensors, dtypes in (("input", graph.input_tensors(op), spec.inputs),
                                      ("output", graph.output_tensors(op), spec.outputs)):
            for k, (t, dtype) in enumerate(zip(tensors, dtypes)):
                if t.dtype != dtype:
                    raise op_error(op, f"{role} {k} '{t.name}' is {t.dtype}; TFLM's kernel takes {dtype}")
        options = _options(op, spec)
        return SignalPlan(options, spec.check(op, graph, options))

    def lower(self, data: OpData, variant: Any = None) -> Lowered:
        name = data.op.type.removeprefix(CUSTOM)
        call = SIGNAL_OPS[name].call(data)
        function = CFunction.of("signal_" + name.removeprefix("Signal").lower(), call.params)
        source = f"{function.head} {{\n  {call.body};\n  return 0;\n}}\n"
        return Lowered([Kernel(function.name, call.args, c_source=source, c_function=function,
                               headers=(SIGNAL_HEADER,))])


OPS = [Signal()]
