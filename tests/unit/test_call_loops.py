"""Runs of kernel calls that repeat with offsets moving by a fixed step (codegen/call_loops.py)."""

from __future__ import annotations

from mtk.codegen.call_loops import Repeat, find_repeats


def test_bands_of_a_layer_become_one_loop():
    """Four bands of one kernel, input and output a row further each time, after a different call."""
    keys = ["pad", "conv", "conv", "conv", "conv"]
    offsets = [(0, 0), (0, 100), (40, 150), (80, 200), (120, 250)]
    assert find_repeats(keys, offsets) == [0, Repeat(1, 1, 4, ((40, 50),))]


def test_a_round_of_several_calls_repeats_with_fixed_buffers():
    """conv writes into a row buffer the depthwise reads in place: only the input and output move."""
    keys = ["conv", "dw", "conv", "dw", "conv", "dw"]
    offsets = [(0, 500), (500, 1000), (64, 500), (500, 1032), (128, 500), (500, 1064)]
    assert find_repeats(keys, offsets) == [Repeat(0, 2, 3, ((64, 0), (0, 32)))]


def test_offsets_that_do_not_move_by_a_fixed_step_stay_single_calls():
    keys = ["conv"] * 3
    assert find_repeats(keys, [(0,), (10,), (30,)]) == [Repeat(0, 1, 2, ((10,),)), 2]
    assert find_repeats(["a", "b", "a"], [(0,), (0,), (0,)]) == [0, 1, 2]


def test_the_run_saving_the_most_call_sites_wins():
    """Period 1 repeats twice, period 2 three times: the longer saving is taken."""
    keys = ["a", "a", "a", "a", "a", "a"]
    offsets = [(0,), (0,), (1,), (1,), (2,), (2,)]
    assert find_repeats(keys, offsets) == [Repeat(0, 2, 3, ((1,), (1,)))]
