"""The kernel paths the host cannot run, in QEMU against tflite-micro: Helium (MVE) on the Cortex-M55,
the Cortex-M3's long-multiply kernels and inline assembly, the Cortex-M4's and Cortex-M33's DSP instructions."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest

import modelgen
from mtk.autotune import tune_model
from mtk.boards import get_board
from mtk.kernels.files import C_DIR
from mtk.ops import prepare_ops
from mtk.ops.conv import DEPTHWISE_KERNELS
from mtk.reader import read_model
from mtk.reference import run_reference_batch
from mtk.target import get_cpu
from mtk.tflite_builder import ModelBuilder
from mtk.tuning import tunable_layers
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from harness import (GEMM_MODELS, LAYERS, assert_bit_exact_on_target, conv_model, few_channel_fc, few_channel_pointwise,
                     random_samples, single_op_model)

pytestmark = pytest.mark.qemu

def add_model(shape: tuple[int, ...], activation: str, other: tuple[int, ...] | None = None, op: str = "ADD",
              scales: tuple[float, float, float] = (0.05, 0.03, 0.07)) -> bytes:
    """`op` (ADD, SUB, MUL) of two int8 inputs, the second of shape `other` (broadcast) or the same (Helium:
    mtk_add_mve.h, mtk_mul_mve.h; cores with a long multiply: mtk_add_s8.h)."""
    b = ModelBuilder(description=f"mtk test {op}")
    x1 = b.tensor("x1", shape, "int8", scale=scales[0], zero_point=-7)
    x2 = b.tensor("x2", other or shape, "int8", scale=scales[1], zero_point=3)
    y = b.tensor("y", np.broadcast_shapes(shape, other or shape), "int8", scale=scales[2], zero_point=5)
    b.op(op, [x1, x2], [y], fused_activation_function=activation)
    b.inputs([x1, x2])
    b.outputs([y])
    return b.build()


def pointwise(shape: tuple[int, int, int], channels: int, activation: str) -> bytes:
    """A 1x1 CONV_2D of `channels` outputs over an (H, W, C) input, per-channel weights."""
    h, w, c = shape
    return conv_model("CONV_2D", (1, h, w, c), (channels, 1, 1, c), (1, h, w, channels), per_channel=True,
                      padding="VALID", stride_h=1, stride_w=1, dilation_h_factor=1, dilation_w_factor=1,
                      fused_activation_function=activation)


MODELS = {
    "conv-taps": lambda: conv_model("CONV_2D", (1, 7, 6, 4), (6, 3, 3, 4), (1, 7, 6, 6), per_channel=True,
                                    padding="SAME", stride_h=1, stride_w=1, dilation_h_factor=1,
                                    dilation_w_factor=1, fused_activation_function="NONE"),
    "conv-gather": GEMM_MODELS["conv-gather"],
    # DSP's fused GEMM: an odd last row (stored once), an odd last channel (in C), 4 groups (entering its loop midway)
    "conv-1x1-odd": lambda: pointwise((3, 5, 13), 7, "NONE"),
    # several rows of 1 to 3 channels: pairs of the input's rows (an odd last row) by the M3's 2x2/s8 and the DSP cores'
    # 2x2/s16 (whole groups in assembly, an odd count of them entering its loop midway; a partial one in C; 3
    # channels: a tile of 2 and a narrow one of 1; fewer than 4 values: in C)
    "conv-1x1-2ch": lambda: pointwise((3, 5, 37), 2, "RELU"),
    "conv-1x1-1ch": lambda: pointwise((4, 3, 70), 1, "NONE"),
    "conv-1x1-3ch": lambda: pointwise((3, 3, 8), 3, "NONE"),
    "conv-1x1-3ch-3deep": lambda: pointwise((2, 3, 3), 3, "RELU"),
    # DSP's fused one-row GEMM (one multiplier): 38 groups (entering its loop midway); a clamped range (ReLU, output
    # zero point 5): in C
    "fc-fused-1-row": lambda: conv_model("FULLY_CONNECTED", (1, 150), (12, 150), (1, 12), per_channel=False,
                                         fused_activation_function="NONE"),
    "fc-fused-1-row-relu": lambda: conv_model("FULLY_CONNECTED", (1, 37), (8, 37), (1, 8), per_channel=False,
                                              fused_activation_function="RELU"),
    "fc-600": lambda: conv_model("FULLY_CONNECTED", (1, 600), (10, 600), (1, 10), per_channel=True,
                                 fused_activation_function="RELU"),
    # the M3's 2x4 kernel: 75 groups (two chunks of its pair sums), a partial channel tile (of 3: 7 channels would
    # take 2x2/s8), an odd last row
    "fc-3-rows-300": lambda: conv_model("FULLY_CONNECTED", (3, 300), (11, 300), (3, 11), per_channel=True,
                                        y_scale=2.0, fused_activation_function="NONE"),
    # the M3's 2x2/s8 where 2x4/s8 pads an eighth of its channels or more: 6 tiles of 2 and one of 1, 13 deep (a
    # partial group), an odd last row
    "conv-1x1-13ch": lambda: pointwise((5, 3, 13), 13, "RELU"),
    "depthwise": lambda: conv_model("DEPTHWISE_CONV_2D", (1, 9, 7, 8), (1, 3, 3, 8), (1, 9, 7, 8), per_channel=True,
                                    padding="SAME", stride_h=1, stride_w=1, depth_multiplier=1, dilation_h_factor=1,
                                    dilation_w_factor=1, fused_activation_function="RELU"),
    **{name: LAYERS[name] for name in ("dw-1to8-10x8-s2", "dw-5to20-s3", "dw-67-s2", "dw-9to18-5x7-dilated",
                                            "conv-2ch-10x8-valid")},
    "add-105-relu": lambda: add_model((1, 5, 3, 7), "RELU"),
    "sub-63": lambda: add_model((1, 3, 3, 7), "NONE", op="SUB"),
    # Helium: a depth below one chunk (the predicated load) and a partial tile (the predicated store)
    "fc-2-rows-depth-1": lambda: conv_model("FULLY_CONNECTED", (2, 1), (2, 1), (2, 2), per_channel=True,
                                            fused_activation_function="NONE"),
    "chain-cnn": lambda: modelgen.example_models(0)["CHAIN_CNN"],
    "chain-residual": lambda: modelgen.example_models(1)["CHAIN_RESIDUAL"],
}


BOARDS = ["mps3/corstone300/an547", "mps2/an385", "mps2/an386", "mps2/an505", "microbit"]


def depthwise_model(in_shape, kernel, out_shape, activation: str = "NONE", padding: str = "SAME", stride: int = 1,
                    dilation: int = 1, multiplier: int = 1) -> bytes:
    return conv_model("DEPTHWISE_CONV_2D", in_shape, (1, *kernel, in_shape[3] * multiplier), out_shape,
                      per_channel=True, padding=padding, stride_h=stride, stride_w=stride, depth_multiplier=multiplier,
                      dilation_h_factor=dilation, dilation_w_factor=dilation, fused_activation_function=activation)


HELIUM_MODELS = {   # mtk_depthwise_mve.h: 3x3 whole groups in assembly (clamped or not), other windows, tails
    "dw-3x3-40-relu6-s2": lambda: depthwise_model((1, 9, 7, 40), (3, 3), (1, 5, 4, 40), "RELU6", stride=2),
    "dw-3x3-32-dil2-valid": lambda: depthwise_model((1, 9, 7, 32), (3, 3), (1, 5, 3, 32), padding="VALID",
                                                    dilation=2),
    "dw-2x3-20": lambda: depthwise_model((1, 6, 5, 20), (2, 3), (1, 6, 5, 20), "RELU"),
    # a depth multiplier: each lane's input channel gathered (3 -> 21: a tail group; 2 -> 32: whole groups, 3x3)
    "dw-3to21-m7": lambda: depthwise_model((1, 7, 6, 3), (3, 2), (1, 4, 3, 21), "RELU6", stride=2, multiplier=7),
    "dw-16to32-m2-3x3": lambda: depthwise_model((1, 6, 5, 16), (3, 3), (1, 6, 5, 32), multiplier=2),
    # any window: taps paired in the assembly loop (2x2: a whole group and 8 channels 8 lanes wide; 5x5 a single
    # tap more, a partial group of 13 under a predicate; 7x7 beyond the 16 taps the kernel once took; a gathered
    # partial group of 12); a last group of 3 channels, 8 lanes wide, over 40 taps
    "dw-2x2-24-relu": lambda: depthwise_model((1, 6, 5, 24), (2, 2), (1, 6, 5, 24), "RELU"),
    "dw-5x5-13-s2": lambda: depthwise_model((1, 9, 8, 13), (5, 5), (1, 5, 4, 13), stride=2),
    "dw-7x7-40-relu6": lambda: depthwise_model((1, 8, 7, 40), (7, 7), (1, 8, 7, 40), "RELU6"),
    "dw-3to12-m4-5x5": lambda: depthwise_model((1, 6, 6, 3), (5, 5), (1, 6, 6, 12), multiplier=4),
    "dw-10x4-3-valid": lambda: conv_model("DEPTHWISE_CONV_2D", (1, 14, 6, 3), (1, 10, 4, 3), (1, 3, 2, 3),
                                          per_channel=True, padding="VALID", stride_h=2, stride_w=2,
                                          depth_multiplier=1, dilation_h_factor=1, dilation_w_factor=1,
                                          fused_activation_function="NONE"),
    # mtk_gemm_mve.h's _lshift kernels: rescales x_scale * w_scale / y_scale of 0.02-1.6, some channels shift left
    # mtk_add_mve.h over runs where one input stays: per channel, per pixel, a scalar, both inputs broadcast
    "add-bcast-channels": lambda: add_model((1, 5, 4, 23), "RELU", (1, 1, 1, 23)),
    "add-bcast-pixels": lambda: add_model((1, 5, 4, 7), "NONE", (1, 5, 4, 1)),
    "add-bcast-scalar": lambda: add_model((1,), "NONE", (2, 3, 5)),
    "add-bcast-both": lambda: add_model((1, 1, 6, 1), "RELU6", (1, 5, 1, 3)),
    # mtk_mul_mve.h: a predicated tail, a rescale shifting left (x1_scale * x2_scale / y_scale 2.5), broadcasts
    "mul-odd-relu": lambda: add_model((1, 5, 3, 13), "RELU", op="MUL"),
    "mul-lshift": lambda: add_model((1, 3, 3, 9), "NONE", op="MUL", scales=(0.5, 0.5, 0.1)),
    "mul-bcast-channels": lambda: add_model((1, 5, 4, 7), "RELU6", (1, 1, 1, 7), op="MUL"),
    "mul-bcast-both": lambda: add_model((1, 1, 6, 1), "NONE", (1, 5, 1, 3), op="MUL"),
    "fc-lshift": lambda: conv_model("FULLY_CONNECTED", (3, 37), (11, 37), (3, 11), per_channel=True, x_scale=0.4,
                                    y_scale=0.005, fused_activation_function="NONE"),
    "conv-lshift": lambda: conv_model("CONV_2D", (1, 5, 6, 3), (6, 3, 3, 3), (1, 5, 6, 6), per_channel=True,
                                      x_scale=0.4, y_scale=0.005, padding="SAME", stride_h=1, stride_w=1,
                                      dilation_h_factor=1, dilation_w_factor=1, fused_activation_function="RELU"),
    # mtk_gemm_mve.h's narrow last tile (1-3 channels: only their VMLADAVAs), one row and two, depths off 16
    "fc-37to1-3rows": lambda: conv_model("FULLY_CONNECTED", (3, 37), (1, 37), (3, 1), per_channel=False,
                                         fused_activation_function="NONE"),
    "fc-1000to2": lambda: conv_model("FULLY_CONNECTED", (1, 1000), (2, 1000), (1, 2), per_channel=True, x_scale=0.02,
                                     y_scale=0.5, fused_activation_function="NONE"),
    "fc-70to3-5rows-relu": lambda: conv_model("FULLY_CONNECTED", (5, 70), (3, 70), (5, 3), per_channel=True,
                                              fused_activation_function="RELU"),
    "fc-325to5": lambda: conv_model("FULLY_CONNECTED", (2, 325), (5, 325), (2, 5), per_channel=True, x_scale=0.02,
                                    y_scale=0.3, fused_activation_function="NONE"),
    **{f"pw-{k}to{n}": (lambda k=k, n=n: conv_model(
        "CONV_2D", (1, 5, 3, k), (n, 1, 1, k), (1, 5, 3, n), per_channel=True, padding="VALID", stride_h=1,
        stride_w=1, dilation_h_factor=1, dilation_w_factor=1, fused_activation_function="NONE"))
       for k, n in ((21, 1), (100, 2), (9, 3), (45, 5))},
    "conv-3x3-to2": lambda: conv_model("CONV_2D", (1, 5, 6, 3), (2, 3, 3, 3), (1, 5, 6, 2), per_channel=True,
                                       padding="SAME", stride_h=1, stride_w=1, dilation_h_factor=1,
                                       dilation_w_factor=1, fused_activation_function="RELU6"),
}


@pytest.mark.parametrize("board", BOARDS)
@pytest.mark.parametrize("name", MODELS)
def test_kernels_bit_exact_on_target(board, name, tmp_path):
    assert_bit_exact_on_target(MODELS[name](), board, tmp_path)


DSP_3X3_MODELS = {   # depthwise3x3_dsp.py's generated assembly: a first block with the left border, looped blocks,
    # last blocks of 1-4 outputs with the right border, clamped or not; the row kinds of padded top and bottom rows
    "dw3x3-13-wide": lambda: depthwise_model((1, 11, 13, 8), (3, 3), (1, 11, 13, 8)),
    "dw3x3-s2-relu6": lambda: depthwise_model((1, 9, 11, 12), (3, 3), (1, 5, 6, 12), "RELU6", stride=2),
    "dw3x3-s2-24-wide": lambda: depthwise_model((1, 5, 24, 8), (3, 3), (1, 3, 12, 8), stride=2),
    "dw3x3-valid-relu": lambda: depthwise_model((1, 7, 10, 4), (3, 3), (1, 5, 8, 4), "RELU", padding="VALID"),
    "dw3x3-260-channels": lambda: depthwise_model((1, 3, 3, 260), (3, 3), (1, 3, 3, 260)),   # stores by offset
    # taller than wide: transposed (columns as rows, stores by offset, rows 4,960 bytes back: SUB's rotated
    # immediate), ReLU's requantization without the sign's term
    "dw3x3-tall-relu": lambda: depthwise_model((1, 25, 5, 40), (3, 3), (1, 25, 5, 40), "RELU"),
    "dw3x3-tall-s2": lambda: depthwise_model((1, 14, 7, 5), (3, 3), (1, 7, 4, 5), stride=2),
    # two rows 4,000 bytes apart: r0 moved on every column, in the row's loop too
    "dw3x3-far-rows": lambda: depthwise_model((1, 6, 40, 50), (3, 3), (1, 3, 20, 50), "RELU", stride=2),
    # rows 2,160 bytes apart, beyond LDRSB's reach of two rows on: transposed, r0 moved on every column
    "dw3x3-far-rows-360": lambda: depthwise_model((1, 5, 6, 360), (3, 3), (1, 5, 6, 360), "RELU6"),
    # a depth multiplier: output channel c reads input channel c / M (VALID, odd sizes, stride 2, transposed)
    "dw3x3-4to8-m2": lambda: depthwise_model((1, 9, 11, 4), (3, 3), (1, 9, 11, 8), multiplier=2),
    "dw3x3-3to9-m3-s2-valid": lambda: depthwise_model((1, 9, 7, 3), (3, 3), (1, 4, 3, 9), "RELU", padding="VALID",
                                                      stride=2, multiplier=3),
    "dw3x3-1to8-s2": lambda: depthwise_model((1, 13, 11, 1), (3, 3), (1, 7, 6, 8), "RELU6", stride=2, multiplier=8),
    "dw3x3-5to10-m2-tall": lambda: depthwise_model((1, 13, 5, 5), (3, 3), (1, 7, 3, 10), stride=2, multiplier=2),
    # ReLU: the channels' shifts scaled to one (SSAT's shift), or (shifts too far apart) each channel's own
    "dw3x3-relu-wide-shifts": lambda: conv_model("DEPTHWISE_CONV_2D", (1, 7, 9, 8), (1, 3, 3, 8), (1, 7, 9, 8),
                                                 per_channel=True, w_scales=np.geomspace(1e-5, 0.02, 8),
                                                 padding="SAME", stride_h=1, stride_w=1, depth_multiplier=1,
                                                 dilation_h_factor=1, dilation_w_factor=1,
                                                 fused_activation_function="RELU"),
    "dw3x3-s2x1": lambda: conv_model("DEPTHWISE_CONV_2D", (1, 7, 9, 8), (1, 3, 3, 8), (1, 4, 9, 8), per_channel=True,
                                     padding="SAME", stride_h=2, stride_w=1, depth_multiplier=1, dilation_h_factor=1,
                                     dilation_w_factor=1, fused_activation_function="NONE"),
}


@pytest.mark.parametrize("op, activation", [("ADD", "NONE"), ("SUB", "RELU6")])
def test_add_s8_on_the_cortex_m7(op, activation, tmp_path):
    """mtk_add_s8.h's SMMLAR and SSAT on the Cortex-M7 (the other cores: MODELS), an odd element count."""
    assert_bit_exact_on_target(add_model((1, 9, 7, 5), activation, op=op), "mps2/an500", tmp_path)


def test_softmax_of_1001_classes_on_the_cortex_m7(tmp_path):
    """An ImageNet head's SOFTMAX: each row's outputs of every exp table entry computed once, then looked up."""
    rng = np.random.default_rng(5)
    samples = [[rng.integers(-128, 100, size=(1, 1001)).astype(np.int8)] for _ in range(2)]
    model = single_op_model("SOFTMAX", [((1, 1001), 0.1, -20)], ((1, 1001), 1 / 256, -128), beta=1.0)
    assert_bit_exact_on_target(model, "mps2/an500", tmp_path, samples)


@pytest.mark.parametrize("board", ["mps2/an386", "mps2/an500", "mps2/an505"])
@pytest.mark.parametrize("seed", range(4))
def test_few_channel_pointwise_bit_exact_on_dsp_cores(board, seed, tmp_path):
    """Random 1x1 convs of 1 to 3 channels (harness.few_channel_pointwise): 2x2/s16's assembly on each DSP core."""
    assert_bit_exact_on_target(few_channel_pointwise(seed), board, tmp_path)


@pytest.mark.parametrize("board", ["mps2/an386", "mps2/an500", "mps2/an505"])
@pytest.mark.parametrize("seed", [0, 4, 5])   # 5, 7 and 6 channels
def test_few_channel_fully_connected_bit_exact_on_dsp_cores(board, seed, tmp_path):
    """Random fully connected layers of 1-3 or 5-7 channels (harness.few_channel_fc): 1x4/s16's assembly and its
    tails on each DSP core."""
    assert_bit_exact_on_target(few_channel_fc(seed), board, tmp_path)


@pytest.mark.parametrize("board", ["mps2/an386", "mps2/an500", "mps2/an505"])
@pytest.mark.parametrize("name", DSP_3X3_MODELS)
def test_dsp_3x3_depthwise_bit_exact_on_target(board, name, tmp_path):
    model = DSP_3X3_MODELS[name]()
    (tmp_path / "m.tflite").write_bytes(model)
    [data] = [d for d in prepare_ops(read_model(tmp_path / "m.tflite"), get_cpu("cortex-m4"))]
    assert DEPTHWISE_KERNELS.variants(data)[0].kernel == "dsp-3x3"
    assert_bit_exact_on_target(model, board, tmp_path)


@st.composite
def dsp_3x3_layers(draw) -> bytes:
    """A 3x3 depthwise layer depthwise3x3_dsp.py takes: rows up to 2 loop passes long or short (straight code),
    taller than wide (transposed) or not, strides 1-2, SAME or VALID, any activation, multiplier 1-3."""
    stride = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    padding = draw(st.sampled_from(["SAME", "VALID"]))
    in_h, in_w = draw(st.integers(3, 12)), draw(st.integers(3, 21 * stride[1]))
    if draw(st.booleans()):
        in_h, in_w, stride = in_w, in_h, stride[::-1]
    out_hw = [(n + s - 1) // s if padding == "SAME" else (n - 3) // s + 1 for n, s in zip((in_h, in_w), stride)]
    channels = draw(st.integers(2, 19))   # one channel: a convolution (the GEMM)
    multiplier = draw(st.integers(1, 3))
    activation = draw(st.sampled_from(["NONE", "RELU", "RELU6"]))
    out_c = channels * multiplier
    return conv_model("DEPTHWISE_CONV_2D", (1, in_h, in_w, channels), (1, 3, 3, out_c), (1, *out_hw, out_c),
                      per_channel=True, padding=padding, stride_h=stride[0], stride_w=stride[1],
                      depth_multiplier=multiplier,
                      dilation_h_factor=1, dilation_w_factor=1, fused_activation_function=activation,
                      seed=draw(st.integers(0, 1000)))


@pytest.mark.parametrize("board", ["mps2/an386", "mps2/an500", "mps2/an505"])
def test_dsp_3x3_depthwise_bit_exact_on_random_layers(board, tmp_path_factory):
    @settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                    HealthCheck.too_slow])
    @given(model=dsp_3x3_layers())
    def check(model):
        work = tmp_path_factory.mktemp("dw3x3")
        (work / "m.tflite").write_bytes(model)
        [data] = prepare_ops(read_model(work / "m.tflite"), get_cpu("cortex-m4"))
        assert DEPTHWISE_KERNELS.variants(data)[0].kernel == "dsp-3x3"
        assert_bit_exact_on_target(model, board, work)
    check()


def one_channel_chain() -> bytes:
    """A 1 -> 8 3x3 depthwise (dsp-3x3's with a multiplier of 8), a 3x3 conv and a classifier: a chain tiling bands."""
    d = modelgen.Draw(np.random.default_rng(0))
    net = modelgen.Net("mtk test 1->8 depthwise tiled")
    x = net.model_input((1, 40, 24, 1), modelgen.activation_quant(d))
    x = modelgen.weighted_sum(net, d, x, "DEPTHWISE_CONV_2D", (1, 3, 3, 8), 3, 9, (1, 20, 12, 8), padding="SAME",
                              stride_h=2, stride_w=2, depth_multiplier=8, bias_optional=False)
    x = modelgen.weighted_sum(net, d, x, "CONV_2D", (16, 3, 3, 8), 0, 72, (1, 20, 12, 16), padding="SAME")
    return net.build(modelgen.fully_connected(net, d, modelgen.flatten(net, d, x)))


def test_a_tiled_one_channel_depthwise_bit_exact_on_target(tmp_path):
    """Under a RAM bound only a tiled plan meets (codegen/tiling.py), bands around the 1 -> 8 layer."""
    from mtk.compiler import compile_model
    model = one_channel_chain()
    (tmp_path / "m.tflite").write_bytes(model)
    untiled = compile_model(tmp_path / "m.tflite", tmp_path / "untiled", board="mps2/an386").arena_bytes
    assert assert_bit_exact_on_target(model, "mps2/an386", tmp_path, random_samples(model, 1),
                                      max_ram=untiled - 1) < untiled


def deep_fc_model(depth: int, units: int, activation: str, seed: int = 0, per_channel: bool = False) -> bytes:
    """FULLY_CONNECTED of one row: DSP cores' 1x4/fused (per-channel weight scales: its _pc kernels); a row deeper than
    gemm.CHUNK a chunk at a time for the arena, mtk_gemm_1x4_fused_chunk_s8 keeping the quads' partial sums between
    chunks."""
    d = modelgen.Draw(np.random.default_rng(seed))
    net = modelgen.Net("mtk test deep FULLY_CONNECTED")
    x = net.model_input((1, depth), modelgen.activation_quant(d))
    return net.build(modelgen.weighted_sum(net, d, x, "FULLY_CONNECTED", (units, depth), 0, depth, (1, units),
                                           per_channel=per_channel, bias_optional=False, activation=activation))


def one_pixel_conv(in_c: int, activation: str) -> bytes:
    """CONV_2D 3x3 VALID over 3x3 pixels: one row of im2col taps (in_c a multiple of 4: packed a kernel row at a time,
    chunked) or of gathered patches, for the one-row GEMM, packed before it is called."""
    return conv_model("CONV_2D", (1, 3, 3, in_c), (6, 3, 3, in_c), (1, 1, 1, 6), per_channel=False, padding="VALID",
                      stride_h=1, stride_w=1, dilation_h_factor=1, dilation_w_factor=1,
                      fused_activation_function=activation)


ONE_ROW_FUSED_MODELS = {   # DSP's 1x4/fused: groups of 4 values in pairs, an odd one first; partial last chunks and
    # channel quads (their outputs in C; 8 channels or more: 5-7 take 1x4/s16). The Cortex-M3's 1x8/s8 (its 8-channel tiles in assembly, a narrow last tile
    # of 5, 6, 2, 1 or 7 channels in C; a partial last group of 0 to 3 values) and, for the one-pixel convs, 1x8/int8
    "fc-3x8": lambda: deep_fc_model(3, 8, "NONE"),   # one group: no pair
    "fc-604x13-chunks": lambda: deep_fc_model(604, 13, "NONE"),   # chunks of 64, 64 and 23 groups
    "fc-1000x10-chunks-relu": lambda: deep_fc_model(1000, 10, "RELU"),   # a clamped range, in assembly
    "fc-per-channel-37x10": lambda: deep_fc_model(37, 10, "NONE", per_channel=True),
    "fc-per-channel-70x9-relu": lambda: deep_fc_model(70, 9, "RELU", per_channel=True),
    "fc-per-channel-604x11-chunks": lambda: deep_fc_model(604, 11, "NONE", per_channel=True),
    "fc-151x16-relu": lambda: deep_fc_model(151, 16, "RELU"),
    # the Cortex-M7's and M33's loop (mtk_fused_row_dual.h): one pair (its last, no pass), an odd group and one pair,
    # a whole pass and the last pair, a partial group; chunks of 64, 64 and 1 group
    "fc-8x4": lambda: deep_fc_model(8, 4, "NONE"),
    "fc-per-channel-11x9-relu": lambda: deep_fc_model(11, 9, "RELU", per_channel=True),
    "fc-66x8": lambda: deep_fc_model(66, 8, "NONE"),
    "fc-per-channel-72x12": lambda: deep_fc_model(72, 12, "NONE", per_channel=True),
    "fc-515x4-chunks-relu": lambda: deep_fc_model(515, 4, "RELU"),
    # the Cortex-M33's quads in pairs (mtk_fused_octets_m33.h): 5 pairs, three passes entered 15 groups in; a clamped
    # range, 3 pairs, three passes entered 8 groups in; 2 pairs in chunks of 64, 64 and 32 groups, clamped at the last;
    # saturated with the layer's m, C, e (the pairs' 8 outputs at once; without the sign term: test_gemm_dsp's
    # fc-pairs-relu)
    "fc-per-channel-132x40": lambda: deep_fc_model(132, 40, "NONE", per_channel=True),
    "fc-256x16": lambda: deep_fc_model(256, 16, "NONE", seed=3),
    "fc-160x24-relu6": lambda: deep_fc_model(160, 24, "RELU6", seed=1),
    "fc-per-channel-640x16-chunks-relu6": lambda: deep_fc_model(640, 16, "RELU6", seed=2, per_channel=True),
    # DSP cores' 1x4/s16 below a quad: 1 and 2 channels in assembly (pairs of groups, an odd group and a partial one
    # in C), 3 in C; and of 5-7 (the Cortex-M3's 1x8/s8: a narrow tile of 6 or 7)
    "fc-1000x6-chunks-relu": lambda: deep_fc_model(1000, 6, "RELU"),
    "fc-per-channel-604x7-chunks": lambda: deep_fc_model(604, 7, "NONE", per_channel=True),
    "fc-1000x1": lambda: deep_fc_model(1000, 1, "NONE"),
    "fc-37x2-relu": lambda: deep_fc_model(37, 2, "RELU"),
    "fc-per-channel-150x3": lambda: deep_fc_model(150, 3, "NONE", per_channel=True),
    "conv-one-pixel-taps-chunks": lambda: one_pixel_conv(8, "NONE"),
    "conv-one-pixel-gather-relu": lambda: one_pixel_conv(3, "RELU"),
}


@pytest.mark.parametrize("board", ["mps2/an386", "mps2/an385", "mps2/an500", "mps2/an505"])
@pytest.mark.parametrize("name", ONE_ROW_FUSED_MODELS)
def test_one_row_gemm_bit_exact_on_target(name, board, tmp_path):
    assert_bit_exact_on_target(ONE_ROW_FUSED_MODELS[name](), board, tmp_path)


@pytest.mark.parametrize("name", HELIUM_MODELS)
def test_helium_kernels_bit_exact_on_target(name, tmp_path):
    assert_bit_exact_on_target(HELIUM_MODELS[name](), "mps3/corstone300/an547", tmp_path)


@pytest.mark.parametrize("seed", range(6))
def test_helium_mul_of_random_shapes_bit_exact_on_target(seed, tmp_path):
    """mtk_mul_mve.h on modelgen's random MUL models: any rank and shape, dims broadcast, a constant operand or a
    second input, random scales and zero points, fused activations."""
    model = modelgen.generate("MUL", modelgen.Draw(np.random.default_rng([27, seed])))
    assert_bit_exact_on_target(model, "mps3/corstone300/an547", tmp_path)


def extreme_layer(op: str, x_shape: tuple[int, ...], w: np.ndarray, y_shape: tuple[int, ...], axis: int,
                  **options) -> bytes:
    """One `op` layer with the weights w as they are, no bias, scales small enough that sums of products at the int8
    extremes still move the outputs."""
    channels = w.shape[axis]
    b = ModelBuilder(description=f"mtk test {op} extremes")
    x = b.tensor("x", x_shape, "int8", scale=0.5, zero_point=0)
    w_t = b.const("w", w, scale=np.full(channels, 1e-4), zero_point=np.zeros(channels, np.int64), axis=axis)
    bias = b.const("b", np.zeros(channels, np.int32), scale=np.full(channels, 5e-5),
                   zero_point=np.zeros(channels, np.int64), axis=0)
    y = b.tensor("y", y_shape, "int8", scale=0.2, zero_point=0)
    b.op(op, [x, w_t, bias], [y], stride_h=1, stride_w=1, dilation_h_factor=1, dilation_w_factor=1,
         fused_activation_function="NONE", **options)
    b.inputs([x])
    b.outputs([y])
    return b.build()


def extreme_depthwise_model(w: np.ndarray) -> bytes:
    """DEPTHWISE_CONV_2D (3x3, 19 channels) over a 4x4 input with the weights w [1, 3, 3, 19] at the int8 extremes."""
    return extreme_layer("DEPTHWISE_CONV_2D", (1, 4, 4, 19), w, (1, 4, 4, 19), 3, padding="SAME", depth_multiplier=1)


@pytest.mark.parametrize("both_minus_128", [False, True], ids=["paired", "unpaired"])
def test_helium_depthwise_at_the_int16_bound_of_paired_taps(both_minus_128, tmp_path):
    """mtk_depthwise_mve.h adds two taps' int16 products before widening: exact at the extremes (inputs all -128
    or all 127, weights -128 and -127) and, where a channel has -128 as both weights of a pair (32768 would wrap),
    not paired at all (depthwise_mve.pairs)."""
    w = np.where(np.arange(9)[:, None] % 2 == 0, -128, -127) * np.ones((9, 19), np.int64)
    if both_minus_128:
        w[1, 5] = -128
    model = extreme_depthwise_model(w.reshape(1, 3, 3, 19).astype(np.int8))
    samples = [[np.full((1, 4, 4, 19), v, np.int8)] for v in (-128, 127)]
    assert_bit_exact_on_target(model, "mps3/corstone300/an547", tmp_path, samples)


def test_v6m_paired_rows_at_the_int8_extremes(tmp_path):
    """mtk_dot_2x2_v6m multiplies a weight by both rows' values in one word and adds two values' products before
    splitting the halves: exact at the extremes (-128 by -128 twice: 32768, held negated in int16), rows of
    opposite signs, channels of -128, of 127 and of both."""
    weights = np.stack([np.full(16, -128), np.full(16, 127), np.tile([-128, 127], 8), np.tile([127, -128], 8),
                        np.tile([-128, -128, 127, 127], 4), np.full(16, -128)]).astype(np.int8).reshape(6, 1, 1, 16)
    model = extreme_layer("CONV_2D", (1, 3, 5, 16), weights, (1, 3, 5, 6), 0, padding="VALID")
    rng = np.random.default_rng(0)
    samples = [[np.full((1, 3, 5, 16), v, np.int8)] for v in (-128, 127)] + \
        [[rng.choice(np.array([-128, 127], np.int8), (1, 3, 5, 16))]]
    assert_bit_exact_on_target(model, "microbit", tmp_path, samples)


@pytest.mark.parametrize("op", ["AVERAGE_POOL_2D", "MAX_POOL_2D"])
def test_helium_pools_over_more_than_256_taps(op, tmp_path):
    """mtk_pool_mve.h: 17x17 windows (289 taps, fewer at the borders) over inputs near the int8 limits, whose
    int16 sums alone would overflow."""
    model = single_op_model(op, [((1, 20, 18, 12), 0.1, -7)], ((1, 7, 6, 12), 0.1, -7), filter_height=17,
                            filter_width=17, stride_h=3, stride_w=3, padding="SAME")
    rng = np.random.default_rng(0)
    samples = [[rng.integers(lo, hi, (1, 20, 18, 12)).astype(np.int8)] for lo, hi in ((120, 128), (-128, -120))]
    assert_bit_exact_on_target(model, "mps3/corstone300/an547", tmp_path, samples)


def two_pools_model(dtype: str, shape: tuple[int, int, int], average: dict, maximum: dict) -> bytes:
    """An AVERAGE_POOL_2D and a MAX_POOL_2D of one input, both model outputs."""
    b = ModelBuilder(description=f"mtk test pools {dtype}")
    scale, zero_point = (0.0005, 0) if dtype == "int16" else (0.1, -7)
    x = b.tensor("x", (1, *shape), dtype, scale=scale, zero_point=zero_point)
    outputs = []
    for op, window in (("AVERAGE_POOL_2D", average), ("MAX_POOL_2D", maximum)):
        out = [-(-n // s) for n, s in zip(shape[:2], (window["stride_h"], window["stride_w"]))]   # SAME
        y = b.tensor(op.lower(), (1, *out, shape[2]), dtype, scale=scale, zero_point=zero_point)
        b.op(op, [x], [y], padding="SAME", **window)
        outputs.append(y)
    b.inputs([x])
    b.outputs(outputs)
    return b.build()


POOL_MODELS = {   # mtk_pool.h (DSP: SXTAB16 / SSUB8 / SSUB16 tap loops in assembly; M3: int8 lanes compared within
    # the word, int16 channel pairs in two registers), mtk_pool_mve.h's int16; int16 max clamped at both ends
    "int8": lambda: two_pools_model("int8", (18, 17, 7), dict(filter_height=17, filter_width=17, stride_h=3,
                                                               stride_w=3, fused_activation_function="NONE"),
                                    dict(filter_height=3, filter_width=2, stride_h=2, stride_w=2,
                                         fused_activation_function="RELU_N1_TO_1")),
    "int16": lambda: two_pools_model("int16", (7, 6, 11), dict(filter_height=3, filter_width=2, stride_h=2,
                                                                stride_w=2, fused_activation_function="RELU6"),
                                     dict(filter_height=3, filter_width=3, stride_h=1, stride_w=2,
                                          fused_activation_function="RELU_N1_TO_1")),
}


@pytest.mark.parametrize("board, dtype", [("mps2/an386", "int8"), ("mps2/an386", "int16"), ("mps2/an385", "int8"),
                                          ("mps2/an385", "int16"), ("mps3/corstone300/an547", "int16"),
                                          ("mps2/an500", "int8"), ("mps2/an505", "int16")])
def test_pools_bit_exact_on_target(board, dtype, tmp_path):
    """Pools in one call: 4-channel words and the channels left over, 289-tap windows (int8 lanes flushed), inputs
    at the type's limits."""
    model = POOL_MODELS[dtype]()
    shape = (1, 18, 17, 7) if dtype == "int8" else (1, 7, 6, 11)
    info = np.iinfo(dtype)
    rng = np.random.default_rng(1)
    samples = [[np.full(shape, info.max, dtype)], [rng.integers(info.min, info.max + 1, shape).astype(dtype)],
               [rng.integers(info.min, info.min + 8, shape).astype(dtype)]]
    assert_bit_exact_on_target(model, board, tmp_path, samples)


def test_global_average_pool_whose_tap_count_equals_its_channels(tmp_path):
    """IC's last pool (8x8 over 8x8x64): the tap loop's count and step are both 64, and gcc put them in one
    register while the count was an in/out operand without early clobber."""
    model = single_op_model("AVERAGE_POOL_2D", [((1, 8, 8, 64), 0.1, -128)], ((1, 1, 1, 64), 0.1, -128),
                            filter_height=8, filter_width=8, stride_h=8, stride_w=8, padding="VALID")
    assert_bit_exact_on_target(model, "mps2/an386", tmp_path)


@pytest.mark.parametrize("board", BOARDS)
@pytest.mark.parametrize("family", ["DEPTHWISE_CONV_2D_ANY", "CONV_2D_FIRST_LAYER"])
def test_random_layer_shapes_bit_exact_on_target(board, family, tmp_path_factory):
    """A few of modelgen's new layer shapes (tests/compile/test_ops_shapes.py) per board."""
    @settings(max_examples=2, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                    HealthCheck.too_slow])
    @given(model=modelgen.strategies[family])
    def check(model):
        assert_bit_exact_on_target(model, board, tmp_path_factory.mktemp(family.lower()))
    check()


@pytest.mark.parametrize("family", ["CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "AVERAGE_POOL_2D",
                                    "MAX_POOL_2D", "TRANSPOSE_CONV"])
def test_helium_kernels_bit_exact_on_random_shapes(family, tmp_path_factory):
    """Helium's fused GEMM (gemm_mve.py: depths and channel counts off its 16 and 4, odd row counts; a transpose
    convolution's stride phases on it),
    depthwise (depthwise_mve.py: channels off its 8, borders, strides, dilations) and pooling
    (mtk_pool_mve.h: windows clipped at the borders) on a few random layers."""
    @settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                    HealthCheck.too_slow])
    @given(model=modelgen.strategies[family])
    def check(model):
        assert_bit_exact_on_target(model, "mps3/corstone300/an547", tmp_path_factory.mktemp(family.lower()))
    check()


@pytest.mark.parametrize("board, candidates", [("mps3/corstone300/an547", 0), ("mps2/an385", 3)])
def test_tuned_schedules_bit_exact_on_target(board, candidates, tmp_path):
    """`mtk tune` runs every candidate schedule (none on Helium, whose GEMMs have one: the fused
    gemm_mve.py; on the M3 1x4 blocks with paired weights, for conv and fully connected, and for fully
    connected 1x8 and 1x4 blocks of int8 weights over packed rows: 3 builds) and
    requires the untuned build's outputs from each; those are tflite-micro's. (The DSP schedules:
    tests/compile/test_tune.py on mps2/an386.)"""
    model = modelgen.example_models(0)["CHAIN_CNN"]
    path = tmp_path / "model.tflite"
    path.write_bytes(model)
    result = tune_model(path, get_board(board), tmp_path / "tuning.json")
    assert result.builds_measured == candidates
    for expected, got in zip(run_reference_batch(model, result.untuned.inputs), result.untuned.outputs):
        for want, out in zip(expected, got):
            assert np.array_equal(np.asarray(out).reshape(-1), np.asarray(want).reshape(-1))


def test_one_to_n_depthwise_is_tuned_on_target(tmp_path):
    """A depthwise layer with one input channel runs on the GEMM, so `mtk tune` measures its variants
    (a build for each but the default), each build on two different inputs."""
    model = GEMM_MODELS["depthwise-1-to-n"]()
    path = tmp_path / "model.tflite"
    path.write_bytes(model)
    (layer,) = tunable_layers(prepare_ops(read_model(path), get_cpu("cortex-m4")))
    result = tune_model(path, get_board("mps2/an386"), tmp_path / "tuning.json")
    assert len(layer.variants) >= 3 and result.builds_measured == len(layer.variants) - 1
    assert [c.key.split()[0] for c in result.layers] == ["DEPTHWISE_CONV_2D"]
    assert len(result.untuned.inputs) == 2 and len(result.untuned.sample_layers) == 2
    assert not np.array_equal(*(sample[0] for sample in result.untuned.inputs))
    for expected, got in zip(run_reference_batch(model, result.tuned.inputs), result.tuned.outputs):
        for want, out in zip(expected, got):
            assert np.array_equal(np.asarray(out).reshape(-1), np.asarray(want).reshape(-1))


REQUANT_PROBE = r"""
#include <stdint.h>
#include "mtk_fixedpoint.h"
extern uint32_t __stack_top[];
/* TFLite's MultiplyByQuantizedMultiplier(acc, mult, -e) as mtk_requant_rshift folds it, through a 64-bit multiply
 * (libgcc's on ARMv6-M), against the header's 16-bit halves */
static int32_t reference(int32_t acc, int32_t mult, int32_t e) {
  int64_t z = (int64_t)acc * mult + ((int64_t)1 << 30) + ((int64_t)1 << (30 + e)) - (acc < 0 ? (int64_t)1 << 31 : 0);
  return (int32_t)(z >> (31 + e));
}
static void semihosting_exit(uint32_t status) {
  uint32_t block[2] = {0x20026u, status};   /* ADP_Stopped_ApplicationExit, status */
  register uint32_t op __asm__("r0") = 0x20u;
  register uint32_t* arg __asm__("r1") = block;
  __asm__ volatile("bkpt 0xab" : : "r"(op), "r"(arg) : "memory");
  for (;;) {}
}
static void reset(void) {
  static const int32_t edges[] = {0, 1, -1, 65535, 65536, -65536, -65537, INT32_MAX, INT32_MIN, INT32_MIN + 1};
  uint32_t s = 12345u, wrong = 0;
  for (int32_t i = 0; i < 20000; ++i) {
    s = s * 1664525u + 1013904223u;
    int32_t acc = i < 10 * 20 ? edges[i % 10] : (int32_t)s >> (s & 15);
    s = s * 1664525u + 1013904223u;
    int32_t mult = i % 3 == 0 ? INT32_MAX : (int32_t)((s >> 1) | 0x40000000u), e = 1 + i % 20;
    uint64_t rounding = ((uint64_t)1 << 30) + ((uint64_t)1 << (30 + e));
    wrong += mtk_requant_rshift(acc, mult, (int32_t)(uint32_t)rounding, (int32_t)(rounding >> 32), e - 1)
             != reference(acc, mult, e);
  }
  semihosting_exit(wrong > 100 ? 100 : wrong);
}
static void fault(void) { semihosting_exit(101); }
__attribute__((section(".vectors"), used)) static void (*const vectors[4])(void) = {
    (void (*)(void))__stack_top, reset, fault, fault};
"""
REQUANT_LINKER = """MEMORY { FLASH (rx) : ORIGIN = 0, LENGTH = 256K  RAM (rwx) : ORIGIN = 0x20000000, LENGTH = 16K }
SECTIONS { .text : { KEEP(*(.vectors)) *(.text*) *(.rodata*) } > FLASH
           .bss (NOLOAD) : { *(.bss*) *(COMMON) . = ALIGN(8); . += 2048; __stack_top = .; } > RAM }
"""


def test_requantization_by_16_bit_halves_on_cortex_m0(tmp_path):
    """mtk_fixedpoint.h's ARMv6-M assembly (no long multiply) against the 64-bit formula, edge values included,
    on QEMU's micro:bit: the model tests reach only the accumulators their layers make."""
    (tmp_path / "probe.c").write_text(REQUANT_PROBE)
    (tmp_path / "probe.ld").write_text(REQUANT_LINKER)
    subprocess.run(["arm-none-eabi-gcc", "-mcpu=cortex-m0", "-mthumb", "-O2", "-Wall", "-Werror", "-nostartfiles",
                    "-I", str(C_DIR / "common"), "-T", str(tmp_path / "probe.ld"), str(tmp_path / "probe.c"), "-lgcc",
                    "-o", str(tmp_path / "probe.elf")], check=True)
    done = subprocess.run(["qemu-system-arm", "-M", "microbit", "-kernel", str(tmp_path / "probe.elf"), "-display",
                           "none", "-monitor", "none", "-semihosting-config", "enable=on,target=native"], timeout=60)
    assert done.returncode == 0, f"{done.returncode} of 20,000 requantizations differ (101: a fault)"
