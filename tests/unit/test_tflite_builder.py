"""The builder writes files that TFLite's own readers accept, with every field where it belongs."""

from __future__ import annotations

import numpy as np
import pytest
import tflite
from ai_edge_litert import schema_py_generated as schema

from mtk.reader import read_model
from mtk.tflite_builder import ModelBuilder


def _conv_model(tmp_path):
    b = ModelBuilder(description="conv test")
    x = b.tensor("input", (1, 5, 5, 2), "int8", scale=0.5, zero_point=-1)
    scales = np.array([0.01, 0.02, 0.03])
    w = b.const("weights", np.arange(54, dtype=np.int8).reshape(3, 3, 3, 2), scale=scales,
                zero_point=np.zeros(3), axis=0)
    bias = b.const("bias", np.array([1, -2, 3], dtype=np.int32), scale=0.5 * scales, zero_point=0)
    y = b.tensor("output", (1, 3, 3, 3), "int8", scale=0.25, zero_point=3)
    b.op("CONV_2D", [x, w, bias], [y], stride_w=2, stride_h=2, padding="SAME",
         fused_activation_function="RELU6", dilation_w_factor=1, dilation_h_factor=1)
    b.inputs([x])
    b.outputs([y])
    return b.save(tmp_path / "conv.tflite")


def test_tensors_quantization_and_options_read_back(tmp_path):
    graph = read_model(_conv_model(tmp_path))
    x, w, bias, y = graph.tensors
    assert (x.name, x.shape, x.dtype, x.quant.s, x.quant.zp) == ("input", (1, 5, 5, 2), "int8", 0.5, -1)
    assert w.quant.per_channel and w.quant.axis == 0
    np.testing.assert_allclose(w.quant.scale, [0.01, 0.02, 0.03], rtol=1e-6)
    np.testing.assert_array_equal(w.data, np.arange(54, dtype=np.int8).reshape(3, 3, 3, 2))
    np.testing.assert_array_equal(bias.data, [1, -2, 3])
    assert list(bias.quant.zero_point) == [0, 0, 0]
    op, = graph.ops
    assert op.type == "CONV_2D" and op.inputs == [0, 1, 2] and op.outputs == [3]
    assert op.options["padding"] == "SAME" and op.options["fused_activation_function"] == "RELU6"
    assert op.options["stride_w"] == 2 and op.options["stride_h"] == 2
    assert (graph.inputs, graph.outputs) == ([0], [3])


def test_file_identifier_signature_and_aligned_buffers(tmp_path):
    data = _conv_model(tmp_path).read_bytes()
    assert data[4:8] == b"TFL3"
    model = tflite.Model.GetRootAsModel(data, 0)
    assert model.Version() == 3 and model.Buffers(0).DataLength() == 0
    for i in range(1, model.BuffersLength()):
        buffer = model.Buffers(i)
        assert buffer._tab.Vector(buffer._tab.Offset(4)) % 16 == 0
    signature = model.SignatureDefs(0)
    assert signature.SignatureKey() == b"serving_default"
    assert signature.Inputs(0).Name() == b"input" and signature.Inputs(0).TensorIndex() == 0
    assert signature.Outputs(0).Name() == b"output" and signature.Outputs(0).TensorIndex() == 3


def test_builtin_code_in_both_fields():
    b = ModelBuilder()
    x = b.tensor("x", (1, 4), "float32")
    y = b.tensor("y", (1, 4), "float32")
    z = b.tensor("z", (1, 4), "float32")
    b.op("RELU", [x], [y])
    b.op("GELU", [y], [z])
    b.inputs([x])
    b.outputs([z])
    model = schema.ModelT.InitFromPackedBuf(b.build(), 0)
    codes = [(c.builtinCode, c.deprecatedBuiltinCode) for c in model.operatorCodes]
    assert codes == [(schema.BuiltinOperator.RELU, schema.BuiltinOperator.RELU), (schema.BuiltinOperator.GELU, 127)]


def test_omitted_input_and_list_options(tmp_path):
    b = ModelBuilder()
    x = b.tensor("x", (1, 1, 4), "int8", scale=0.1, zero_point=0)
    w = b.const("w", np.ones((2, 4), np.int8), scale=0.1, zero_point=0)
    y = b.tensor("y", (1, 2), "int8", scale=0.1, zero_point=0)
    s = b.tensor("s", (2,), "int8", scale=0.1, zero_point=0)
    b.op("FULLY_CONNECTED", [x, w, None], [y], keep_num_dims=False)
    b.op("SQUEEZE", [y], [s], squeeze_dims=[0])
    b.inputs([x])
    b.outputs([s])
    graph = read_model(b.save(tmp_path / "fc.tflite"))
    assert graph.ops[0].inputs == [0, 1, None]
    assert graph.ops[1].options["squeeze_dims"] == [0]


@pytest.mark.parametrize("call, message", [
    (lambda b, x: b.op("NOT_AN_OP", [x], [x]), "unknown TFLite builtin"),
    (lambda b, x: b.op("CONV_2D", [x], [x], strides=2), "no option 'strides'"),
    (lambda b, x: b.op("CONV_2D", [x], [x], padding="HALF"), "expected one of"),
    (lambda b, x: b.op("RELU", [x], [x], alpha=0.1), "takes no options"),
    (lambda b, x: b.op("RELU", [x], [7]), "no tensor with index 7"),
    (lambda b, x: b.tensor("x", (1,), "int8"), "exists already"),
    (lambda b, x: b.build(), "inputs"),
])
def test_misuse_is_a_clear_error(call, message):
    b = ModelBuilder()
    x = b.tensor("x", (1,), "int8")
    with pytest.raises(ValueError, match=message):
        call(b, x)
