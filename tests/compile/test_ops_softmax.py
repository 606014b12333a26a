"""SOFTMAX (mtk/ops/softmax.py): bit-exact with tflite-micro's int8 reference kernel on the host,
over random models (tests/modelgen.py), random shapes / scales / betas up to 4-D and 1001 classes,
rows that are constant or have one dominant value; TFLM's rejected configurations are ModelErrors;
the C builds for Cortex-M4 with warnings as errors and needs no libm."""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import modelgen
from mtk.compiler import compile_model
from mtk.errors import ModelError
from mtk.ops import softmax
from mtk.reference import run_reference_batch
from harness import assert_bit_exact, assert_builds_for_cortex_m4, single_op_model, subdir

pytestmark = pytest.mark.slow   # compiles models with TVM

RANDOM = settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                          HealthCheck.too_slow])


def softmax_model(shape, scale: float, zero_point: int, beta: float = 1.0, out=(1 / 256, -128)) -> bytes:
    return single_op_model("SOFTMAX", [(shape, scale, zero_point)], (shape, *out), beta=beta)


def interesting_inputs(rng: np.random.Generator, shape) -> list[list[np.ndarray]]:
    """Random rows, constant rows, one dominant value per row, a narrow range near the top."""
    x = rng.integers(-128, 128, size=shape).astype(np.int8)
    dominant = np.full(shape, -128, np.int8)
    dominant[..., rng.integers(0, shape[-1])] = 127
    narrow = rng.integers(120, 128, size=shape).astype(np.int8)
    return [[x], [np.full(shape, rng.integers(-128, 128), np.int8)], [dominant], [narrow]]


@RANDOM
@given(model=modelgen.strategies["SOFTMAX"])
def test_random_models(model, tmp_path):
    assert_bit_exact(model, tmp_path)


def test_random_shapes_scales_and_betas(tmp_path):
    rng = np.random.default_rng(11)
    for k in range(12):
        rank = int(rng.integers(1, 5))
        shape = tuple(int(v) for v in rng.integers(1, 4, size=rank - 1)) + (int(rng.integers(1, 300)),)
        scale, beta = float(2.0 ** rng.uniform(-9, 2)), float(rng.choice([1.0, rng.uniform(0.05, 4.0)]))
        assert_bit_exact(softmax_model(shape, scale, int(rng.integers(-128, 128)), beta), subdir(tmp_path, str(k)),
                         interesting_inputs(rng, shape))


def test_one_class_and_one_row(tmp_path):
    for k, shape in enumerate([(1, 1), (3, 1), (7,)]):
        assert_bit_exact(softmax_model(shape, 0.3, 5), subdir(tmp_path, k),
                         interesting_inputs(np.random.default_rng(k), shape))


def test_every_difference_against_every_row_max(tmp_path):
    """Row i holds the values -128 .. i: every input difference, at every max, one class count of 256. Scale 0.25 and
    beta 0.7 make an exp table of 126 entries: each row's outputs are computed for every entry once and looked up."""
    shape = (256, 256)
    x = np.array([np.minimum(np.arange(-128, 128), i - 128) for i in range(256)], np.int8)
    for k, (scale, beta) in enumerate([(0.02, 1.0), (0.25, 0.7), (1 / 64, 2.0)]):
        folder = assert_bit_exact(softmax_model(shape, scale, 0, beta), subdir(tmp_path, str(k)), [[x]])
        assert ("row_outputs" in (folder / "src" / "tvmgen_default_kernels.c").read_text()) == (k == 1)


def test_many_classes(tmp_path):
    """1001 classes (an ImageNet head); random rows, where the sum of exps stays below TFLM's limit."""
    rng = np.random.default_rng(5)
    samples = [[rng.integers(-128, 100, size=(1, 1001)).astype(np.int8)] for _ in range(3)]
    assert_bit_exact(softmax_model((1, 1001), 0.1, -20), tmp_path, samples)


def test_exp_table_matches_the_reference_shape():
    """diff_min from CalculateInputRadius; the table ends with the 0 that stands for d < diff_min."""
    multiplier, shift, diff_min = softmax.softmax_params(0.1, 1.0)
    assert (shift, diff_min) == (23, -248)
    table = softmax.exp_table(multiplier, shift, diff_min)
    assert len(table) == 250 and table[0] == 2**31 - 1 and table[-1] == 0
    assert np.all(np.diff(table[:-1].astype(np.int64)) <= 0)


def test_generated_c_builds_for_cortex_m4_without_libm(tmp_path):
    folder = assert_bit_exact(softmax_model((2, 3, 10), 0.05, 4), tmp_path)
    assert_builds_for_cortex_m4(folder, tmp_path)
    nm = shutil.which("arm-none-eabi-nm")
    if nm:
        for obj in tmp_path.glob("*_kernels.o"):   # the run function calls these
            undefined = subprocess.run([nm, "-u", str(obj)], capture_output=True, text=True).stdout.split()
            assert not [u for u in undefined if u not in ("U", "memcpy", "memset")], undefined


@pytest.mark.parametrize("kwargs,message", [
    ({"out": (1 / 128, -128)}, "scale 1/256 and zero point -128"),
    ({"out": (1 / 256, 0)}, "scale 1/256 and zero point -128"),
    ({"scale": 2.0 ** -28}, "too small"),
])
def test_configurations_tflm_rejects(kwargs, message, tmp_path):
    args = {"shape": (1, 10), "scale": 0.1, "zero_point": 0, **kwargs}
    path = tmp_path / "m.tflite"
    path.write_bytes(softmax_model(**args))
    with pytest.raises(ModelError, match=message):
        compile_model(path, tmp_path / "out")


def test_tflm_rejects_what_mtk_rejects():
    """The configurations above fail in TFLM's Prepare too (a crash or an error in the worker)."""
    with pytest.raises(Exception):
        run_reference_batch(softmax_model((1, 10), 0.1, 0, out=(1 / 128, -128)), [[np.zeros((1, 10), np.int8)]])
