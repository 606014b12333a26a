"""Find the compute ops ai-edge-quantizer silently left in float (between DEQUANTIZE and QUANTIZE)."""

from __future__ import annotations

from ..graph import Graph, Op, Tensor


def _is_float(tensor: Tensor) -> bool:
    return tensor.dtype.startswith("float")


def _is_conversion(graph: Graph, op: Op) -> bool:
    """QUANTIZE or DEQUANTIZE: one tensor in, one out, one side float and the other quantized integer.

    Judged from the tensors, not the op name, so it holds whatever opcode field a writer fills in.
    """
    inputs = [t for t in graph.input_tensors(op) if t is not None]
    outputs = graph.output_tensors(op)
    if len(inputs) != 1 or len(outputs) != 1:
        return False
    (source,), (result,) = inputs, outputs
    if _is_float(source) == _is_float(result):
        return False
    integer_side = result if _is_float(source) else source
    return integer_side.quant is not None


def float_compute_ops(graph: Graph) -> list[Op]:
    """Ops that read or write a float tensor and are not a float<->int conversion at a boundary."""
    return [op for op in graph.ops
            if not _is_conversion(graph, op)
            and any(_is_float(t) for t in graph.input_tensors(op) + graph.output_tensors(op) if t is not None)]


def leftover_float_ops(float_graph: Graph, int8_graph: Graph) -> list[str]:
    """The float compute ops of `int8_graph`, named as in the float model: "#3 LEAKY_RELU (output 'act')".

    The quantizer keeps a float op's output tensor name, which finds its index in the float model.
    """
    float_op_index = {float_graph.tensors[op.outputs[0]].name: op.index for op in float_graph.ops if op.outputs}
    labels = []
    for op in float_compute_ops(int8_graph):
        output = int8_graph.tensors[op.outputs[0]].name if op.outputs else ""
        index = float_op_index.get(output)
        where = f"#{index}" if index is not None else f"#{op.index} of the int8 model"
        labels.append(f"{where} {op.type} (output '{output}')")
    return labels
