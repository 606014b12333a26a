"""The model's inputs and outputs have places in the arena, planned with their lifetimes like any other
buffer: the inputs' block from before the first op to their last reader, the outputs' from their first
producer to the end of the run, each laid out as the firmware's buffer. tvmgen_<module>_map_inputs/outputs
give those places; a run given them, or the caller's own buffers, is bit-exact with tflite-micro."""

from __future__ import annotations

import ctypes

import numpy as np

from harness import assert_outputs_match, conv_chain, random_samples
from mtk.compiler import compile_model
from mtk.hostrun import HostModel
from mtk.tflite_builder import ModelBuilder


def two_in_two_out() -> bytes:
    """x + y -> sum (an output, also read by the pooling) -> 2x2 max pool -> pooled (an output)."""
    b = ModelBuilder()
    x, y = (b.tensor(n, (1, 8, 8, 3), "int8", scale=0.05, zero_point=z) for n, z in (("x", -3), ("y", 7)))
    total = b.tensor("sum", (1, 8, 8, 3), "int8", scale=0.1, zero_point=1)
    pooled = b.tensor("pooled", (1, 4, 4, 3), "int8", scale=0.1, zero_point=1)
    b.op("ADD", [x, y], [total])
    b.op("MAX_POOL_2D", [total], [pooled], padding="VALID", stride_h=2, stride_w=2, filter_height=2, filter_width=2)
    b.inputs([x, y])
    b.outputs([total, pooled])
    return b.build()


def plan_of(compiled) -> dict:
    return {b.name: b for b in compiled.memory.plan}


def places(host: HostModel, kind: str) -> list[int]:
    """The addresses tvmgen_<module>_map_<kind>() gives, in metadata order (an internal arena)."""
    members = [t.c_name for t in (host.inputs if kind == "inputs" else host.outputs)]
    struct = type(kind, (ctypes.Structure,), {"_fields_": [(m, ctypes.c_void_p) for m in members]})
    function = getattr(host._library, f"tvmgen_{host.module}_map_{kind}")
    function.restype = struct
    found = function()
    return [getattr(found, m) for m in members]


def test_inputs_and_outputs_are_blocks_of_the_plan_with_their_lifetimes(tmp_path):
    model = two_in_two_out()
    (tmp_path / "m.tflite").write_bytes(model)
    compiled = compile_model(tmp_path / "m.tflite", tmp_path / "lib")
    plan = plan_of(compiled)
    inputs, outputs = plan["io:inputs"], plan["io:outputs"]
    assert (inputs.nbytes, inputs.first_use, inputs.last_use) == (384, 0, 0)     # x, y: 192 B each, last read at 0
    assert (outputs.nbytes, outputs.first_use, outputs.last_use) == (240, 0, 1)  # sum written at 0, live to the end
    assert compiled.arena_bytes >= inputs.nbytes + outputs.nbytes                 # both live at step 0
    header = (tmp_path / "lib" / "include" / "tvmgen_default.h").read_text()
    assert "struct tvmgen_default_inputs tvmgen_default_map_inputs(void);" in header
    assert "struct tvmgen_default_outputs tvmgen_default_map_outputs(void);" in header
    host = HostModel(compiled)
    x_place, y_place = places(host, "inputs")
    sum_place, pooled_place = places(host, "outputs")
    assert (y_place - x_place, pooled_place - sum_place) == (192, 192)   # laid out as the firmware's buffers
    assert (pooled_place - sum_place) == compiled.outputs[1].offset
    assert sum_place - x_place == outputs.offset - inputs.offset
    samples = random_samples(model, 3)
    assert_outputs_match(model, samples, [host.run(s, in_arena=True) for s in samples])


def test_an_input_in_the_arena_is_overwritten_after_its_last_reader_a_callers_never(tmp_path):
    """The input's place holds later layers' tensors (no RAM kept for it after step 0); run again from the
    same place once the input is written there again, the outputs are the same; the caller's own input
    buffer is only read."""
    model = conv_chain()
    (tmp_path / "m.tflite").write_bytes(model)
    compiled = compile_model(tmp_path / "m.tflite", tmp_path / "lib")
    plan = plan_of(compiled)
    block = plan["io:inputs"]
    assert block.last_use == 0
    assert any(b.first_use > 0 and b.offset < block.offset + block.nbytes and block.offset < b.offset + b.nbytes
               for b in plan.values())
    host = HostModel(compiled)
    samples = random_samples(model, 2)
    own = [np.copy(a) for a in samples[0]]
    first = host.run(samples[0])
    assert all(np.array_equal(a, b) for a, b in zip(own, samples[0]))
    again = [host.run(samples[0], in_arena=True) for _ in range(2)]
    assert all(np.array_equal(a, b) for run in again for a, b in zip(run, first))
    assert_outputs_match(model, samples, [host.run(s, in_arena=True) for s in samples])


def test_an_external_workspace_holds_the_places_too(tmp_path):
    model = two_in_two_out()
    (tmp_path / "m.tflite").write_bytes(model)
    compiled = compile_model(tmp_path / "m.tflite", tmp_path / "lib", workspace="external")
    header = (tmp_path / "lib" / "include" / "tvmgen_default.h").read_text()
    assert ("struct tvmgen_default_inputs tvmgen_default_map_inputs("
            "struct tvmgen_default_workspace_pools* workspace_pools);") in header
    host = HostModel(compiled)
    samples = random_samples(model, 2)
    assert_outputs_match(model, samples, [host.run(s, in_arena=True) for s in samples])
    assert_outputs_match(model, samples, [host.run(s) for s in samples])
