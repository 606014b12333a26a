"""The firmware's model input and output live in the arena: no I/O buffer of its own, and the outputs read are
those of the inference right after the input was sent, bit-exact, though the runs overwrite the input."""

from __future__ import annotations

from mtk.boards import get_board
from mtk.pipeline import run_model
from mtk.runoptions import RunOptions

from harness import assert_outputs_match, conv_chain, random_samples


def test_outputs_after_timed_runs_that_overwrite_the_input(tmp_path):
    model = conv_chain()
    path = tmp_path / "chain.tflite"
    path.write_bytes(model)
    samples = random_samples(model, 2)
    result = run_model(path, RunOptions(board=get_board("mps2/an386"), runs=3), samples)
    assert_outputs_match(model, samples, result.outputs, "mps2/an386: ")
    assert result.per_inference.min == result.per_inference.max   # on what the first run left: the same count
    besides_arena = result.sizes.ram_bytes - result.arena_bytes - result.sizes.stack_bytes
    assert besides_arena < 16 * 16 * 3, besides_arena
