"""The static memory planner (codegen/memory_plan.py): no two buffers live at once overlap, and the
arena reaches the liveness lower bound where a greedy order can (the digits CNN's lifetimes) or the search
finds it (a chain with a small layer); an output that overwrites its input keeps its distance from it."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from mtk.codegen.memory_plan import Buffer, align, footprint, plan_memory, room_under


def digits_buffers() -> list[Buffer]:
    """The digits CNN's arena buffers on the Cortex-M4 (name, bytes, first and last step)."""
    return [Buffer(*b) for b in [("conv1", 512, 0, 1), ("scratch0", 88, 0, 0), ("pool", 128, 1, 2),
                                 ("scratch2", 320, 2, 2), ("conv2", 256, 2, 4), ("scratch4", 512, 4, 4),
                                 ("fc1", 32, 4, 5), ("scratch5", 64, 5, 5), ("logits", 10, 5, 6)]]


def test_the_digits_cnn_reaches_its_lower_bound():
    # largest first alone gives 896 B: conv2 lands above both scratches, pool above conv2
    plan = plan_memory(digits_buffers())
    assert plan.arena_bytes == plan.lower_bound_bytes == 800


def test_a_chain_with_a_small_layer_in_it_reaches_its_lower_bound():
    """The anomaly detector's layers on the Cortex-M55: 128 B outputs in a chain, one of 8 B among them.
    Every greedy order gives 272 B (the 8 B buffer breaks the alternation); the search finds 256 B."""
    sizes = [128, 128, 128, 128, 8, 128, 128, 128, 128]
    plan = plan_memory([Buffer(f"fc{i}", n, i, i + 1) for i, n in enumerate(sizes)])
    assert plan.arena_bytes == plan.lower_bound_bytes == 256


def test_a_buffer_aligned_beyond_16_bytes_starts_at_a_multiple_of_its_alignment():
    """A staged quad stream (32-byte aligned, as in flash) beside a 16 B buffer live at once: at 32, not 16, though
    the search (48 B, above the lower bound's 32) looks for less."""
    first, stream = Buffer("first", 16, 0, 0), Buffer("stream", 16, 0, 0, align=32)
    plan = plan_memory([first, stream])
    assert (first.offset, stream.offset, plan.arena_bytes, plan.lower_bound_bytes) == (0, 32, 48, 32)


def resnet_blocks_buffers() -> list[Buffer]:
    """IC's (ResNet-8's) arena through its second block on the Cortex-M4, tiled at 27,002 B: block 1's output over
    its input (the tiled stage's ADD, in place), the 1x1 shortcut's 512 B under block 1's output (1-row bands),
    conv4 2,560 B under or over conv3, block 2's ADD over the shortcut."""
    x0 = Buffer("block1_in", 16384, 0, 1)
    add0 = Buffer("block1_out", 16384, 1, 5, overwrites=x0, below=0)
    conv3 = Buffer("conv3", 8192, 4, 6)
    conv4 = Buffer("conv4", 8192, 6, 7, overwrites=conv3, below=2560, above=2560)
    shortcut = Buffer("shortcut", 8192, 5, 7, overwrites=add0, below=512, above=8192)
    add1 = Buffer("block2_out", 8192, 7, 7, overwrites=shortcut, below=0)
    return [x0, add0, conv3, conv4, shortcut, add1, Buffer("input", 3072, 0, 0), Buffer("scratch0", 160, 0, 0),
            Buffer("stage", 9824, 1, 1), Buffer("scratch4", 576, 4, 4), Buffer("scratch6", 64, 5, 5),
            Buffer("scratch5", 5472, 6, 6)]


def test_a_chain_overwritten_from_below_is_placed_with_room_under_it():
    """Block 1's input and output start 512 B up, the shortcut under them: the search tries each buffer that
    much over 0 and the placed ends (room_under: 512 for both, through the chain). The greedy orders and the
    search over 0 and the ends give 27,136 B (the shortcut over block 1's output, conv4 over conv3 at the top)."""
    buffers = resnet_blocks_buffers()
    assert room_under(buffers)[:6] == [512, 512, 2560, 0, 0, 0]
    plan = plan_memory(buffers)
    assert (plan.lower_bound_bytes, plan.arena_bytes) == (26208, 26720)
    assert buffers[1].offset == buffers[0].offset == buffers[4].offset + 512


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 3000), st.integers(0, 12), st.integers(0, 6), st.sampled_from((16, 32))),
                min_size=1, max_size=24))
def test_buffers_live_at_once_never_overlap(specs):
    buffers = [Buffer(f"b{i}", n, first, first + span, align=alignment)
               for i, (n, first, span, alignment) in enumerate(specs)]
    plan = plan_memory(buffers)
    for i, a in enumerate(buffers):
        assert a.offset % a.align == 0 and a.offset + a.nbytes <= plan.arena_bytes
        for b in buffers[i + 1:]:
            if a.overlaps_in_time(b):
                assert a.offset + a.nbytes <= b.offset or b.offset + b.nbytes <= a.offset
    assert plan.lower_bound_bytes <= plan.arena_bytes == align(max(b.offset + b.nbytes for b in buffers))


def test_a_chain_of_overwriting_outputs_alternates_down_and_up():
    """Four 8000 B layers in a chain, each output allowed to overlap its input from 1,920 B below or above:
    the arena is one tensor and one distance, not two tensors."""
    buffers = [Buffer("x0", 8000, 0, 1)]
    for i in range(1, 5):
        buffers.append(Buffer(f"x{i}", 8000, i, i + 1, overwrites=buffers[-1], below=1920, above=1920))
    plan = plan_memory(buffers)
    assert plan.arena_bytes == plan.lower_bound_bytes == align(8000 + 1920)
    for out in buffers[1:]:
        into = out.overwrites
        assert out.offset <= into.offset - 1920 or out.offset >= into.offset + 1920


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(16, 3000), st.integers(0, 2000), st.booleans()), min_size=2, max_size=10))
def test_an_overwriting_output_keeps_its_distance(specs):
    buffers = [Buffer("x0", specs[0][0], 0, 1)]
    for i, (n, d, up) in enumerate(specs[1:], start=1):
        buffers.append(Buffer(f"x{i}", n, i, i + 1, overwrites=buffers[-1], below=None if up else d,
                              above=d if up else None))
    plan = plan_memory(buffers)
    for out in buffers[1:]:
        into = out.overwrites
        apart = out.offset + out.nbytes <= into.offset or into.offset + into.nbytes <= out.offset
        assert apart or (out.below is not None and out.offset <= into.offset - out.below) or \
            (out.above is not None and out.offset >= into.offset + out.above)
    assert plan.lower_bound_bytes <= plan.arena_bytes


def test_the_memory_curve_counts_an_overwriting_pair_once_where_it_overlaps():
    from mtk.codegen.regions import live_bytes
    into = Buffer("in", 8000, 0, 1)
    out = Buffer("out", 8000, 1, 2, overwrites=into, below=1920)
    plan = plan_memory([into, out])
    assert plan.arena_bytes == align(8000 + 1920)
    assert live_bytes(plan.buffers, 3) == [8000, 8000 + 1920, 8000]


def test_an_output_that_may_start_above_its_input_fits_over_it():
    """A layer whose output rows are read from further down its input (a stride-2 one in bands) may start its output
    up to 1,920 B over the input's start (below < 0): the pair's footprint, and the lower bound, is the input alone,
    as the plan places them (MobileNetV2's first layer: a 36,000 B arena had a 37,920 B "lower bound")."""
    into = Buffer("in", 19200, 0, 0)
    out = Buffer("out", 19200, 0, 1, overwrites=into, below=-1920)
    plan = plan_memory([into, out, Buffer("scratch", 1600, 0, 0)])
    assert footprint(out) == 19200 and plan.arena_bytes == plan.lower_bound_bytes == 19200 + 1600
    assert 0 <= out.offset - into.offset <= 1920


def test_only_an_output_overlapping_its_input_from_above_is_placed_above():
    """A multi-layer stage has no descending kernels; the plan may still put its output wholly above the input
    it may overwrite, and that output keeps its ascending kernels (it was left with none)."""
    into = Buffer("in", 8000, 0, 1, offset=0)
    over = Buffer("out", 8000, 1, 2, offset=1920, overwrites=into, below=1920, above=1920)
    clear = Buffer("out", 8000, 1, 2, offset=8000, overwrites=into, below=1920)
    under = Buffer("out", 8000, 1, 2, offset=0, overwrites=Buffer("in", 8000, 0, 1, offset=1920), below=1920)
    assert over.placed_above() and not clear.placed_above() and not under.placed_above()
