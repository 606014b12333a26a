"""ADD, SUB, MUL (mtk/ops/elementwise.py) compiled by mtk: bit-exact with tflite-micro on the host,
over random models (tests/modelgen.py), exhaustive input pairs and hand-picked corner cases; the
generated C builds for Cortex-M4 with warnings as errors."""

from __future__ import annotations

import numpy as np
import pytest

from mtk.compiler import compile_model
from mtk.errors import ModelError
from mtk.tflite_builder import ModelBuilder
from harness import all_int8_pairs, assert_bit_exact, assert_builds_for_cortex_m4, check_random_models, single_op_model

pytestmark = pytest.mark.slow   # compiles models with TVM


# ---- random models ---------------------------------------------------------------------------

@pytest.mark.parametrize("op", ["ADD", "SUB", "MUL"])
def test_random_models_are_bit_exact(op, tmp_path_factory):
    check_random_models(op, tmp_path_factory)


# ---- every input pair, several quantizations ---------------------------------------------------

QUANTIZATIONS = [   # (in1 scale, zp), (in2 scale, zp), (out scale, zp), fused activation
    ((0.02, 3), (0.03, -5), (0.04, 1), "NONE"),   # rounding ties: multipliers in float would be off by one
    ((0.00390625, -128), (0.5, 127), (0.25, -1), "RELU6"),
    ((0.7522038, 0), (0.02201532, -128), (0.040853728, 30), "RELU_N1_TO_1"),
]


@pytest.mark.parametrize("op", ["ADD", "SUB", "MUL"])
@pytest.mark.parametrize("quant", QUANTIZATIONS, ids=["ties", "extreme-zp", "relu-n1-1"])
def test_every_int8_pair(op, quant, tmp_path):
    (s1, z1), (s2, z2), (so, zo), act = quant
    if op == "MUL":
        so = s1 * s2 * 40.0
    model = single_op_model(op, [((256, 1), s1, z1), ((1, 256), s2, z2)], ((256, 256), so, zo),
                            fused_activation_function=act)
    assert_bit_exact(model, tmp_path, [all_int8_pairs()])


@pytest.mark.parametrize("op", ["ADD", "SUB"])
@pytest.mark.parametrize("quant", QUANTIZATIONS, ids=["ties", "extreme-zp", "relu-n1-1"])
def test_every_int8_pair_of_inputs_of_one_shape(op, quant, tmp_path):
    """Inputs of the output's shape (a residual ADD): c/mtk_add_s8.h on the cores with a long multiply, its DSP
    formulation (Cortex-M4) and its plain C (Cortex-M3), over every pair of int8 values and an odd count."""
    (s1, z1), (s2, z2), (so, zo), act = quant
    shape = (1, 257, 257, 1)
    model = single_op_model(op, [(shape, s1, z1), (shape, s2, z2)], (shape, so, zo), fused_activation_function=act)
    pairs = [np.resize(np.broadcast_to(v, (256, 256)), shape) for v in all_int8_pairs()]
    folder = assert_bit_exact(model, tmp_path, [pairs], plain_too=True)
    assert "mtk_add_s8(" in (folder / "src" / "tvmgen_default_kernels.c").read_text()


def test_an_output_rescale_without_a_right_shift_takes_the_generic_loop(tmp_path):
    """2·max_in_scale / (2^20·out_scale) in [0.5, 1): no RoundingDivideByPOT, which mtk_add_s8 folds in."""
    shape = (1, 4, 5, 3)
    model = single_op_model("ADD", [(shape, 1e-3, 3), (shape, 2e-3, -4)], (shape, 5e-9, 0))
    folder = assert_bit_exact(model, tmp_path)
    assert "mtk_add_s8(" not in (folder / "src" / "tvmgen_default_kernels.c").read_text()


# ---- shapes modelgen does not draw -----------------------------------------------------------

@pytest.mark.parametrize("op, shape1, shape2", [
    ("ADD", (2, 1, 3, 1, 4), (3, 2, 4)),                 # 5-D, the second input with fewer dims
    ("SUB", (1, 4, 1, 3, 1), (2, 1, 4, 1, 1, 2)),        # 6-D, both inputs broadcast
    ("MUL", (3, 1, 2, 1, 2, 1), (1,)),                   # 6-D times one element
    ("ADD", (), (2, 3)),                                 # a scalar operand
])
def test_high_rank_and_scalar_broadcast(op, shape1, shape2, tmp_path):
    out = np.broadcast_shapes(shape1, shape2)
    model = single_op_model(op, [(shape1, 0.02, 3), (shape2, 0.03, -5)], (out, 0.04 if op != "MUL" else 0.02, 1),
                            fused_activation_function="NONE")
    assert_bit_exact(model, tmp_path)


def test_constant_operand(tmp_path):
    """The second operand a constant tensor, as a folded bias add is."""
    rng = np.random.default_rng(3)
    model = single_op_model("ADD", [((1, 4, 4, 8), 0.05, 10), rng.integers(-128, 128, (8,)).astype(np.int8)],
                            ((1, 4, 4, 8), 0.08, -20), const_quant=(0.02, 4), fused_activation_function="RELU")
    assert_bit_exact(model, tmp_path)


def test_output_independent_of_inputs_is_a_fill(tmp_path):
    """RELU_N1_TO_1 on a coarse output scale clamps to one value: a C fill, no unused parameters."""
    model = single_op_model("MUL", [((6, 3, 3), 0.8, 104), ((3, 3), 1.1, 53)], ((6, 3, 3), 3.8, 34),
                            fused_activation_function="RELU_N1_TO_1")
    folder = assert_bit_exact(model, tmp_path)
    assert "fill_i8" in (folder / "src" / "tvmgen_default_kernels.c").read_text()
    assert_builds_for_cortex_m4(folder, tmp_path)


@pytest.mark.parametrize("op, cpu", [("ADD", "cortex-m4"), ("SUB", "cortex-m3"), ("MUL", "cortex-m4")])
def test_the_output_takes_the_place_of_an_operand_read_there_last(op, cpu, tmp_path):
    """t2 = op(t1, x) where t1 dies (each kernel reads an element of both operands before it writes the output's
    there: mtk_add_s8, TVM's loop): t2 over t1, two tensors live at that step, not three."""
    b = ModelBuilder(description="mtk test in place")
    shape, n = (1, 8, 8, 16), 8 * 8 * 16
    x = b.tensor("x", shape, "int8", scale=0.05, zero_point=3)
    t1, t2, y = (b.tensor(name, shape, "int8", scale=s, zero_point=z)
                 for name, s, z in (("t1", 0.08, -4), ("t2", 0.5 if op == "MUL" else 0.1, 2), ("y", 0.9, 1)))
    b.op(op, [x, x], [t1])
    b.op(op, [t1, x], [t2])
    b.op("ADD", [t2, t2], [y])
    b.inputs([x])
    b.outputs([y])
    model = b.build()
    assert_bit_exact(model, tmp_path, cpu=cpu)
    compiled = compile_model(tmp_path / "model.tflite", tmp_path / "again", cpu=cpu)
    places = {buf.name: buf.offset for buf in compiled.memory.plan}
    assert places["t2"] == places["t1"] and compiled.arena_bytes == 2 * n


# ---- what TFLM rejects -----------------------------------------------------------------------

def test_add_output_rescale_of_one_or_more_is_refused(tmp_path):
    """add_common.cc: 2·max_in_scale / (2^20·out_scale) must be < 1 (TFLM aborts otherwise)."""
    model = single_op_model("ADD", [((4,), 1.0, 0), ((4,), 1.0, 0)], ((4,), 1e-7, 0))
    (tmp_path / "m.tflite").write_bytes(model)
    with pytest.raises(ModelError, match="outside"):
        compile_model(tmp_path / "m.tflite", tmp_path / "lib")


def test_shapes_that_do_not_broadcast_are_refused(tmp_path):
    model = single_op_model("MUL", [((2, 3), 0.1, 0), ((2, 4), 0.1, 0)], ((2, 4), 0.1, 0))
    (tmp_path / "m.tflite").write_bytes(model)
    with pytest.raises(ModelError, match="do not broadcast"):
        compile_model(tmp_path / "m.tflite", tmp_path / "lib")


def test_int16_mul(tmp_path):
    """16x8 MUL (zero points 0, as TFLM requires), broadcast, a fused RELU6 clamped within int16."""
    b = ModelBuilder(description="mul int16")
    x = b.tensor("x", (2, 3, 8), "int16", scale=0.0004, zero_point=0)
    w = b.tensor("w", (3, 1), "int16", scale=0.0002, zero_point=0)
    y = b.tensor("y", (2, 3, 8), "int16", scale=0.0003, zero_point=0)
    b.op("MUL", [x, w], [y], fused_activation_function="RELU6")
    b.inputs([x, w])
    b.outputs([y])
    rng = np.random.default_rng(9)
    samples = [[rng.integers(-32768, 32768, size=(2, 3, 8)).astype(np.int16),
                rng.integers(-32768, 32768, size=(3, 1)).astype(np.int16)] for _ in range(2)]
    assert_bit_exact(b.build(), tmp_path, samples)
