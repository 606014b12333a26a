"""What an MLPerf Tiny reference DUT does with the bytes it receives and how it prints its results,
restated in numpy with the C++ semantics of mlcommons/tiny's
benchmark/reference_submissions/<benchmark>/submitter_implemented.cpp (th_load_tensor, th_results)
and util/quantization_helpers.h (QuantizeFloatToInt8, DequantizeInt8ToFloat): float32 arithmetic,
std::round (halves away from zero), C truncating conversions and `%`, printf's "%0.3f"."""

from __future__ import annotations

import numpy as np

from mtk.mlperf import Benchmark

f32 = np.float32


def std_round(x: np.ndarray) -> np.ndarray:
    """std::round of float32 values: exact in float64 (a float32 plus 0.5 needs no rounding)."""
    x64 = np.asarray(x, dtype=np.float64)
    return np.trunc(x64 + np.copysign(0.5, x64)).astype(np.float32)


def quantize_float_to_int8(values: np.ndarray, scale: float, zero_point: int) -> np.ndarray:
    """int32_t result = round(value / scale) + zero_point; clamped to int8."""
    q = std_round(values.astype(f32) / f32(scale)) + f32(zero_point)
    return np.clip(q, -128, 127).astype(np.int8)


def th_load_tensor(benchmark: Benchmark, db: bytes, scale: float, zero_point: int) -> np.ndarray:
    """The model input the reference makes of a full `db` buffer."""
    data = db[:benchmark.wire_bytes]
    if benchmark.wire == "float32":
        return quantize_float_to_int8(np.frombuffer(data, dtype=np.float32), scale, zero_point)
    if benchmark.wire == "uint8-128":
        # if (u <= 127) (int8_t)u - 128; else (int8_t)(u - 128): both are u - 128
        return (np.frombuffer(data, dtype=np.uint8).astype(np.int16) - 128).astype(np.int8)
    return np.frombuffer(data, dtype=np.int8).copy()


def dequantize(q: np.ndarray, scale: float, zero_point: int) -> np.ndarray:
    """static_cast<float>(value - zero_point) * scale, in float32."""
    return (q.astype(np.int32) - zero_point).astype(f32) * f32(scale)


def _c_int(x: np.float32) -> int:
    return int(np.trunc(np.float64(x)))


def _c_mod10(v: int) -> int:
    return int(np.fmod(v, 10))


def mean_squared_error(outputs: np.ndarray, scale: float, zero_point: int, db: bytes) -> np.float32:
    """ad01's calculate_result(): diffsum += diff * diff in float32, in order, then / count."""
    converted = dequantize(outputs, scale, zero_point)
    x = np.frombuffer(db[:4 * converted.size], dtype=np.float32)
    total = f32(0)
    for c, v in zip(converted, x):
        diff = f32(c - v)
        total = f32(total + f32(diff * diff))
    return f32(total / f32(converted.size))


def th_results(benchmark: Benchmark, outputs: np.ndarray, scale: float, zero_point: int, db: bytes = b"") -> str:
    """The `m-results-[...]` line the reference prints for int8 `outputs` (and, for ad01, its input)."""
    if benchmark.results_format == "mse":
        return f"m-results-[{'%0.3f' % mean_squared_error(outputs, scale, zero_point, db)}]"
    values = []
    for i, c in enumerate(dequantize(outputs.reshape(-1), scale, zero_point)):
        if benchmark.results_format == "truncated":
            text = (f"0.{_c_int(c * f32(10))}{_c_mod10(_c_int(c * f32(100)))}"
                    f"{_c_mod10(_c_int(c * f32(1000)))}")
        else:
            text = "%0.3f" % c
        values.append(text + ("," if i < benchmark.results_commas else ""))
    return f"m-results-[{''.join(values)}]"
