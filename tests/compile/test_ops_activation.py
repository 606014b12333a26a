"""LOGISTIC, TANH, RELU, RELU6, LEAKY_RELU, HARD_SWISH (mtk/ops/activation.py): bit-exact with tflite-micro.

The host-side tables (numpy transcriptions of TFLM's integer kernels) are checked against TFLM for
all 256 inputs over many random quantizations; then every op is compiled by mtk and run on the host
for all 256 input values and for random models (tests/modelgen.py); the C builds for Cortex-M4
with warnings as errors and needs no libm.
"""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import modelgen
from mtk.compiler import compile_model
from mtk.errors import ModelError
from mtk.ops import activation
from mtk.reference import run_reference_batch
from harness import assert_bit_exact, assert_builds_for_cortex_m4, single_op_model, subdir

pytestmark = pytest.mark.slow   # compiles models with TVM

UNARY_OPS = ("LOGISTIC", "TANH", "RELU", "RELU6", "LEAKY_RELU", "HARD_SWISH")
ALL_VALUES = np.arange(-128, 128, dtype=np.int8).reshape(1, 256)
RANDOM = settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                          HealthCheck.too_slow])


def random_quant(rng: np.random.Generator, op: str) -> dict:
    """Input and output quantization (and alpha) for `op`, over a wide range of scales."""
    in_scale = float(np.float32(2.0 ** rng.uniform(-10, 3)))
    out = {"LOGISTIC": (1 / 256, -128), "TANH": (1 / 128, 0)}.get(
        op, (float(np.float32(in_scale * 2.0 ** rng.uniform(-3, 3))), int(rng.integers(-128, 128))))
    if op == "HARD_SWISH" and activation.hard_swish_params(in_scale, out[0])[1] > 0:
        out = (in_scale, out[1])   # TFLM rejects output scales below input_scale / 128
    alpha = float(np.float32(rng.choice([rng.uniform(0, 1), rng.uniform(-2, 3)])))
    return {"input": (in_scale, int(rng.integers(-128, 128))), "output": out,
            "options": {"alpha": alpha} if op == "LEAKY_RELU" else {}}


def model_for(op: str, q: dict, shape=(1, 256)) -> bytes:
    return single_op_model(op, [(shape, *q["input"])], (shape, *q["output"]), **q["options"])


def host_table(op: str, q: dict) -> np.ndarray:
    (s_in, zp_in), (s_out, zp_out) = q["input"], q["output"]
    if op == "LOGISTIC":
        return activation.logistic_table(s_in, zp_in)
    if op == "TANH":
        return activation.tanh_table(s_in, zp_in)
    if op == "LEAKY_RELU":
        return activation.leaky_relu_table(s_in, zp_in, s_out, zp_out, q["options"]["alpha"])
    if op == "RELU":
        return activation.relu_table(s_in, zp_in, s_out, zp_out)
    if op == "RELU6":
        return activation.relu6_table(s_in, zp_in)
    return activation.hard_swish_table(s_in, zp_in, s_out, zp_out)


@pytest.mark.parametrize("op", UNARY_OPS)
def test_host_table_matches_tflite_micro_for_all_inputs(op):
    """150 random quantizations per op, all 256 inputs each: 0 mismatches."""
    rng = np.random.default_rng(sum(map(ord, op)))
    cases = [random_quant(rng, op) for _ in range(150)]
    expected = run_reference_batch(model_for(op, cases[0]), [[ALL_VALUES]])   # warm the worker
    for q in cases:
        expected = run_reference_batch(model_for(op, q), [[ALL_VALUES]])[0][0].reshape(-1)
        table = host_table(op, q)
        assert int((table != expected).sum()) == 0, f"{op} {q}: {np.nonzero(table != expected)[0][:8]}"


@pytest.mark.parametrize("op", UNARY_OPS)
def test_compiled_all_256_inputs(op, tmp_path):
    rng = np.random.default_rng(sum(map(ord, op)) + 1)
    for k in range(3):
        assert_bit_exact(model_for(op, random_quant(rng, op)), subdir(tmp_path, str(k)), [[ALL_VALUES]])


@pytest.mark.parametrize("op", UNARY_OPS)
def test_compiled_random_models(op, tmp_path):
    @RANDOM
    @given(model=modelgen.strategies[op])
    def check(model):
        assert_bit_exact(model, tmp_path)
    check()


def test_identity_quantization_and_extreme_scales(tmp_path):
    """RELU with equal scales or a constant output; LOGISTIC/TANH with radius 0 (huge scale), tiny scales."""
    cases = [("RELU", {"input": (0.1, -3), "output": (0.1, -3), "options": {}}),
             ("RELU", {"input": (0.1, 100), "output": (0.5, -128), "options": {}}),
             ("RELU6", {"input": (0.01, -128), "output": (0.3, 7), "options": {}}),    # 6.0 beyond int8
             ("LOGISTIC", {"input": (20.0, 0), "output": (1 / 256, -128), "options": {}}),
             ("TANH", {"input": (2.0 ** -20, 17), "output": (1 / 128, 0), "options": {}}),
             ("LEAKY_RELU", {"input": (0.05, 0), "output": (0.05, 0), "options": {"alpha": -0.5}}),
             ("RELU", {"input": (1.0, 63), "output": (0.5, 127), "options": {}})]            # constant output
    for k, (op, q) in enumerate(cases):
        assert_bit_exact(model_for(op, q), subdir(tmp_path, str(k)), [[ALL_VALUES]])


def test_generated_c_builds_for_cortex_m4_without_libm(tmp_path):
    rng = np.random.default_rng(3)
    for op in UNARY_OPS:
        folder = assert_bit_exact(model_for(op, random_quant(rng, op), shape=(2, 3, 5)), subdir(tmp_path, op))
        assert_builds_for_cortex_m4(folder, subdir(tmp_path, op))
        nm = shutil.which("arm-none-eabi-nm")
        if nm:
            for obj in subdir(tmp_path, op).glob("*_kernels.o"):   # the run function calls these
                undefined = subprocess.run([nm, "-u", str(obj)], capture_output=True, text=True).stdout.split()
                assert not [u for u in undefined if u not in ("U", "memcpy", "memset")], f"{op}: {undefined}"


def test_lookup_kernels_are_shared(tmp_path):
    """Two table ops of one size are one kernel with two tables."""
    from mtk.tflite_builder import ModelBuilder
    b = ModelBuilder()
    x = b.tensor("x", (1, 16), "int8", scale=0.05, zero_point=0)
    h = b.tensor("h", (1, 16), "int8", scale=1 / 128, zero_point=0)
    y = b.tensor("y", (1, 16), "int8", scale=1 / 256, zero_point=-128)
    b.op("TANH", [x], [h])
    b.op("LOGISTIC", [h], [y])
    b.inputs([x])
    b.outputs([y])
    model = b.build()
    folder = assert_bit_exact(model, tmp_path, [[ALL_VALUES[:, i:i + 16]] for i in range(0, 256, 16)])
    kernels = (folder / "src" / "tvmgen_default_kernels.c").read_text()
    assert kernels.count("lookup_int8") == 1


@pytest.mark.parametrize("op,q,message", [
    ("LOGISTIC", {"input": (0.1, 0), "output": (1 / 256, 0), "options": {}}, "zero point must be -128"),
    ("HARD_SWISH", {"input": (1.0, 0), "output": (1e-4, 0), "options": {}}, "too small"),
])
def test_configurations_tflm_rejects(op, q, message, tmp_path):
    path = tmp_path / "m.tflite"
    path.write_bytes(model_for(op, q))
    with pytest.raises(ModelError, match=message):
        compile_model(path, tmp_path / "out")
