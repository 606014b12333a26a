"""bench/mobilenetv2_anchor.py without TensorFlow or QEMU: the kinds of a MobileNet's layers, the per-kind sums of a
profile (tiled layers one row of their own), the ratios to Plumerai's figures and the target, the RAM cap, the verdict
of mtk validate and the model it checks (without its SOFTMAX), and the exit status and one line of its errors (its
figures need TensorFlow and QEMU; the script is run by hand)."""

from __future__ import annotations

import subprocess
import sys

import flatbuffers
import numpy as np
import pytest
from ai_edge_litert import schema_py_generated as schema

from checkout import REPO, toolkit_env
from mtk.graph import Graph, Op, Tensor
from mtk.reader import read_model
from mtk.tflite_builder import ModelBuilder

SCRIPT = REPO / "bench" / "mobilenetv2_anchor.py"
sys.path.insert(0, str(REPO / "bench"))

import mobilenetv2_anchor as anchor  # noqa: E402


def mobilenet_block() -> Graph:
    """conv 3x3 s2 -> 1x1 expansion -> depthwise 3x3 s1 -> 1x1 projection -> residual ADD -> MEAN -> FC -> SOFTMAX."""
    shapes = [(1, 8, 8, 3), (1, 4, 4, 4), (1, 4, 4, 8), (1, 4, 4, 8), (1, 4, 4, 4), (1, 4, 4, 4), (1, 4), (1, 10),
              (1, 10)]
    tensors = [Tensor(i, f"t{i}", s, "int8") for i, s in enumerate(shapes)]
    weights = {0: (4, 3, 3, 3), 1: (8, 1, 1, 4), 2: (1, 3, 3, 8), 3: (4, 1, 1, 8), 6: (10, 4)}
    w = {op: len(tensors) + k for k, op in enumerate(weights)}
    tensors += [Tensor(w[op], f"w{op}", s, "int8", data=np.zeros(s, np.int8)) for op, s in weights.items()]
    ops = [Op(0, "CONV_2D", [0, w[0]], [1], {"stride_h": 2}), Op(1, "CONV_2D", [1, w[1]], [2], {"stride_h": 1}),
           Op(2, "DEPTHWISE_CONV_2D", [2, w[2]], [3], {"stride_h": 1}), Op(3, "CONV_2D", [3, w[3]], [4], {}),
           Op(4, "ADD", [4, 1], [5], {}), Op(5, "MEAN", [5], [6], {}), Op(6, "FULLY_CONNECTED", [6, w[6]], [7], {}),
           Op(7, "SOFTMAX", [7], [8], {})]
    return Graph("block", tensors, ops, [0], [8])


KINDS = ["conv 3x3 s2", "conv 1x1 expansion", "depthwise 3x3 s1", "conv 1x1 projection", "add (residual)", "mean",
         "fully connected", "softmax"]
MACS = [432, 512, 1152, 512, 0, 0, 40, 0]


def profile(cycles: dict[int, int], units: dict[int, int] | None = None) -> dict:
    """mtk bench --profile's JSON row: per-layer instructions and MACs, the estimated cycles of the layers counted."""
    units = units or cycles
    return {"board": "mps2/an500", "cpu": "cortex-m7", "macs": sum(MACS), "per_inference": {"median": 9000},
            "arena_bytes": 70_000, "ram_bytes": 100_000, "flash_bytes": 5000,
            "layers": [{"index": i, "type": "X", "units": units.get(i, 0), "macs": m} for i, m in enumerate(MACS)],
            "estimated_cycles": {"board": "stm32f746g_disco", "clock_hz": 216_000_000, "median": 12_760_000,
                                 "time_ms_at_clock": 59.07,
                                 "layers": [{"index": i, "cycles": c} for i, c in cycles.items()]}}


def test_each_layer_of_a_mobilenet_has_its_kind():
    graph = mobilenet_block()
    assert [anchor.op_kind(graph, op) for op in graph.ops] == KINDS


def test_a_constant_operand_is_no_residual_and_other_1x1_convolutions_are_apart():
    graph = mobilenet_block()
    graph.ops[4].inputs[1] = graph.ops[1].inputs[1]   # a weight tensor: constant
    graph.ops[2].type = "MAX_POOL_2D"                # the 1x1 convolutions around it neither expand nor project
    assert [anchor.op_kind(graph, graph.ops[k]) for k in (1, 3, 4)] == ["conv 1x1 other"] * 2 + ["add"]


def test_cycles_are_summed_by_kind_with_their_shares_and_cost_per_mac_and_output():
    graph = mobilenet_block()
    graph.ops[5] = Op(5, "ADD", [5, 4], [6], {})   # a second residual ADD
    rows = anchor.by_kind(graph, profile({i: 100 * (i + 1) for i in range(8)}))
    assert [r["kind"] for r in rows] == KINDS[:5] + KINDS[6:]
    add = rows[4]
    assert (add["layers"], add["macs"], add["estimated_cycles"], add["outputs"]) == (2, 0, 500 + 600, 64 + 4)
    assert add["cycle_share"] == pytest.approx(1100 / 3600)
    assert add["cycles_per_mac"] is None and add["cycles_per_output"] == pytest.approx(1100 / 68)
    expansion = rows[1]
    assert expansion["mac_share"] == pytest.approx(512 / sum(MACS))
    assert expansion["cycles_per_mac"] == pytest.approx(200 / 512)
    assert expansion["cycles_per_output"] == pytest.approx(200 / 128)


def test_tiled_layers_are_one_row_and_a_layer_without_code_keeps_its_kind():
    """Layers 1-3 tiled (their cycles at layer 1, none at 2 and 3); the MEAN after the ADD has no cycles of its own
    and no MACs (a layer without code, as a reshape): its kind, at no cycles."""
    rows = anchor.by_kind(mobilenet_block(), profile({0: 500, 1: 3000, 4: 80, 6: 60, 7: 50}, {0: 400, 1: 2500}))
    assert [(r["kind"], r["layers"], r["macs"], r["estimated_cycles"], r["instructions"]) for r in rows] == [
        ("conv 3x3 s2", 1, 432, 500, 400), ("tiled, layers 1-3", 3, 2176, 3000, 2500),
        ("add (residual)", 1, 0, 80, 0), ("mean", 1, 0, 0, 0), ("fully connected", 1, 40, 60, 0),
        ("softmax", 1, 0, 50, 0)]


def test_figures_against_plumerai_and_the_target_and_the_arena_cap_for_the_ram_target():
    row = profile({i: 1 for i in range(8)})
    f = anchor.figures(row, None)
    assert (f["plan"], f["estimated_cycles"], f["ram_bytes"]) == ("default", 12_760_000, 100_000)
    assert f["cycles_vs_plumerai"] == pytest.approx(12.76 / 16.6)
    assert f["cycles_vs_target"] == pytest.approx(12.76 / 11.6)
    assert f["ram_vs_target"] == pytest.approx(100_000 / 65536)
    assert not f["meets_target"]
    assert anchor.capped_arena(row) == 65536 - 30_000   # the same 30,000 B of stack and data beside the arena
    assert anchor.capped_arena({**row, "ram_bytes": 65536}) is None
    capped = anchor.figures({**row, "ram_bytes": 60_000, "estimated_cycles": {**row["estimated_cycles"],
                                                                              "median": 11_000_000}}, 35_536)
    assert capped["plan"] == "arena <= 35,536 B (tiled)" and capped["meets_target"]


def test_the_table_has_every_run_plumerai_the_target_and_each_runs_kinds():
    graph = mobilenet_block()
    row = profile({i: 100 for i in range(8)})
    verdicts = [{"bit_exact": True, "mismatches": 0, "elements": 3000},
                {"bit_exact": False, "mismatches": 380, "elements": 3000}]
    runs = [{**anchor.figures(row, cap), **verdict, "kinds": anchor.by_kind(graph, row)}
            for cap, verdict in zip((None, 35_536), verdicts)]
    text = anchor.table(runs, board_flash=4096)
    assert "| mtk | default | 12,760,000 (59.1) | 0.77, 1.10 | 97.7 KiB (arena 70,000 B) | 1.22, 1.53 | 5,000 B | " \
           "yes |" in text
    assert "| 5,000 B | no: 380 of 3,000 outputs differ |" in text
    assert "| Plumerai (published) | | 16.6 M (77) | | 80.0 KiB | | | |" in text
    assert "| target | | <= 11.6 M | | <= 64.0 KiB | | | |" in text
    assert text.count("| conv 1x1 expansion | 1 | 512 (19.3%) | 100 (12.5%) | 0.20 | 0.8 |") == 2
    assert "| softmax | 1 | 0 (0.0%) | 100 (12.5%) |  | 10.0 |" in text
    assert "The model takes up to 5,000 B of flash, more than the board's 4,096 B" in text
    assert "more than the board's" not in anchor.table(runs, board_flash=5000)


def test_the_verdict_of_mtk_validate():
    validation = {"samples": [{"sample": 0, "elements": 1000, "mismatches": 3}, {"sample": 1, "elements": 1000,
                                                                               "mismatches": 0}],
                  "mismatches": 3, "bit_exact": False}
    assert anchor.exactness(validation) == {"bit_exact": False, "mismatches": 3, "elements": 2000}


def classifier(last: str = "SOFTMAX") -> ModelBuilder:
    """FULLY_CONNECTED 4 -> 3, then `last`."""
    b = ModelBuilder(description="classifier")
    x = b.tensor("x", (1, 4), "int8", scale=0.1, zero_point=0)
    w = b.const("w", np.arange(12, dtype=np.int8).reshape(3, 4), scale=0.05, zero_point=0)
    logits = b.tensor("logits", (1, 3), "int8", scale=0.2, zero_point=3)
    y = b.tensor("y", (1, 3), "int8", scale=1 / 256, zero_point=-128)
    b.op("FULLY_CONNECTED", [x, w, None], [logits], fused_activation_function="NONE")
    b.op(last, [logits], [y], **({"beta": 1.0} if last == "SOFTMAX" else {}))
    b.inputs([x])
    b.outputs([y])
    return b


def with_weights_after_the_flatbuffer(model: bytes) -> bytes:
    """The model's weights stored as large converted models store them: after the flatbuffer, by offset and size."""
    tree = schema.ModelT.InitFromObj(schema.Model.GetRootAsModel(model, 0))
    [buffer] = [b for b in tree.buffers if b.data is not None and len(b.data) == 12]
    data, buffer.data, buffer.size = bytes(np.asarray(buffer.data, np.uint8)), None, 12

    def packed(offset: int) -> bytes:
        buffer.offset = offset
        builder = flatbuffers.Builder(1024)
        builder.Finish(tree.Pack(builder), file_identifier=b"TFL3")
        return bytes(builder.Output())

    end = -(-len(packed(1)) // 16) * 16
    head = packed(end)
    return head + bytes(end - len(head)) + data


@pytest.mark.parametrize("stored", ["inside", "after"])
def test_the_model_without_its_softmax(stored, tmp_path):
    model = classifier().build()
    (tmp_path / "m.tflite").write_bytes(model if stored == "inside" else with_weights_after_the_flatbuffer(model))
    anchor.without_softmax(tmp_path / "m.tflite", tmp_path / "cut.tflite")
    graph = read_model(tmp_path / "cut.tflite")
    assert [op.type for op in graph.ops] == ["FULLY_CONNECTED"]
    assert [graph.tensors[i].name for i in graph.outputs] == ["logits"]
    weights = graph.tensors[graph.ops[0].inputs[1]]
    assert weights.data.ravel().tolist() == list(range(12))


def test_a_model_that_ends_otherwise_is_refused(tmp_path):
    (tmp_path / "m.tflite").write_bytes(classifier("RELU").build())
    with pytest.raises(anchor.AnchorError, match="no SOFTMAX"):
        anchor.without_softmax(tmp_path / "m.tflite", tmp_path / "cut.tflite")


def run_script(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, env=toolkit_env())


def test_a_missing_tensorflow_interpreter_is_one_line_exit_2(tmp_path):
    run = run_script("--tf-python", str(tmp_path / "none"), "--work", str(tmp_path / "work"))
    assert run.returncode == 2
    assert run.stderr.strip().splitlines() == [f"mobilenetv2_anchor.py: cannot run {tmp_path / 'none'}: "
                                               "No such file or directory"]


def test_a_missing_model_is_one_line_exit_2(tmp_path):
    run = run_script("--model", str(tmp_path / "none.tflite"))
    assert run.returncode == 2
    assert len(run.stderr.strip().splitlines()) == 1 and "none.tflite" in run.stderr


def test_an_unknown_board_is_one_line_exit_2(tmp_path):
    run = run_script("--model", str(tmp_path / "none.tflite"), "--board", "nope")
    assert run.returncode == 2
    assert run.stderr.strip().splitlines() == ["mobilenetv2_anchor.py: unknown board 'nope'"]
