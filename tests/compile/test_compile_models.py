"""The MLPerf Tiny models in ../shared/models: compiled by mtk, bit-exact with tflite-micro on the host,
and the generated C builds for every Cortex-M CPU with warnings as errors, needing nothing but memcpy/memset."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from mtk.compiler import compile_model
from mtk.hostrun import HostModel
from mtk.reference import run_reference_batch
from mtk.target import CPUS

from armbuild import undefined_symbols
from checkout import shared_models

pytestmark = pytest.mark.slow   # compiles models with TVM


# ARMv6-M has no divide instruction: gcc calls its own runtime (libgcc, linked by every gcc build)
# for integer division, including the index arithmetic of the generated loops.
COMPILER_RUNTIME = {cpu: {"__aeabi_idiv", "__aeabi_idivmod", "__aeabi_uidiv", "__aeabi_uidivmod"}
                    for cpu in ("cortex-m0", "cortex-m0plus")}


@pytest.fixture(scope="module")
def compiled(tmp_path_factory) -> dict[str, Path]:
    out = {}
    for model in shared_models():
        out[model.stem] = compile_model(model, tmp_path_factory.mktemp(model.stem) / "lib").path
    return out


@pytest.mark.parametrize("model", [p.stem for p in shared_models()])
def test_bit_exact_with_tflite_micro(model, compiled):
    path = next(p for p in shared_models() if p.stem == model)
    meta = json.loads((compiled[model] / "metadata.json").read_text())
    rng = np.random.default_rng(7)
    samples = [[rng.integers(-128, 128, size=i["shape"], dtype=np.int8) for i in meta["inputs"]] for _ in range(3)]
    host = HostModel(compiled[model])
    expected = run_reference_batch(path, samples)
    for sample, ref in zip(samples, expected):
        got = host.run(sample)
        for g, r in zip(got, ref):
            assert g.shape == r.shape
            assert int((g != r).sum()) == 0, f"{model}: {(g != r).sum()} of {r.size} outputs differ"


@pytest.mark.parametrize("cpu", list(CPUS))
def test_generated_c_builds_for_cortex_m(cpu, compiled, tmp_path):
    for model, folder in compiled.items():
        symbols = undefined_symbols(folder, cpu, tmp_path / model) - COMPILER_RUNTIME.get(cpu, set())
        assert not symbols, f"{model} on {cpu} needs {sorted(symbols)}"


def test_metadata_describes_the_library(compiled):
    meta = json.loads((compiled["kws_dscnn_int8"] / "metadata.json").read_text())
    assert meta["module"] == "default"
    assert meta["inputs"][0]["shape"] == [1, 49, 10, 1] and meta["inputs"][0]["dtype"] == "int8"
    assert meta["outputs"][0]["shape"] == [1, 12]
    assert meta["macs"] == 2656768   # MLPerf Tiny's figure for KWS (peer json)
    mem = meta["memory"]
    assert 0 < mem["lower_bound_bytes"] <= mem["arena_bytes"]
    for buf in mem["plan"]:
        overlapping = [b for b in mem["plan"] if b is not buf and b["first_use"] <= buf["last_use"]
                       and buf["first_use"] <= b["last_use"]]
        for other in overlapping:
            assert buf["offset"] + buf["bytes"] <= other["offset"] or other["offset"] + other["bytes"] <= buf["offset"]
    header = (compiled["kws_dscnn_int8"] / "include" / "tvmgen_default.h").read_text()
    assert "struct tvmgen_default_inputs" in header and "int32_t tvmgen_default_run(" in header
    assert "tvm/" not in "".join(p.read_text() for p in (compiled["kws_dscnn_int8"] / "src").glob("*.c"))
