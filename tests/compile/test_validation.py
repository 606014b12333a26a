"""Malformed models: every index, arity, rank, size, option and quantization
parameter is checked once between the reader and the ops, and `mtk compile` exits 2 with one line
naming the op and the tensor; anything that still escapes is an internal error (exit 70), never 1."""

from __future__ import annotations

import random
from typing import Callable

import numpy as np
import pytest
from ai_edge_litert import schema_py_generated as schema

from mtk.cli import main
from mtk.compiler import check_supported
from mtk.errors import INTERNAL_ERROR_EXIT, ModelError
from mtk.reader import read_model
from mtk.tflite_builder import ModelBuilder
from model_mutator import mutate, pack


def conv_model() -> bytes:
    """input (1,6,6,2) -> CONV_2D 3x3 (4 filters, per-channel) -> AVERAGE_POOL_2D 2x2 -> output."""
    b = ModelBuilder()
    x = b.tensor("input", (1, 6, 6, 2), "int8", scale=0.05, zero_point=-3)
    w = b.const("w", np.ones((4, 3, 3, 2), np.int8), scale=np.full(4, 0.01), zero_point=np.zeros(4), axis=0)
    bias = b.const("bias", np.zeros(4, np.int32), scale=np.full(4, 0.0005), zero_point=np.zeros(4))
    h = b.tensor("conv", (1, 6, 6, 4), "int8", scale=0.1, zero_point=0)
    y = b.tensor("y", (1, 3, 3, 4), "int8", scale=0.1, zero_point=0)
    b.op("CONV_2D", [x, w, bias], [h], padding="SAME")
    b.op("AVERAGE_POOL_2D", [h], [y], padding="VALID", filter_height=2, filter_width=2, stride_h=2, stride_w=2)
    b.inputs([x])
    b.outputs([y])
    return b.build()


def edited(edit: Callable[[schema.ModelT], None]) -> bytes:
    model = schema.ModelT.InitFromPackedBuf(bytearray(conv_model()), 0)
    edit(model)
    return pack(model)


def _sub(m):
    return m.subgraphs[0]


def _tensor(m, name):
    return next(t for t in _sub(m).tensors if t.name.decode() == name)


def _set(obj, **fields):
    for k, v in fields.items():
        setattr(obj, k, v)


CONV, POOL = 0, 1
# (edit, words the one-line message must hold)
CASES = {
    # family 1: indices
    "graph input too large": (lambda m: _set(_sub(m), inputs=[99]), ["model input 0", "tensor 99"]),
    "graph output negative": (lambda m: _set(_sub(m), outputs=[-3]), ["model output 0", "tensor -3"]),
    "graph output twice": (lambda m: _set(_sub(m), outputs=[4, 4]), ["'y'", "listed twice"]),
    "op input negative": (lambda m: _set(_sub(m).operators[CONV], inputs=[0, -7, 2]), ["op 0 (CONV_2D)", "tensor -7"]),
    "op output negative": (lambda m: _set(_sub(m).operators[POOL], outputs=[-2]), ["op 1 (AVERAGE_POOL_2D)", "tensor -2"]),
    "op output too large": (lambda m: _set(_sub(m).operators[POOL], outputs=[6]), ["op 1", "tensor 6"]),
    "required input omitted": (lambda m: _set(_sub(m).operators[CONV], inputs=[0, -1, 2]),
                               ["op 0 (CONV_2D)", "input 1 is omitted"]),
    "op reads a later tensor": (lambda m: _sub(m).operators.reverse(), ["op 0 (AVERAGE_POOL_2D)", "'conv'"]),
    "op writes a constant": (lambda m: _set(_sub(m).operators[POOL], outputs=[1]), ["op 1", "'w'", "constant"]),
    # family 2: arity and rank
    "too few inputs": (lambda m: _set(_sub(m).operators[CONV], inputs=[0]), ["op 0 (CONV_2D)", "1 inputs", "2 to 3"]),
    "too many inputs": (lambda m: _set(_sub(m).operators[POOL], inputs=[3, 3]), ["op 1 (AVERAGE_POOL_2D)", "2 inputs"]),
    "no outputs": (lambda m: _set(_sub(m).operators[POOL], outputs=[]), ["op 1", "no outputs"]),
    "two outputs": (lambda m: _set(_sub(m).operators[CONV], outputs=[3, 4]), ["op 0 (CONV_2D)", "2 outputs"]),
    "conv input rank 3": (lambda m: _set(_tensor(m, "input"), shape=[6, 6, 2]), ["op 0 (CONV_2D)", "'input'", "4 dimensions"]),
    "pool output rank 2": (lambda m: _set(_tensor(m, "y"), shape=[9, 4]), ["op 1", "'y'", "4 dimensions"]),
    "conv output channels": (lambda m: _set(_tensor(m, "conv"), shape=[1, 6, 6, 5]), ["op 0 (CONV_2D)", "give output [1, 6, 6, 4]"]),
    "conv output size": (lambda m: _set(_tensor(m, "conv"), shape=[1, 7, 6, 4]), ["op 0 (CONV_2D)", "not [1, 7, 6, 4]"]),
    "conv bias length": (lambda m: [_set(_tensor(m, "bias"), shape=[3], quantization=None),
                                    _set(m.buffers[_tensor(m, "bias").buffer], data=np.zeros(12, np.uint8))],
                         ["op 0 (CONV_2D)", "bias 'bias' has 3 values for 4 output channels"]),
    # sizes
    "negative dimension": (lambda m: _set(_tensor(m, "conv"), shape=[1, -6, 6, 4]), ["'conv'", "negative dimension"]),
    "size beyond int32": (lambda m: _set(_tensor(m, "conv"), shape=[65536, 65536, 1, 4]), ["'conv'", "bytes"]),
    "int64 wrap": (lambda m: _set(_tensor(m, "conv"), shape=[2**31 - 1] * 4), ["'conv'", "bytes"]),
    # family 3: options and quantization
    "pool stride 0": (lambda m: _set(_sub(m).operators[POOL].builtinOptions, strideH=0), ["op 1", "stride_h is 0"]),
    "conv dilation -1": (lambda m: _set(_sub(m).operators[CONV].builtinOptions, dilationWFactor=-1),
                         ["op 0 (CONV_2D)", "dilation_w_factor"]),
    "padding enum 7": (lambda m: _set(_sub(m).operators[CONV].builtinOptions, padding=7), ["op 0", "padding 7"]),
    "activation enum 99": (lambda m: _set(_sub(m).operators[CONV].builtinOptions, fusedActivationFunction=99),
                           ["op 0", "fused activation 99"]),
    "NaN scale": (lambda m: _set(_tensor(m, "conv").quantization, scale=[float("nan")]), ["'conv'", "scale nan"]),
    "zero scale": (lambda m: _set(_tensor(m, "input").quantization, scale=[0.0]), ["'input'", "scale 0.0"]),
    "zero point 2^40": (lambda m: _set(_tensor(m, "y").quantization, zeroPoint=[2**40]), ["'y'", "zero point 1099511627776", "int8"]),
    "per-channel length": (lambda m: _set(_tensor(m, "w").quantization, scale=[0.01] * 3, zeroPoint=[0] * 3),
                           ["op 0 (CONV_2D)", "'w'", "3 per-channel scales for 4 channels"]),
    "per-channel axis": (lambda m: _set(_tensor(m, "w").quantization, quantizedDimension=7),
                         ["op 0 (CONV_2D)", "'w'", "along dimension 7"]),
    "quantization missing": (lambda m: _set(_tensor(m, "conv"), quantization=None),
                             ["op 0 (CONV_2D)", "'conv'", "without quantization"]),
    "multiplier beyond int32": (lambda m: [_set(_tensor(m, n).quantization, scale=[1e-30]) for n in ("conv", "y")],
                                ["op 0 (CONV_2D)", "too large for 32-bit"]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_model_exits_2_with_one_line(case, tmp_path, capsys):
    edit, words = CASES[case]
    model = tmp_path / "m.tflite"
    model.write_bytes(edited(edit))
    code = main(["compile", str(model), "-o", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err and "internal error" not in err
    for word in words:
        assert word in err, (word, err)
    assert not (tmp_path / "out").exists()


def test_unmodified_model_is_valid(tmp_path):
    model = tmp_path / "m.tflite"
    model.write_bytes(conv_model())
    check_supported(read_model(model))


def test_a_bug_is_an_internal_error_not_outputs_differ(tmp_path, capsys, monkeypatch):
    model = tmp_path / "m.tflite"
    model.write_bytes(conv_model())

    def broken(*args, **kwargs):
        raise ZeroDivisionError("division by zero")
    monkeypatch.setattr("mtk.compiler.check_supported", broken)
    code = main(["compile", str(model), "-o", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == INTERNAL_ERROR_EXIT and code not in (0, 1, 2, 3, 4)
    assert "internal error: ZeroDivisionError" in err and "please report" in err and "Traceback" not in err


def seed_models() -> list[bytes]:
    import modelgen
    return [conv_model(), *modelgen.example_models(0).values()]


def test_fuzzed_models_fail_only_as_model_errors(tmp_path):
    """2,000 seeded mutants (bit flips, truncation, structural edits) through reader, validation and the
    op checks: each is accepted or refused with a ModelError; nothing else escapes."""
    rng = random.Random(15)
    seeds = seed_models()
    path = tmp_path / "m.tflite"
    outcomes = {"valid": 0, "refused": 0}
    for _ in range(2000):
        kind, data = mutate(rng.choice(seeds), rng)
        path.write_bytes(data)
        try:
            graph = read_model(path)
            check_supported(graph)
            outcomes["valid"] += 1
        except ModelError:
            outcomes["refused"] += 1
    assert outcomes["refused"] > 1000 and outcomes["valid"] > 100, outcomes


def test_every_supported_op_type_has_a_row_in_the_arity_table():
    from mtk.ops import registry
    from mtk.validation import OP_SPECS
    assert sorted(set(registry()) - set(OP_SPECS)) == []


def _relu6_model(input_dtype: str, input_scale: float) -> bytes:
    b = ModelBuilder()
    x = b.tensor("x", (1, 4), "int8", scale=input_scale, zero_point=0)
    extra = b.tensor("unused", (1, 4), input_dtype, scale=0.1, zero_point=0)
    y = b.tensor("y", (1, 4), "int8", scale=0.1, zero_point=0)
    b.op("RELU6", [x], [y])
    b.inputs([x, extra])
    b.outputs([y])
    return b.build()


@pytest.mark.parametrize("dtype, scale, words", [
    ("int16", 1.4e-45, ["op 0 (RELU6)", "cannot be rounded"]),      # 6.0 / a denormal scale is inf in float32
])
def test_found_by_the_campaign(dtype, scale, words, tmp_path, capsys):
    model = tmp_path / "m.tflite"
    model.write_bytes(_relu6_model(dtype, scale))
    code = main(["compile", str(model), "-o", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2 and all(w in err for w in words), err


def test_an_int4_model_input_is_refused(tmp_path):
    model = tmp_path / "m.tflite"
    model.write_bytes(edited(lambda m: _set(_tensor(m, "input"), type=schema.TensorType.INT4)))
    with pytest.raises(ModelError, match="'input' is int4; the generated C passes"):
        read_model(model)


# Quirks of real models that tflite-micro's interpreter runs: mtk accepts them and computes what TFLM does.
QUIRKS = {
    # TFLM's own person_detect.tflite: 1-D biases with quantized_dimension 3 (TFLM ignores the field)
    "bias quantized_dimension 3": lambda m: _set(_tensor(m, "bias").quantization, quantizedDimension=3),
    # fewer zero points than scales: TFLM's allocator gives every channel the first
    "2 zero points for 4 scales": lambda m: _set(_tensor(m, "bias").quantization, zeroPoint=[0, 5]),
}


@pytest.mark.parametrize("quirk", sorted(QUIRKS))
def test_a_quirk_tflite_micro_runs_is_accepted(quirk, tmp_path):
    from mtk.reference import run_reference
    model = edited(QUIRKS[quirk])
    run_reference(model, [np.zeros((1, 6, 6, 2), np.int8)])
    path = tmp_path / "m.tflite"
    path.write_bytes(model)
    check_supported(read_model(path))


@pytest.mark.slow   # compiles with TVM
@pytest.mark.parametrize("quirk", sorted(QUIRKS))
def test_a_quirk_tflite_micro_runs_is_bit_exact(quirk, tmp_path):
    from harness import assert_bit_exact
    assert_bit_exact(edited(QUIRKS[quirk]), tmp_path)


def _with_custom_op(m, name: str, element_type: int | None = None) -> None:
    """CONV_2D's output computed by a custom op `name` instead (optionally of `element_type`)."""
    code = schema.OperatorCodeT()
    code.builtinCode, code.deprecatedBuiltinCode, code.customCode = schema.BuiltinOperator.CUSTOM, 32, name.encode()
    m.operatorCodes.append(code)
    _sub(m).operators[CONV].opcodeIndex = len(m.operatorCodes) - 1
    if element_type is not None:
        _tensor(m, "conv").type = element_type


@pytest.mark.parametrize("name, element_type, words", [
    ("SignalFramer", schema.TensorType.COMPLEX64,
     ["tensor 3 'conv' is COMPLEX64", "custom op SignalFramer of TFLM's signal library"]),
    ("ethos-u", None, ["custom op ethos-u of an Arm Ethos-U NPU command stream"]),
    ("MyOp", None, ["custom op MyOp, which mtk does not compile"]),
])
def test_a_custom_op_is_named_with_its_library(name, element_type, words, tmp_path, capsys):
    model = tmp_path / "m.tflite"
    model.write_bytes(edited(lambda m: _with_custom_op(m, name, element_type)))
    code = main(["compile", str(model), "-o", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2 and all(w in err for w in words), err
    assert "(12)" not in err


def _depthwise_model(input_shape: tuple[int, ...], input_const: bool = False, weight_scale: float = 0.01) -> bytes:
    b = ModelBuilder()
    c_out = 4
    x = (b.const("x", np.zeros(input_shape, np.int8), scale=0.05, zero_point=0) if input_const else
         b.tensor("x", input_shape, "int8", scale=0.05, zero_point=0))
    feed = b.tensor("feed", (1, 4, 4, c_out), "int8", scale=0.1, zero_point=0)
    w = b.const("w", np.ones((1, 3, 3, c_out), np.int8), scale=weight_scale, zero_point=0)
    y = b.tensor("y", (1, 4, 4, c_out), "int8", scale=0.1, zero_point=0)
    b.op("DEPTHWISE_CONV_2D", [x, w], [y], padding="SAME", depth_multiplier=1)
    b.inputs([feed] if input_const else [x])
    b.outputs([y])
    return b.build()


def _binary_model(op: str, output_scale: float) -> bytes:
    b = ModelBuilder()
    x = b.tensor("x", (1, 4), "int8", scale=0.05, zero_point=0)
    x2 = b.tensor("x2", (1, 4), "int8", scale=0.05, zero_point=0)
    y = b.tensor("y", (1, 4), "int8", scale=output_scale, zero_point=0)
    b.op(op, [x, x2], [y])
    b.inputs([x, x2])
    b.outputs([y])
    return b.build()


def _requantize_model(input_scale: float) -> bytes:
    b = ModelBuilder()
    x = b.tensor("x", (1, 4), "int8", scale=input_scale, zero_point=0)
    y = b.tensor("y", (1, 4), "int8", scale=1.0, zero_point=0)
    b.op("QUANTIZE", [x], [y])
    b.inputs([x])
    b.outputs([y])
    return b.build()


@pytest.mark.parametrize("model, words", [
    # zero-size channels: TFLM divides by them (SIGFPE) or calls the tensor dynamic; the C has no empty arrays
    (lambda: _depthwise_model((1, 4, 4, 0)), ["model input 'x'", "[1, 4, 4, 0], no elements"]),
    (lambda: _depthwise_model((1, 4, 4, 0), input_const=True), ["op 0 (DEPTHWISE_CONV_2D)", "'x'", "no channels"]),
    (lambda: edited(lambda m: _set(_tensor(m, "conv"), shape=[1, 6, 6, 0])),
     ["op 0 (CONV_2D)", "output 'conv'", "no elements"]),
    # scales whose rescale factor needs TFLM's 1 << 31 or more: undefined in C++, refused in one line
    (lambda: _depthwise_model((1, 4, 4, 4), weight_scale=1e10), ["op 0 (DEPTHWISE_CONV_2D)", "5e+09", "1 << 33"]),
    (lambda: _binary_model("MUL", 1e-12), ["op 0 (MUL)", "too large for 32-bit fixed point", "1 << 32"]),
    (lambda: _requantize_model(1.61e9), ["op 0 (QUANTIZE)", "1.61e+09", "1 << 31"]),
])
def test_zero_channels_and_extreme_scales_are_refused_in_one_line(model, words, tmp_path, capsys):
    path = tmp_path / "m.tflite"
    path.write_bytes(model())
    code = main(["compile", str(path), "-o", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2 and all(w in err for w in words), err
    assert [line for line in err.splitlines() if "error" in line] == [err.splitlines()[-1]], err


@pytest.mark.slow   # compiles with TVM
@pytest.mark.parametrize("weight_scale", [1e9, 2.14e9, 1e-12])
def test_rescale_factors_at_the_edges_tflite_micro_runs_are_bit_exact(weight_scale, tmp_path):
    """Rescale factors 5e8 and 1.07e9 (TFLM's shifts 29 and 30, the largest it defines) and 5e-12
    (below 2^-31: TFLM's QuantizeMultiplier flushes it to 0)."""
    from harness import assert_bit_exact
    assert_bit_exact(_depthwise_model((1, 4, 4, 4), weight_scale=weight_scale), tmp_path)


@pytest.mark.slow   # compiles with TVM
def test_a_left_shift_whose_products_wrap_is_bit_exact(tmp_path):
    """SUM with a rescale factor of 2^24·0.74: TFLM's (acc − in_zp·N)·(1 << 24) wraps in int32 for most
    inputs; TVM's simplifier distributed a multiplication into the literal −708·2^24, out of int32 (a
    crash the campaign found). A shift is not distributed, and wraps as TFLM's product does."""
    from harness import assert_bit_exact
    b = ModelBuilder()
    x = b.tensor("x", (6,), "int8", scale=0.00574769, zero_point=118)
    axis = b.const("axis", np.array([0], np.int32))
    y = b.tensor("y", (1,), "int8", scale=4.65661287e-10, zero_point=53)
    b.op("SUM", [x, axis], [y], keep_dims=True)
    b.inputs([x])
    b.outputs([y])
    assert_bit_exact(b.build(), tmp_path, samples=6)


def _transpose_conv_shape_input() -> bytes:
    """TRANSPOSE_CONV whose output_shape is a model input, as TFLM's SEANet models give it: TFLM
    sizes the output from the output tensor and never reads the input's values."""
    b = ModelBuilder()
    shape = b.tensor("output_shape", (4,), "int32")
    w = b.const("w", np.arange(2 * 3 * 3 * 4, dtype=np.int8).reshape(2, 3, 3, 4) % 7 - 3, scale=0.02, zero_point=0)
    x = b.tensor("x", (1, 3, 3, 4), "int8", scale=0.05, zero_point=2)
    y = b.tensor("y", (1, 6, 6, 2), "int8", scale=0.1, zero_point=-1)
    b.op("TRANSPOSE_CONV", [shape, w, x], [y], padding="SAME", stride_h=2, stride_w=2)
    b.inputs([shape, x])
    b.outputs([y])
    return b.build()


@pytest.mark.slow   # compiles with TVM
def test_transpose_conv_with_its_output_shape_a_model_input_is_bit_exact(tmp_path):
    from harness import assert_bit_exact
    rng = np.random.default_rng(3)
    samples = [[np.array([1, 6, 6, 2], np.int32), rng.integers(-128, 128, (1, 3, 3, 4), dtype=np.int8)]
               for _ in range(3)]
    assert_bit_exact(_transpose_conv_shape_input(), tmp_path, inputs=samples)
