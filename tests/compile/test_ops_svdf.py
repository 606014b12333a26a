"""SVDF (mtk/ops/svdf.py) and the state region: bit-exact with tflite-micro over 10 consecutive
inferences with the state carried (on the host; in QEMU: tests/target/test_ops_svdf_qemu.py), reset back to the start, the state
outside the arena, listed in metadata.json and in the header."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import modelgen
from mtk.reference import run_reference_sequence
from harness import STEPS, assert_state_carries_and_reset_restarts, assert_stream_bit_exact, host_model


@pytest.mark.slow
@settings(max_examples=6, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(model=modelgen.strategies["SVDF"])
def test_random_svdf_streams_are_bit_exact(model):
    with tempfile.TemporaryDirectory() as tmp:
        assert_stream_bit_exact(model, host_model(model, Path(tmp)))


@pytest.fixture(scope="module")
def keyword_svdf(tmp_path_factory):
    """int16 state, rank 2: the keyword-spotting layout."""
    for seed in range(50):
        model = modelgen.generate("SVDF", modelgen.Draw(np.random.default_rng([seed, 7])))
        host = host_model(model, tmp_path_factory.mktemp("svdf"))
        if host.compiled.state[0].dtype == "int16":
            return model, host
    raise AssertionError("no int16-state SVDF drawn")


def test_state_carries_and_reset_restarts(keyword_svdf):
    assert_state_carries_and_reset_restarts(*keyword_svdf)


def test_state_region_is_outside_the_arena(keyword_svdf):
    _, host = keyword_svdf
    compiled = host.compiled
    (state,) = compiled.state
    assert compiled.memory.state_bytes == state.bytes == int(np.prod(state.shape)) * 2
    assert all(b.name != state.name for b in compiled.memory.plan)
    header = (compiled.path / "include" / f"tvmgen_{compiled.module}.h").read_text()
    assert f"void tvmgen_{compiled.module}_reset(void);" in header
    assert f"TVMGEN_{compiled.module.upper()}_STATE_SIZE {state.bytes}" in header
    assert f"static int16_t {state.symbol}[" in (compiled.path / "src" / f"tvmgen_{compiled.module}.c").read_text()


def keyword_frames(seed: int) -> list[list[np.ndarray]]:
    """STEPS int16 filterbank-like frames (std about 4000) for modelgen.svdf_keyword_spotter."""
    rng = np.random.default_rng(seed)
    return [[np.clip(rng.normal(0, 4000, (1, 40)), -32768, 32767).astype(np.int16)] for _ in range(STEPS)]


@pytest.fixture(scope="module")
def keyword_spotter(tmp_path_factory):
    model = modelgen.svdf_keyword_spotter()
    return model, host_model(model, tmp_path_factory.mktemp("kws"))


def test_keyword_spotter_stream_bit_exact(keyword_spotter):
    """int16 frames QUANTIZE'd to int8, two SVDFs with int16 state, FC, SOFTMAX: 10 consecutive
    inferences equal to tflite-micro's, the probabilities moving with the stream; reset() replays it."""
    model, host = keyword_spotter
    frames = keyword_frames(3)
    expected = [want[0] for want in run_reference_sequence(model, frames)]
    for attempt in range(2):
        host.reset()
        got = [host.run(frame)[0] for frame in frames]
        for step, (g, want) in enumerate(zip(got, expected)):
            assert np.array_equal(g, want), f"run {attempt}, step {step}: {g} != {want}"
    assert len({tuple(e.reshape(-1)) for e in expected}) > STEPS // 2
    assert [s.dtype for s in host.compiled.state] == ["int16", "int16"]


