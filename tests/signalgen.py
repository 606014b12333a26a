"""Models of TFLM's signal-library ops (its audio front end) for the tests: each op alone, with random
tables and options, and the front end's chain (window, FFT auto scale, real FFT, energy, filter bank, square
root, spectral subtraction, PCAN, log) as micro_speech's audio_preprocessor computes it. Built with
mtk.tflite_builder: no file is fetched."""

from __future__ import annotations

from typing import Callable

import numpy as np

from mtk.tflite_builder import ModelBuilder

PCAN_LUT_SIZE = 125


def filter_bank_tables(rng: np.random.Generator, bins: int, channels: int) -> list[np.ndarray]:
    """weights, unweights, channel frequency starts, weight starts, widths (int16): channels + 1 bands of
    increasing start inside `bins`, as the front end's mel tables are laid out."""
    starts = np.sort(rng.choice(np.arange(1, bins - 8), channels + 1, replace=False))
    widths = np.minimum(rng.integers(1, 9, channels + 1), bins - starts)
    weight_starts = np.concatenate([[0], np.cumsum(widths)[:-1]])
    weights = rng.integers(0, 4096, int(widths.sum()))
    return [weights.astype(np.int16), (4096 - weights).astype(np.int16), starts.astype(np.int16),
            weight_starts.astype(np.int16), widths.astype(np.int16)]


def gain_lut(rng: np.random.Generator) -> np.ndarray:
    return rng.integers(-32768, 32768, PCAN_LUT_SIZE).astype(np.int16)


def spectral_subtraction_options(rng: np.random.Generator, channels: int) -> dict:
    smoothing, alternate = int(rng.integers(0, 2**14)), int(rng.integers(0, 2**14))
    return dict(alternate_one_minus_smoothing=2**14 - alternate, alternate_smoothing=alternate,
                clamping=bool(rng.integers(0, 2)), min_signal_remaining=int(rng.integers(0, 2**14)),
                num_channels=channels, one_minus_smoothing=2**14 - smoothing, smoothing=smoothing,
                smoothing_bits=int(rng.integers(0, 11)), spectral_subtraction_bits=14)


def single(name: str, inputs: list, outputs: list[tuple], **options) -> bytes:
    """One custom op `name`: inputs are (shape, dtype) for a model input or an array for a constant; outputs
    (shape, dtype), every one a model output."""
    b = ModelBuilder(description=f"mtk test {name}")
    model_inputs, indices = [], []
    for k, spec in enumerate(inputs):
        if isinstance(spec, np.ndarray):
            indices.append(b.const(f"c{k}", spec))
        else:
            indices.append(b.tensor(f"in{k}", *spec))
            model_inputs.append(indices[-1])
    outs = [b.tensor(f"out{k}", *spec) for k, spec in enumerate(outputs)]
    b.custom_op(name, indices, outs, **options)
    b.inputs(model_inputs)
    b.outputs(outs)
    return b.build()


def window(rng: np.random.Generator) -> bytes:
    rows, length = int(rng.integers(1, 4)), int(rng.integers(1, 40))
    w = rng.integers(-32768, 32768, length).astype(np.int16)
    return single("SignalWindow", [((rows, length), "int16"), w], [((rows, length), "int16")],
                  shift=int(rng.integers(0, 20)))


def fft_auto_scale(rng: np.random.Generator) -> bytes:
    n = int(rng.integers(1, 64))
    return single("SignalFftAutoScale", [((n,), "int16")], [((n,), "int16"), ((), "int32")])


def rfft(rng: np.random.Generator) -> bytes:
    fft_length = int(rng.choice([4, 6, 8, 10, 12, 16, 20, 24, 30, 32, 40, 48, 60, 64, 96, 128, 256, 512]))
    length, rows = int(rng.integers(1, fft_length + 1)), int(rng.integers(1, 3))
    return single("SignalRfft", [((rows, length), "int16")], [((rows, fft_length + 2), "int16")],
                  T=7, fft_length=fft_length)


def energy(rng: np.random.Generator) -> bytes:
    bins = int(rng.integers(1, 40))
    return single("SignalEnergy", [((2 * bins,), "int16")], [((bins,), "uint32")], end_index=bins, start_index=0)


def filter_bank(rng: np.random.Generator) -> bytes:
    """num_channels sums, the first `outputs` of them the output (TFLM copies no more)."""
    bins, channels = int(rng.integers(16, 80)), int(rng.integers(1, 8))
    outputs = int(rng.integers(1, channels + 1))
    return single("SignalFilterBank", [((bins,), "uint32"), *filter_bank_tables(rng, bins, channels)],
                  [((outputs,), "uint64")], num_channels=channels)


def filter_bank_square_root(rng: np.random.Generator) -> bytes:
    n = int(rng.integers(1, 40))
    return single("SignalFilterBankSquareRoot", [((n,), "uint64"), np.array(int(rng.integers(0, 16)), np.int32)],
                  [((n,), "uint32")])


def spectral_subtraction(rng: np.random.Generator) -> bytes:
    n = int(rng.integers(1, 40))
    return single("SignalFilterBankSpectralSubtraction", [((n,), "uint32")], [((n,), "uint32"), ((n,), "uint32")],
                  **spectral_subtraction_options(rng, n))


def pcan(rng: np.random.Generator) -> bytes:
    n = int(rng.integers(1, 40))
    return single("SignalPCAN", [((n,), "uint32"), ((n,), "uint32"), gain_lut(rng)], [((n,), "uint32")],
                  snr_shift=int(rng.integers(0, 13)))


def filter_bank_log(rng: np.random.Generator) -> bytes:
    n = int(rng.integers(1, 40))
    return single("SignalFilterBankLog", [((n,), "uint32")], [((n,), "int16")],
                  input_correction_bits=int(rng.integers(0, 6)), output_scale=int(rng.integers(1, 2**10)))


SINGLE_OPS: dict[str, Callable[[np.random.Generator], bytes]] = {
    "SignalWindow": window, "SignalFftAutoScale": fft_auto_scale, "SignalRfft": rfft, "SignalEnergy": energy,
    "SignalFilterBank": filter_bank, "SignalFilterBankSquareRoot": filter_bank_square_root,
    "SignalFilterBankSpectralSubtraction": spectral_subtraction, "SignalPCAN": pcan,
    "SignalFilterBankLog": filter_bank_log,
}


def front_end(seed: int = 0, samples: int = 60, fft_length: int = 64, channels: int = 8) -> bytes:
    """micro_speech's audio front end in small: int16 audio -> window -> FFT auto scale -> real FFT -> energy ->
    filter bank -> square root -> spectral subtraction -> PCAN -> log -> int16 features."""
    rng = np.random.default_rng(seed)
    bins = fft_length // 2 + 1
    b = ModelBuilder(description="mtk test signal front end")
    audio = b.tensor("audio", (samples,), "int16")

    def tensor(name: str, shape, dtype: str) -> int:
        return b.tensor(name, shape, dtype)

    windowed = tensor("windowed", (samples,), "int16")
    b.custom_op("SignalWindow", [audio, b.const("window", rng.integers(0, 4096, samples).astype(np.int16))],
                [windowed], shift=12)
    scaled, scale_bits = tensor("scaled", (samples,), "int16"), tensor("scale_bits", (), "int32")
    b.custom_op("SignalFftAutoScale", [windowed], [scaled, scale_bits])
    spectrum = tensor("spectrum", (fft_length + 2,), "int16")
    b.custom_op("SignalRfft", [scaled], [spectrum], T=7, fft_length=fft_length)
    power = tensor("energy", (bins,), "uint32")
    b.custom_op("SignalEnergy", [spectrum], [power], end_index=bins, start_index=0)
    tables = [b.const(f"filter_bank_{k}", t) for k, t in enumerate(filter_bank_tables(rng, bins, channels))]
    banks = tensor("filter_bank", (channels,), "uint64")
    b.custom_op("SignalFilterBank", [power, *tables], [banks], num_channels=channels)
    roots = tensor("square_root", (channels,), "uint32")
    b.custom_op("SignalFilterBankSquareRoot", [banks, scale_bits], [roots])
    cleaned, noise = tensor("subtracted", (channels,), "uint32"), tensor("noise", (channels,), "uint32")
    b.custom_op("SignalFilterBankSpectralSubtraction", [roots], [cleaned, noise],
                **spectral_subtraction_options(rng, channels))
    gained = tensor("pcan", (channels,), "uint32")
    b.custom_op("SignalPCAN", [cleaned, noise, b.const("gain_lut", gain_lut(rng))], [gained], snr_shift=6)
    features = tensor("features", (channels,), "int16")
    b.custom_op("SignalFilterBankLog", [gained], [features], input_correction_bits=3, output_scale=64)
    b.inputs([audio])
    b.outputs([features])
    return b.build()
