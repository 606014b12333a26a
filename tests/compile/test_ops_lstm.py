"""UNIDIRECTIONAL_SEQUENCE_LSTM (mtk/ops/lstm.py), int8 and 16x8: bit-exact with tflite-micro over 10
consecutive inferences with the hidden and cell states carried (host), reset back to the start, the variants
TFLM refuses refused with one line, and an LSTM classifier over 28 time steps (and a 16x8 LSTM) bit-exact on
the host (in QEMU: tests/target/test_ops_lstm_qemu.py)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import modelgen
from mtk.cli import main
from mtk.hostrun import HostModel
from harness import assert_state_carries_and_reset_restarts, assert_stream_bit_exact, c_path_libraries, host_model

LSTM = "UNIDIRECTIONAL_SEQUENCE_LSTM"


def _single_lstm(seed: int, variant: str = "", **lstm_options) -> bytes:
    d = modelgen.Draw(np.random.default_rng([seed, 12]))
    net = modelgen.Net(f"mtk test LSTM {variant}")
    x = net.model_input((d.int(1, 2), d.int(2, 6), d.int(1, 12)), modelgen.activation_quant(d))
    return net.build(modelgen.lstm(net, d, x, variant=variant, **lstm_options))


def lstm_16x8(d: modelgen.Draw, shape: tuple[int, int, int] | None = None) -> bytes:
    """A 16x8 LSTM: int16 input (zero point 0), hidden state and output, int64 biases."""
    net = modelgen.Net("mtk test 16x8 LSTM")
    shape, scale = shape or (d.int(1, 2), d.int(1, 6), d.int(1, 16)), 2.0 ** d.float(-15.0, -8.0)
    x = modelgen.Act(net.builder.tensor("input", shape, "int16", scale=scale, zero_point=0), shape,
                     modelgen.Quant(scale, 0))
    net.inputs.append(x.index)
    return net.build(modelgen.lstm(net, d, x, activations="int16"))


def lstm_classifier(seed: int = 0) -> bytes:
    """28 rows of 28 pixels (an MNIST image, as TFLM's mnist_lstm example reads it) -> LSTM(20 units) ->
    flatten -> 10 classes -> softmax."""
    d = modelgen.Draw(np.random.default_rng([seed, 28]))
    net = modelgen.Net("mtk test LSTM classifier over 28 time steps")
    x = net.model_input((1, 28, 28), modelgen.Quant(1 / 255, -128))
    x = modelgen.lstm(net, d, x, units=20, time_major=False)
    x = modelgen.flatten(net, d, x)
    x = modelgen.weighted_sum(net, d, x, "FULLY_CONNECTED", (10, x.shape[1]), 0, x.shape[1], (1, 10),
                              per_channel=False, bias_optional=False)
    return net.build(modelgen._fixed_output("SOFTMAX", modelgen.Quant(1 / 256, -128))(net, d, x))


@pytest.mark.slow
@settings(max_examples=8, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(model=modelgen.strategies[LSTM])
def test_random_lstm_streams_are_bit_exact(model):
    """Random batch, steps, features, units, quantization, cell clip, batch- or time-major layout."""
    with tempfile.TemporaryDirectory() as tmp:
        assert_stream_bit_exact(model, host_model(model, Path(tmp)))


@pytest.mark.slow
@pytest.mark.parametrize("cpu", ["cortex-m3", "cortex-m4"])
def test_gate_dot_products_are_bit_exact_on_every_c_path(cpu, tmp_path):
    """The gates' micro-kernels as the host runs them: 1x8 on the Cortex-M3, 1x4 plain and DSP-emulated on
    the M4 (Helium: the QEMU test on the an547); units and depths not multiples of the tiles and groups."""
    model = _single_lstm(3, units=7)
    for lib in c_path_libraries(model, tmp_path, cpu):
        assert_stream_bit_exact(model, HostModel(lib))


@pytest.mark.slow
@settings(max_examples=6, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(model=st.composite(lambda draw: lstm_16x8(modelgen.HypothesisDraw(draw)))())
def test_random_16x8_lstm_streams_are_bit_exact(model):
    """int16 activations: the int64 sums and TFLM's 64-bit requantization of its FullyConnected."""
    with tempfile.TemporaryDirectory() as tmp:
        assert_stream_bit_exact(model, host_model(model, Path(tmp)))


@pytest.mark.slow
@pytest.mark.parametrize("depth", [13, 1100])
def test_16x8_dot_paths_are_bit_exact(depth, tmp_path):
    """Sums that fit int32 run on the 16x8 micro-kernel (plain and DSP-emulated C); 1,100 features of weights
    up to ±127 may leave int32 (Σ|w|·32768 ≥ 2^31): the int64 loops."""
    model = lstm_16x8(modelgen.Draw(np.random.default_rng([depth, 16])), shape=(1, 3, depth))
    for lib in c_path_libraries(model, tmp_path, "cortex-m4"):
        assert_stream_bit_exact(model, HostModel(lib))


@pytest.fixture(scope="module")
def clipped_lstm(tmp_path_factory):
    """Two batch rows, a cell clip and a hidden zero point: every part of the state update."""
    model = _single_lstm(1, time_major=False)
    return model, host_model(model, tmp_path_factory.mktemp("lstm"))


@pytest.mark.slow
def test_state_carries_and_reset_restarts(clipped_lstm):
    assert_state_carries_and_reset_restarts(*clipped_lstm)


@pytest.mark.slow
def test_both_states_live_in_the_state_region(clipped_lstm):
    model, host = clipped_lstm
    compiled = host.compiled
    hidden, cell = sorted(compiled.state, key=lambda s: s.dtype != "int8")
    assert (hidden.dtype, cell.dtype) == ("int8", "int16")
    assert compiled.memory.state_bytes == hidden.bytes + cell.bytes == 3 * int(np.prod(hidden.shape))
    assert all(b.name not in (hidden.name, cell.name) for b in compiled.memory.plan)


@pytest.mark.parametrize("variant", ["peephole", "projection", "layer_norm", "cifg"])
def test_variants_tflm_refuses_are_refused_in_one_line(variant, tmp_path, capsys):
    path = tmp_path / "lstm.tflite"
    path.write_bytes(_single_lstm(0, variant))
    code = main(["compile", str(path), "-o", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2
    problem = [line for line in err.splitlines() if "op 0 (UNIDIRECTIONAL_SEQUENCE_LSTM)" in line]
    assert len(problem) == 1 and "TFLM's LSTM" in problem[0], err
    assert "Traceback" not in err and not (tmp_path / "out").exists()


@pytest.mark.slow
def test_classifier_over_28_steps_is_bit_exact_on_host(tmp_path):
    model = lstm_classifier()
    assert_stream_bit_exact(model, host_model(model, tmp_path))


