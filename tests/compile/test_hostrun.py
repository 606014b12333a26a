"""hostrun: a compiled-model folder built with the host gcc and called through ctypes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from mtk.errors import MtkError, TargetError
from mtk.hostrun import HostModel

from checkout import FIXTURES

SAMPLE = FIXTURES / "hostrun_sample"
WORKSPACE_SAMPLE = FIXTURES / "hostrun_workspace_sample"


@pytest.fixture
def sample_copy(tmp_path) -> Path:
    return Path(shutil.copytree(SAMPLE, tmp_path / "sample"))


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> Path:
    """One library cache for the tests that do not look at building."""
    return tmp_path_factory.mktemp("cache")


def test_runs_the_model_with_several_inputs_and_outputs(cache):
    model = HostModel(SAMPLE, cache_dir=cache)
    rng = np.random.default_rng(0)
    for _ in range(5):
        x, y = (rng.integers(-127, 128, size=(2, 3)).astype(np.int8) for _ in range(2))
        total, x_max = model.run([x, y])
        np.testing.assert_array_equal(total, np.clip(x.astype(int) + y, -128, 127))
        assert x_max.dtype == np.int8 and x_max.shape == (1,) and x_max[0] == x.max()


def test_a_library_without_map_functions_is_refused_in_arena_by_name(cache):
    """The hand-written sample has no tvmgen_sample_map_inputs (an older mtk's output): one line saying so."""
    model = HostModel(SAMPLE, cache_dir=cache)
    x = np.zeros((2, 3), np.int8)
    with pytest.raises(MtkError, match=r"has no tvmgen_sample_map_inputs\(\): compiled by an mtk without"):
        model.run([x, x], in_arena=True)


def test_external_workspace_is_passed_aligned_and_c_names_are_used(cache):
    model = HostModel(WORKSPACE_SAMPLE, cache_dir=cache)
    assert model.external_workspace and model.arena_bytes == 32
    signal = np.linspace(-1, 1, 8, dtype=np.float32).reshape(1, 8)
    reversed_signal, = model.run([signal])
    np.testing.assert_array_equal(reversed_signal, signal[:, ::-1])


def test_the_library_is_built_once_per_content(sample_copy, tmp_path):
    cache = tmp_path / "cache"
    first = HostModel(sample_copy, cache_dir=cache).library_path
    built_at = first.stat().st_mtime_ns
    assert HostModel(sample_copy, cache_dir=cache).library_path == first
    assert first.stat().st_mtime_ns == built_at
    source = sample_copy / "src" / "sample.c"
    source.write_text(source.read_text().replace("x_max[0] = x[0];", "x_max[0] = (int8_t)(x[0] - 0);"))
    assert HostModel(sample_copy, cache_dir=cache).library_path != first


def test_an_edited_kernel_header_in_src_is_a_new_library(sample_copy, tmp_path):
    """mtk compile copies the kernels' headers (mtk_pool.h, ...) into src/: the cache must not serve a library
    built from the old one."""
    cache = tmp_path / "cache"
    header = sample_copy / "src" / "mtk_kernel.h"
    header.write_text("#define MTK_KERNEL_VERSION 1\n")
    first = HostModel(sample_copy, cache_dir=cache).library_path
    header.write_text("#define MTK_KERNEL_VERSION 2\n")
    assert HostModel(sample_copy, cache_dir=cache).library_path != first


def test_a_non_zero_status_is_an_error(cache):
    model = HostModel(SAMPLE, cache_dir=cache)
    low = np.full((2, 3), -128, np.int8)
    with pytest.raises(TargetError, match="tvmgen_sample_run returned -1"):
        model.run([low, low])


@pytest.mark.parametrize("inputs, message", [
    ([np.zeros((2, 3), np.int8)], "has 2 inputs, got 1"),
    ([np.zeros((2, 3), np.int8), np.zeros((2, 3), np.int16)], r"'y' must be int8\[2, 3\], got int16\[2, 3\]"),
    ([np.zeros((6,), np.int8), np.zeros((2, 3), np.int8)], r"'x' must be int8\[2, 3\], got int8\[6\]"),
])
def test_wrong_inputs_are_an_error(inputs, message, cache):
    with pytest.raises(MtkError, match=message):
        HostModel(SAMPLE, cache_dir=cache).run(inputs)


def test_a_warning_fails_the_build_with_the_compiler_message(sample_copy, tmp_path):
    source = sample_copy / "src" / "sample.c"
    source.write_text(source.read_text().replace("int i;", "int i;\n  int unused;"))
    with pytest.raises(TargetError, match="unused"):
        HostModel(sample_copy, cache_dir=tmp_path)


def test_header_and_metadata_must_agree(sample_copy, tmp_path):
    metadata = json.loads((sample_copy / "metadata.json").read_text())
    metadata["inputs"].reverse()
    (sample_copy / "metadata.json").write_text(json.dumps(metadata))
    with pytest.raises(MtkError, match=r"members \['x', 'y'\], metadata.json says \['y', 'x'\]"):
        HostModel(sample_copy, cache_dir=tmp_path)


def test_a_folder_that_is_not_compiled_output_is_an_error(tmp_path):
    with pytest.raises(MtkError, match="metadata.json"):
        HostModel(tmp_path)
