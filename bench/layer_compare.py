"""mtk against CMSIS-NN layer by layer (the bound: no layer slower than CMSIS-NN), in QEMU with exact instruction counts.

    python bench/layer_compare.py                                   # mtk alone, every layer, an386 an547 an385
    python bench/layer_compare.py --cmsis-nn ~/src/CMSIS-NN         # beside CMSIS-NN's wrappers
    python bench/layer_compare.py --board mps2/an386 --layer conv-1ch-3x3-s2 --random 4 --json out.json
    python bench/layer_compare.py --cmsis-nn DIR --only-random --random 0 --pointwise 24 --seed 7   # 1x1 convs alone
    python bench/layer_compare.py --from-json m4.json m7.json      # their table and summaries again, no run

With CMSIS-NN, a summary line per board ends the table: its layers, how many take at most CMSIS-NN's estimated
cycles, the highest ratios (--worst N of them, and every one above 1.0).

Each layer is one CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED, AVERAGE_POOL_2D, MAX_POOL_2D, ADD, MUL or SOFTMAX op
(int8, or 16x8: int16 activations, int8 weights, int64 bias; SOFTMAX int8 only) in a model of its own made with
tests/modelgen.py and tests/modelgen16x8.py (random weights, per-channel scales, fused RELU); the built-in list holds
the first-layer shapes and layers of public models (TFLM's person_detect and micro_speech, magic_wand, MobileNetV2,
SEANet's 16x8 convolutions, the MLPerf Tiny models' and MobileNetV2's softmax); random layers of --seed are added:
--random's, the ops in turn, and --pointwise's, 1x1 convolutions of MobileNets' feature maps and channel counts (which
CMSIS-NN's wrapper takes to arm_convolve_1x1_s8_fast at stride 1, arm_convolve_1x1_s8 at stride 2). mtk's figure is
`mtk bench`'s instructions per inference of that model (bench/peer_compare.py's measure: outputs checked bit for bit
against tflite-micro too). CMSIS-NN's is the instructions of one call of the CMSIS-NN function TFLM's cmsis_nn kernel
calls for the same shapes (arm_convolve_wrapper_s8/_s16, arm_depthwise_conv_wrapper_s8/_s16,
arm_fully_connected_wrapper_s8, arm_fully_connected_s16, arm_avgpool_s8/_s16, arm_max_pool_s8/_s16,
arm_elementwise_add_s8/_s16 and arm_elementwise_mul_s8/_s16: ADD and MUL of equal shapes, as TFLM's broadcast ADD and
MUL do not call CMSIS-NN; arm_softmax_s8; bench/cmsis_nn_layer.c), random data, its scratch sized by get_buffer_size
as TFLM's cmsis_nn kernels ask for it, built with the peer's flags (arm-none-eabi-gcc -O2 and the board's -mcpu:
-mcpu=cortex-m55 makes CMSIS-NN take its Helium/MVE paths, cortex-m4 its DSP ones) and mtk's bare-metal startup and
port, counted as mtk's firmware counts (SysTick under QEMU -icount shift=0). TFLM's own per-op overhead (Eval, tensor
look-ups) is not in CMSIS-NN's figure: the comparison is kernel against kernel, a stricter one than against TFLM.

CMSIS-NN is not shipped with mtk and this script fetches nothing: pass a checkout of it,
    git clone https://github.com/ARM-software/CMSIS-NN ~/src/CMSIS-NN
(the CMSIS-NN that TFLM pins is what TFLM's downloads put in
tensorflow/lite/micro/tools/make/downloads/cmsis_nn). Its int8 sources (Source/ConvolutionFunctions,
FullyConnectedFunctions, NNSupportFunctions, PoolingFunctions, BasicMathFunctions, SoftmaxFunctions,
TransposeFunctions) are compiled once per core into --work (default a temporary folder).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import tflite

from baremetal_harness import render_board_files, run_measured
from peer_compare import measure

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import modelgen  # noqa: E402
import modelgen16x8  # noqa: E402
from mtk.boards import Board, get_board  # noqa: E402
from mtk.budget import DEFAULT_STACK_BYTES  # noqa: E402
from mtk.compiler import compile_model  # noqa: E402
from mtk.errors import ModelError, MtkError, TargetError  # noqa: E402
from mtk.fsutil import check_output_file_first, write_output_text  # noqa: E402
from mtk.ops.softmax import softmax_params  # noqa: E402
from mtk.paths import BAREMETAL_APP, FIRMWARE  # noqa: E402

BOARDS = ("mps2/an386", "mps3/corstone300/an547", "mps2/an385")
HARNESS = Path(__file__).resolve().parent / "cmsis_nn_layer.c"
CMSIS_NN_SOURCES = ("ConvolutionFunctions", "FullyConnectedFunctions", "NNSupportFunctions", "PoolingFunctions",
                    "BasicMathFunctions", "SoftmaxFunctions", "TransposeFunctions")
TIMEOUT_S = 120.0
# the CMSIS-NN functions bench/cmsis_nn_layer.c times: the cycle model measures the call of whichever it holds
# The first of these the harness holds is the call measured: a caller before the functions it may call (on Helium
# cores arm_depthwise_conv_wrapper_s8 calls arm_convolve_wrapper_s8)
CMSIS_NN_CALLS = ("arm_fully_connected_s16", "arm_fully_connected_wrapper_s8", "arm_depthwise_conv_wrapper_s16",
                  "arm_depthwise_conv_wrapper_s8", "arm_convolve_wrapper_s16", "arm_convolve_wrapper_s8",
                  "arm_avgpool_s16", "arm_avgpool_s8", "arm_max_pool_s16", "arm_max_pool_s8", "arm_elementwise_add_s16",
                  "arm_elementwise_add_s8", "arm_elementwise_mul_s16", "arm_elementwise_mul_s8", "arm_softmax_s8",
                  "arm_transpose_conv_wrapper_s8")
ACTIVATION = "RELU"   # modelgen's random one may clamp every output to one value: a constant, nothing to measure


WEIGHTED = ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED")   # the random layers' (TRANSPOSE_CONV: built in)
POOLS = ("AVERAGE_POOL_2D", "MAX_POOL_2D")
ELEMENTWISE = ("ADD", "MUL")
SHORT_NAMES = {"CONV_2D": "conv", "DEPTHWISE_CONV_2D": "dw", "FULLY_CONNECTED": "fc", "AVERAGE_POOL_2D": "avgpool",
               "MAX_POOL_2D": "maxpool", "ADD": "add", "MUL": "mul"}
# SOFTMAX's input scale, KWS's and IC's logits' (1/8..1/6; VWW's and MobileNetV2's are below 1/64): a random row
# holds values more than 31/scale below its maximum (diff_min), whose exp CMSIS-NN skips
SOFTMAX_INPUT_LOG2_SCALE = (-3.0, -2.5)
# pointwise_layers': MobileNets' feature maps (of 224×224 and 96×96 inputs), few or many channels, and at most 2M MACs
# (MobileNetV2's 24×24 16→96 expansion, twice) so that a layer runs in seconds under QEMU
POINTWISE_SIZES = (3, 5, 6, 7, 10, 12, 14, 20, 24, 28, 40, 48, 56)
POINTWISE_CHANNELS = ((3, 33), (33, 257))
POINTWISE_MACS = 2_000_000
POINTWISE_STREAM = 11   # the pointwise draws' stream of a seed: (seed, 11)


@dataclass(frozen=True)
class Layer:
    """One op's shapes: NHWC input (batch 1), output channels (depthwise: input channels × multiplier; pools, ADD,
    MUL and SOFTMAX: the input's), window (pools: the pool's), activation type (int8, or int16: 16x8 with int64
    bias)."""
    name: str
    op: str                          # CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED, TRANSPOSE_CONV, pools, ADD, MUL, SOFTMAX
    input: tuple[int, int, int]      # H, W, C (FULLY_CONNECTED: 1, 1, depth; SOFTMAX: rows H·W of C)
    out_channels: int
    kernel: tuple[int, int] = (1, 1)
    stride: tuple[int, int] = (1, 1)
    dilation: tuple[int, int] = (1, 1)
    padding: str = "SAME"
    dtype: str = "int8"

    def window(self, axis: int) -> tuple[int, int]:
        """(output size, TFLM's padding before) along H (0) or W (1): ComputePaddingHeightWidth (TRANSPOSE_CONV: of
        the convolution its output would go through, as TFLM's transpose_conv.cc pads)."""
        out = self.transposed_size(axis) if self.op == "TRANSPOSE_CONV" else None
        size, k, s, d = out or self.input[axis], self.kernel[axis], self.stride[axis], self.dilation[axis]
        effective = (k - 1) * d + 1
        forward = -(-size // s) if self.padding == "SAME" else (size - effective) // s + 1
        return out or forward, max(((forward - 1) * s + effective - size) // 2, 0)

    def padding_after(self, axis: int) -> int:
        """TFLM's padding after along H (0) or W (1): the padding before and its offset (CMSIS-NN's padding_offsets
        of a TRANSPOSE_CONV)."""
        size, k, s, d = self.input[axis], self.kernel[axis], self.stride[axis], self.dilation[axis]
        out, before = self.window(axis)
        if self.op == "TRANSPOSE_CONV":
            size, out = out, size
        return max((out - 1) * s + (k - 1) * d + 1 - size, 0) - before

    def transposed_size(self, axis: int) -> int:
        """A TRANSPOSE_CONV's output size along H (0) or W (1), as TensorFlow's conv2d_transpose makes it."""
        size, k, s = self.input[axis], self.kernel[axis], self.stride[axis]
        return size * s if self.padding == "SAME" else (size - 1) * s + k

    @property
    def output(self) -> tuple[int, int, int]:
        return self.window(0)[0], self.window(1)[0], self.out_channels

    @property
    def flat(self) -> bool:
        """The model's input is (1, depth): a FULLY_CONNECTED, or a SOFTMAX of one row (a classifier's)."""
        return self.op == "FULLY_CONNECTED" or (self.op == "SOFTMAX" and self.input[:2] == (1, 1))

    @property
    def macs(self) -> int:
        """Multiply-accumulates; pools: window taps read, ADD, MUL, SOFTMAX: elements."""
        taps = self.kernel[0] * self.kernel[1] * (self.input[2] if self.op in ("CONV_2D", "FULLY_CONNECTED") else 1)
        if self.op == "TRANSPOSE_CONV":   # every input value times every weight of its channel
            return self.input[0] * self.input[1] * self.input[2] * taps * self.out_channels
        h, w, c = self.output
        return h * w * c * taps


def pool(name: str, op: str, input: tuple[int, int, int], kernel: tuple[int, int], stride: tuple[int, int],
         padding: str = "VALID", dtype: str = "int8") -> Layer:
    return Layer(name, op, input, input[2], kernel, stride, padding=padding, dtype=dtype)


def elementwise(name: str, op: str, shape: tuple[int, int, int], dtype: str = "int8") -> Layer:
    """ADD, MUL or SOFTMAX (over the last axis) of `shape`."""
    return Layer(name, op, shape, shape[2], dtype=dtype)


LAYERS = (
    # 1- and 3-channel first layers, TFLM's micro_speech depthwise, 10×8 / 10×4 kernels
    Layer("conv-1ch-3x3-s2", "CONV_2D", (96, 96, 1), 8, (3, 3), (2, 2)),
    Layer("conv-3ch-3x3-s2", "CONV_2D", (96, 96, 3), 8, (3, 3), (2, 2)),
    Layer("dw-1to8-10x8-s2", "DEPTHWISE_CONV_2D", (49, 40, 1), 8, (10, 8), (2, 2)),
    Layer("conv-1ch-10x8-s2", "CONV_2D", (49, 40, 1), 8, (10, 8), (2, 2)),
    Layer("conv-1ch-10x4-s2", "CONV_2D", (49, 10, 1), 64, (10, 4), (2, 2)),
    # odd channel counts
    Layer("conv-5to7-3x3", "CONV_2D", (20, 20, 5), 7, (3, 3)),
    Layer("conv-2to13-5x5-valid", "CONV_2D", (24, 24, 2), 13, (5, 5), padding="VALID"),
    Layer("dw-13-3x3", "DEPTHWISE_CONV_2D", (20, 20, 13), 13, (3, 3)),
    Layer("dw-3to9-3x3-s2", "DEPTHWISE_CONV_2D", (24, 24, 3), 9, (3, 3), (2, 2)),
    Layer("dw-67-3x3-s2", "DEPTHWISE_CONV_2D", (24, 24, 67), 67, (3, 3), (2, 2)),
    Layer("pw-13to29", "CONV_2D", (20, 20, 13), 29),
    Layer("fc-123to37", "FULLY_CONNECTED", (1, 1, 123), 37),
    # for scale: channels in 4s (the shared models' kind)
    Layer("conv-16to32-3x3", "CONV_2D", (16, 16, 16), 32, (3, 3)),
    Layer("dw-32-3x3", "DEPTHWISE_CONV_2D", (24, 24, 32), 32, (3, 3)),
    # TFLM's person_detect (MobileNetV1 0.25, 96×96×1; its first layer is a 1→8 depthwise) and micro_speech
    Layer("pd-dw-1to8-3x3-s2", "DEPTHWISE_CONV_2D", (96, 96, 1), 8, (3, 3), (2, 2)),
    Layer("pd-dw-8-3x3", "DEPTHWISE_CONV_2D", (48, 48, 8), 8, (3, 3)),
    Layer("pd-pw-8to16", "CONV_2D", (48, 48, 8), 16),
    Layer("pd-dw-16-3x3-s2", "DEPTHWISE_CONV_2D", (48, 48, 16), 16, (3, 3), (2, 2)),
    Layer("pd-pw-64to128", "CONV_2D", (6, 6, 64), 128),
    Layer("pd-dw-128-3x3", "DEPTHWISE_CONV_2D", (6, 6, 128), 128, (3, 3)),
    Layer("pd-pw-128to256", "CONV_2D", (3, 3, 128), 256),
    Layer("pd-dw-256-3x3", "DEPTHWISE_CONV_2D", (3, 3, 256), 256, (3, 3)),
    pool("pd-avgpool-3x3x256", "AVERAGE_POOL_2D", (3, 3, 256), (3, 3), (2, 2)),
    Layer("pd-head-256to2", "CONV_2D", (1, 1, 256), 2),
    Layer("ms-fc-4000to4", "FULLY_CONNECTED", (1, 1, 4000), 4),
    Layer("ks-fc-64to16", "FULLY_CONNECTED", (1, 1, 64), 16),
    # mtk's digits CNN (models/: 8×8×1 input), small enough for the BBC micro:bit's 16 KB of RAM
    Layer("digits-conv-1to8-3x3", "CONV_2D", (8, 8, 1), 8, (3, 3)),
    pool("digits-maxpool-2x2", "MAX_POOL_2D", (8, 8, 8), (2, 2), (2, 2)),
    Layer("digits-conv-8to16-3x3", "CONV_2D", (4, 4, 8), 16, (3, 3)),
    Layer("digits-fc-256to32", "FULLY_CONNECTED", (1, 1, 256), 32),
    Layer("digits-fc-32to10", "FULLY_CONNECTED", (1, 1, 32), 10),
    # magic_wand (128×3 accelerometer window)
    Layer("mw-conv-1to8-4x3", "CONV_2D", (128, 3, 1), 8, (4, 3)),
    pool("mw-maxpool-3x3", "MAX_POOL_2D", (128, 3, 8), (3, 3), (3, 3)),
    Layer("mw-conv-8to16-4x1", "CONV_2D", (42, 1, 8), 16, (4, 1)),
    pool("mw-maxpool-3x1", "MAX_POOL_2D", (42, 1, 16), (3, 1), (3, 1)),
    Layer("mw-fc-224to16", "FULLY_CONNECTED", (1, 1, 224), 16),
    # MobileNetV2-style (spatial sizes scaled down): 1×1 expand/project of odd widths, residual ADDs
    Layer("mnv2-first-3to32-3x3-s2", "CONV_2D", (48, 48, 3), 32, (3, 3), (2, 2)),
    Layer("mnv2-expand-16to96", "CONV_2D", (24, 24, 16), 96),
    Layer("mnv2-dw-96-3x3-s2", "DEPTHWISE_CONV_2D", (24, 24, 96), 96, (3, 3), (2, 2)),
    Layer("mnv2-project-96to24", "CONV_2D", (12, 12, 96), 24),
    Layer("mnv2-expand-24to144", "CONV_2D", (12, 12, 24), 144),
    Layer("mnv2-dw-144-3x3", "DEPTHWISE_CONV_2D", (12, 12, 144), 144, (3, 3)),
    Layer("mnv2-project-144to24", "CONV_2D", (12, 12, 144), 24),
    Layer("mnv2-dw-144-3x3-valid", "DEPTHWISE_CONV_2D", (14, 14, 144), 144, (3, 3), padding="VALID"),
    Layer("mnv2-project-576to96", "CONV_2D", (7, 7, 576), 96),
    Layer("mnv2-expand-160to960", "CONV_2D", (3, 3, 160), 960),
    elementwise("add-res-12x12x64", "ADD", (12, 12, 64)),
    elementwise("add-mnv2-24x24x24", "ADD", (24, 24, 24)),
    elementwise("add-odd-10x10x13", "ADD", (10, 10, 13)),
    # wider depthwise windows, classifier heads
    Layer("dw-32-5x5", "DEPTHWISE_CONV_2D", (24, 24, 32), 32, (5, 5)),
    Layer("dw-24-5x5-s2", "DEPTHWISE_CONV_2D", (24, 24, 24), 24, (5, 5), (2, 2)),
    Layer("dw-64-7x7", "DEPTHWISE_CONV_2D", (12, 12, 64), 64, (7, 7)),
    Layer("dw-20-7x7-valid", "DEPTHWISE_CONV_2D", (16, 16, 20), 20, (7, 7), padding="VALID"),
    Layer("dw-32-3x3-d2", "DEPTHWISE_CONV_2D", (24, 24, 32), 32, (3, 3), dilation=(2, 2)),
    # depthwise of MobileNetV3, EfficientNet-lite, MnasNet and ConvNeXt-style nets (at 224x224 input): 5x5 and 7x7
    # windows, stride 2, depth multiplier 2 (MobileNet-v1's depth_multiplier), rows of 24x96 (MobileNetV2's 96x96)
    Layer("dw-16-5x5-56", "DEPTHWISE_CONV_2D", (56, 56, 16), 16, (5, 5)),
    Layer("dw-72-5x5-s2-56", "DEPTHWISE_CONV_2D", (56, 56, 72), 72, (5, 5), (2, 2)),
    Layer("dw-120-5x5-28", "DEPTHWISE_CONV_2D", (28, 28, 120), 120, (5, 5)),
    Layer("dw-96-5x5-s2-28", "DEPTHWISE_CONV_2D", (28, 28, 96), 96, (5, 5), (2, 2)),
    Layer("dw-240-5x5-14", "DEPTHWISE_CONV_2D", (14, 14, 240), 240, (5, 5)),
    Layer("dw-240-5x5-s2-14", "DEPTHWISE_CONV_2D", (14, 14, 240), 240, (5, 5), (2, 2)),
    Layer("dw-240-5x5-7", "DEPTHWISE_CONV_2D", (7, 7, 240), 240, (5, 5)),
    Layer("dw-40-5x5-valid-15", "DEPTHWISE_CONV_2D", (15, 15, 40), 40, (5, 5), padding="VALID"),
    Layer("dw-16-3x3-s2-112", "DEPTHWISE_CONV_2D", (112, 112, 16), 16, (3, 3), (2, 2)),
    Layer("dw-240-3x3-s2-28", "DEPTHWISE_CONV_2D", (28, 28, 240), 240, (3, 3), (2, 2)),
    Layer("dw-8to16-3x3-48", "DEPTHWISE_CONV_2D", (48, 48, 8), 16, (3, 3)),
    Layer("dw-32to64-3x3-s2-24", "DEPTHWISE_CONV_2D", (24, 24, 32), 64, (3, 3), (2, 2)),
    Layer("dw-96-3x3-24", "DEPTHWISE_CONV_2D", (24, 24, 96), 96, (3, 3)),
    Layer("dw-96-7x7-14", "DEPTHWISE_CONV_2D", (14, 14, 96), 96, (7, 7)),
    Layer("dw-48-7x7-s2-28", "DEPTHWISE_CONV_2D", (28, 28, 48), 48, (7, 7), (2, 2)),
    Layer("conv-8to16-3x3-d2", "CONV_2D", (24, 24, 8), 16, (3, 3), dilation=(2, 2)),
    Layer("conv-32to64-1x1-s2", "CONV_2D", (24, 24, 32), 64, stride=(2, 2)),
    Layer("fc-256to10", "FULLY_CONNECTED", (1, 1, 256), 10),
    Layer("fc-1024to10", "FULLY_CONNECTED", (1, 1, 1024), 10),
    # few-channel heads (binary classifiers, detection scores): one row, or several rows of a 1x1 conv
    Layer("fc-1000to1", "FULLY_CONNECTED", (1, 1, 1000), 1),
    Layer("fc-325to2", "FULLY_CONNECTED", (1, 1, 325), 2),
    Layer("pw-5x5x256to2", "CONV_2D", (5, 5, 256), 2),
    Layer("pw-10x10x16to1", "CONV_2D", (10, 10, 16), 1),
    # pools: global averages, 2×2 and 3×3 windows, odd channel counts
    pool("avgpool-gap-6x6x128", "AVERAGE_POOL_2D", (6, 6, 128), (6, 6), (1, 1)),
    pool("avgpool-gap-7x7x100", "AVERAGE_POOL_2D", (7, 7, 100), (7, 7), (1, 1)),
    pool("avgpool-gap-12x12x64", "AVERAGE_POOL_2D", (12, 12, 64), (12, 12), (1, 1)),
    pool("avgpool-2x2-s2-24x24x16", "AVERAGE_POOL_2D", (24, 24, 16), (2, 2), (2, 2)),
    pool("avgpool-3x3-same-12x12x13", "AVERAGE_POOL_2D", (12, 12, 13), (3, 3), (1, 1), "SAME"),
    pool("maxpool-2x2-s2-24x24x32", "MAX_POOL_2D", (24, 24, 32), (2, 2), (2, 2)),
    pool("maxpool-3x3-s2-same-48x48x8", "MAX_POOL_2D", (48, 48, 8), (3, 3), (2, 2), "SAME"),
    pool("maxpool-2x2-s2-25x20x7", "MAX_POOL_2D", (25, 20, 7), (2, 2), (2, 2)),
    # 16x8 (int16 activations): SEANet's convolutions and ADDs (TFLM's integration tests), and the others
    Layer("s16-seanet-conv-16-3x3", "CONV_2D", (4, 82, 16), 16, (3, 3), padding="VALID", dtype="int16"),
    Layer("s16-seanet-conv-32to64-3x4-s12", "CONV_2D", (3, 22, 32), 64, (3, 4), (1, 2), padding="VALID",
          dtype="int16"),
    Layer("s16-seanet-conv-2to8-7x7", "CONV_2D", (8, 166, 2), 8, (7, 7), padding="VALID", dtype="int16"),
    Layer("s16-seanet-pw-64to32", "CONV_2D", (1, 10, 64), 32, dtype="int16"),
    elementwise("s16-seanet-add-2x80x16", "ADD", (2, 80, 16), dtype="int16"),
    Layer("s16-dw-32-3x3", "DEPTHWISE_CONV_2D", (16, 16, 32), 32, (3, 3), dtype="int16"),
    Layer("s16-dw-3to9-3x3-s2", "DEPTHWISE_CONV_2D", (24, 24, 3), 9, (3, 3), (2, 2), dtype="int16"),
    Layer("s16-fc-256to64", "FULLY_CONNECTED", (1, 1, 256), 64, dtype="int16"),
    # sums beyond int32 (TFLM's int64 accumulator: over 1024 random weights): mtk's GEMM sums chunks of 512 values
    Layer("s16-fc-1536to16", "FULLY_CONNECTED", (1, 1, 1536), 16, dtype="int16"),
    Layer("s16-conv-64to16-5x5", "CONV_2D", (6, 6, 64), 16, (5, 5), padding="VALID", dtype="int16"),
    pool("s16-avgpool-gap-6x6x32", "AVERAGE_POOL_2D", (6, 6, 32), (6, 6), (1, 1), dtype="int16"),
    pool("s16-maxpool-2x2-s2-16x16x16", "MAX_POOL_2D", (16, 16, 16), (2, 2), (2, 2), dtype="int16"),
    # MUL of equal shapes (MobileNetV3's hard-swish x·relu6(x + 3)); the classifiers' SOFTMAX: VWW's 2 classes, IC's
    # 10, KWS's 12, MobileNetV2's 1000, and rows of a per-pixel one (segmentation's 21 classes)
    elementwise("mul-hswish-12x12x72", "MUL", (12, 12, 72)),
    elementwise("mul-odd-10x10x13", "MUL", (10, 10, 13)),
    elementwise("s16-mul-2x80x16", "MUL", (2, 80, 16), dtype="int16"),
    elementwise("softmax-vww-2", "SOFTMAX", (1, 1, 2)),
    elementwise("softmax-ic-10", "SOFTMAX", (1, 1, 10)),
    elementwise("softmax-kws-12", "SOFTMAX", (1, 1, 12)),
    elementwise("softmax-mnv2-1000", "SOFTMAX", (1, 1, 1000)),
    elementwise("softmax-rows-12x12x21", "SOFTMAX", (12, 12, 21)),
    # decoders' upsampling (U-Net's 2x2 stride 2, 3x3 and 4x4 stride 2, a stride-1 one, few input channels: CMSIS-NN
    # takes a convolution over the upscaled input from 17 input channels at strides up to 2, else scatters)
    Layer("tconv-32to16-2x2-s2", "TRANSPOSE_CONV", (12, 12, 32), 16, (2, 2), (2, 2)),
    Layer("tconv-64to32-3x3-s2", "TRANSPOSE_CONV", (6, 6, 64), 32, (3, 3), (2, 2)),
    Layer("tconv-24to8-4x4-s2", "TRANSPOSE_CONV", (12, 12, 24), 8, (4, 4), (2, 2)),
    Layer("tconv-32to32-3x3", "TRANSPOSE_CONV", (8, 8, 32), 32, (3, 3)),
    Layer("tconv-8to4-3x3-s2", "TRANSPOSE_CONV", (16, 16, 8), 4, (3, 3), (2, 2)),
    Layer("tconv-16to3-5x5-s3-valid", "TRANSPOSE_CONV", (8, 8, 16), 3, (5, 5), (3, 3), padding="VALID"),
)


def random_layers(count: int, seed: int) -> list[Layer]:
    """`count` layers of random small shapes, the ops in turn (odd sizes, kernels up to 10×8, strides 1..3, pool
    windows up to the whole input), one in four 16x8; the elementwise turn is ADD or MUL, drawn from a stream of its
    own so that the shapes drawn from `seed` are those of the draws made before MUL was one of them."""
    rng = np.random.default_rng(seed)
    elementwise_op = np.random.default_rng((seed, len(ELEMENTWISE)))
    ops = (*WEIGHTED, *POOLS, "elementwise")
    layers = []
    for i in range(count):
        op = ops[i % len(ops)]
        if op == "elementwise":
            op = str(elementwise_op.choice(ELEMENTWISE))
        dtype = "int16" if rng.integers(0, 4) == 0 else "int8"
        tag = f"random{i}-{SHORT_NAMES[op]}{'-s16' if dtype == 'int16' else ''}"
        if op == "FULLY_CONNECTED":
            layers.append(Layer(tag, op, (1, 1, int(rng.integers(8, 400))), int(rng.integers(1, 68)), dtype=dtype))
            continue
        h, w, c = int(rng.integers(10, 40)), int(rng.integers(10, 40)), int(rng.integers(1, 17))
        if op in ELEMENTWISE:
            layers.append(elementwise(tag, op, (h, w, int(rng.integers(1, 68))), dtype))
            continue
        if op in POOLS:
            c = int(rng.integers(1, 68))
            kernel = (h, w) if rng.integers(0, 3) == 0 else (int(rng.integers(1, 6)), int(rng.integers(1, 6)))
            stride = (int(rng.integers(1, 4)), int(rng.integers(1, 4)))
            layers.append(pool(tag, op, (h, w, c), kernel, stride, str(rng.choice(["SAME", "VALID"])), dtype))
            continue
        kernel = (int(rng.integers(1, min(10, h) + 1)), int(rng.integers(1, min(8, w) + 1)))
        stride = (int(rng.integers(1, 4)), int(rng.integers(1, 4)))
        out = c * int(rng.integers(1, 5)) if op == "DEPTHWISE_CONV_2D" else int(rng.integers(1, 68))
        layers.append(Layer(tag, op, (h, w, c), out, kernel, stride, padding=str(rng.choice(["SAME", "VALID"])),
                            dtype=dtype))
    return layers


def pointwise_layers(count: int, seed: int) -> list[Layer]:
    """`count` 1×1 CONV_2D layers of MobileNets' kind, drawn from a stream of `seed` of their own (random_layers'
    draws stay what they were): a square feature map of MobileNets' sizes, input and output channels each few (3..32,
    odd counts too) or many (33..256), stride 2 one time in four, 16x8 one in four; the map no larger than keeps the
    layer within POINTWISE_MACS (the smallest map if none does)."""
    rng = np.random.default_rng((seed, POINTWISE_STREAM))
    layers = []
    for i in range(count):
        cin, cout = (int(rng.integers(*POINTWISE_CHANNELS[int(rng.integers(0, len(POINTWISE_CHANNELS)))]))
                     for _ in range(2))
        stride = 2 if rng.integers(0, 4) == 0 else 1
        dtype = "int16" if rng.integers(0, 4) == 0 else "int8"
        sizes = [s for s in POINTWISE_SIZES if ((s + stride - 1) // stride) ** 2 * cin * cout <= POINTWISE_MACS]
        size = int(rng.choice(sizes or POINTWISE_SIZES[:1]))
        layers.append(Layer(f"pointwise{i}{'-s16' if dtype == 'int16' else ''}", "CONV_2D", (size, size, cin), cout,
                            stride=(stride, stride), dtype=dtype))
    return layers


def _window_options(layer: Layer) -> dict:
    options = {"padding": layer.padding, "stride_h": layer.stride[0], "stride_w": layer.stride[1]}
    if layer.op == "TRANSPOSE_CONV":
        return options
    if layer.op in POOLS:
        return {**options, "filter_height": layer.kernel[0], "filter_width": layer.kernel[1]}
    return {**options, "dilation_h_factor": layer.dilation[0], "dilation_w_factor": layer.dilation[1]}


def layer_model(layer: Layer, seed: int = 0) -> bytes:
    """The layer alone as a .tflite, from tests/modelgen.py's (int8) or tests/modelgen16x8.py's (int16) layers; with a
    bias, as CMSIS-NN is called."""
    return (_model_16x8 if layer.dtype == "int16" else _model_int8)(layer, np.random.default_rng(seed))


def _model_int8(layer: Layer, rng: np.random.Generator) -> bytes:
    d = modelgen.Draw(rng)
    net = modelgen.Net(description=f"mtk layer_compare {layer.name}")
    quant = modelgen.activation_quant(d, SOFTMAX_INPUT_LOG2_SCALE) if layer.op == "SOFTMAX" else \
        modelgen.activation_quant(d)
    x = net.model_input((1, layer.input[2]) if layer.flat else (1, *layer.input), quant)
    cin, cout = layer.input[2], layer.out_channels
    if layer.op == "FULLY_CONNECTED":
        return net.build(modelgen.weighted_sum(net, d, x, layer.op, (cout, cin), 0, cin, (1, cout), per_channel=False,
                                               bias_optional=False, activation=ACTIVATION))
    if layer.op in POOLS:
        y = net.tensor(layer.op.lower(), (1, *layer.output), x.quant)   # TFLite's pools keep the quantization
        net.builder.op(layer.op, [x.index], [y.index], fused_activation_function=ACTIVATION, **_window_options(layer))
        return net.build(y)
    if layer.op in ELEMENTWISE:
        other = net.model_input(x.shape, modelgen.rescaled(d, x.quant))
        quant = modelgen.rescaled(d, x.quant, 0.0, 1.0) if layer.op == "ADD" else \
            modelgen.accumulator_quant(d, x.quant.scale * other.quant.scale * modelgen._INT8_STD ** 2)
        y = net.tensor(layer.op.lower(), x.shape, quant)
        net.builder.op(layer.op, [x.index, other.index], [y.index], fused_activation_function=ACTIVATION)
        return net.build(y)
    if layer.op == "SOFTMAX":   # TFLite fixes the output's quantization
        y = net.tensor("softmax", x.shape, modelgen.Quant(1 / 256, -128))
        net.builder.op("SOFTMAX", [x.index], [y.index], beta=1.0)
        return net.build(y)
    window = {"activation": ACTIVATION, **_window_options(layer)}
    taps = layer.kernel[0] * layer.kernel[1]
    if layer.op == "DEPTHWISE_CONV_2D":
        y = modelgen.weighted_sum(net, d, x, layer.op, (1, *layer.kernel, cout), 3, taps, (1, *layer.output),
                                  bias_optional=False, depth_multiplier=cout // cin, **window)
    elif layer.op == "TRANSPOSE_CONV":   # an output value sums the taps of its stride phase
        shape = net.int32("output_shape", (1, *layer.output))
        phase_taps = -(-layer.kernel[0] // layer.stride[0]) * -(-layer.kernel[1] // layer.stride[1])
        y = modelgen.weighted_sum(net, d, x, layer.op, (cout, *layer.kernel, cin), 0, phase_taps * cin,
                                  (1, *layer.output), bias_optional=False,
                                  operands=lambda x, w, b: [shape, w, x, b], **window)
    else:
        y = modelgen.weighted_sum(net, d, x, layer.op, (cout, *layer.kernel, cin), 0, taps * cin, (1, *layer.output),
                                  bias_optional=False, **window)
    return net.build(y)


def _model_16x8(layer: Layer, rng: np.random.Generator) -> bytes:
    """int16 activations (zero point 0, as TFLM's 16x8 kernels require), int8 weights, int64 bias."""
    d = modelgen.Draw(rng)
    net = modelgen16x8.Net16(f"mtk layer_compare {layer.name}")
    x = net.model_input((1, layer.input[2]) if layer.flat else (1, *layer.input), 2.0 ** -10)
    cin, cout = layer.input[2], layer.out_channels
    fused = (ACTIVATION,)
    if layer.op == "FULLY_CONNECTED":   # TFLM's cmsis_nn 16x8 FC: per-tensor weights
        return net.build(modelgen16x8.weighted(net, d, x, layer.op, (cout, cin), 0, cin, (1, cout), ("int64",),
                                               bias_optional=False, fused=fused, per_channel=False))
    if layer.op in POOLS:
        y = net.act(layer.op.lower(), (1, *layer.output), x[2])
        net.b.op(layer.op, [x[0]], [y[0]], fused_activation_function=ACTIVATION, **_window_options(layer))
        return net.build(y)
    if layer.op in ELEMENTWISE:   # MUL: products of random int16 values have a std near 2^28
        other = net.model_input(x[1], x[2] * 2.0 ** d.float(-1.0, 1.0))
        scale = max(x[2], other[2]) * 2.0 ** d.float(0.0, 1.0) if layer.op == "ADD" else \
            x[2] * other[2] * 2.0 ** d.float(14.0, 16.0)
        y = net.act(layer.op.lower(), x[1], scale)
        net.b.op(layer.op, [x[0], other[0]], [y[0]], fused_activation_function=ACTIVATION)
        return net.build(y)
    taps = layer.kernel[0] * layer.kernel[1]
    options = _window_options(layer)
    if layer.op == "DEPTHWISE_CONV_2D":
        y = modelgen16x8.weighted(net, d, x, layer.op, (1, *layer.kernel, cout), 3, taps, (1, *layer.output),
                                  ("int64",), bias_optional=False, fused=fused, depth_multiplier=cout // cin, **options)
    else:
        y = modelgen16x8.weighted(net, d, x, layer.op, (cout, *layer.kernel, cin), 0, taps * cin, (1, *layer.output),
                                  ("int64",), bias_optional=False, fused=fused, **options)
    return net.build(y)


def softmax_defines(layer: Layer) -> dict:
    """A SOFTMAX's input multiplier, left shift and diff_min, as TFLM's Prepare computes them from the layer model's
    input scale and beta (CMSIS-NN's work depends on how many values lie within diff_min of their row's maximum)."""
    if layer.op != "SOFTMAX":
        return {}
    model = tflite.Model.GetRootAs(layer_model(layer), 0)
    graph = model.Subgraphs(0)
    scale = graph.Tensors(graph.Inputs(0)).Quantization().Scale(0)
    beta = tflite.SoftmaxOptions()
    options = graph.Operators(0).BuiltinOptions()
    beta.Init(options.Bytes, options.Pos)
    multiplier, left_shift, diff_min = softmax_params(scale, beta.Beta())
    return {"SOFTMAX_MULT": multiplier, "SOFTMAX_SHIFT": left_shift, "SOFTMAX_DIFF_MIN": diff_min}


def harness_ram_bytes(layer: Layer, board: Board) -> int:
    """RAM bench/cmsis_nn_layer.c takes for `layer` on `board`: its static buffers (weights included: they are
    filled at run time), scratch and stack, as _harness and render_board_files size them."""
    h, w, c = layer.input
    out_h, out_w, out_c = layer.output
    act = 2 if layer.dtype == "int16" else 1
    weights = {"CONV_2D": out_c * layer.kernel[0] * layer.kernel[1] * c, "FULLY_CONNECTED": out_c * c,
               "TRANSPOSE_CONV": 2 * out_c * layer.kernel[0] * layer.kernel[1] * c,   # and the reversed copy
               "DEPTHWISE_CONV_2D": layer.kernel[0] * layer.kernel[1] * out_c}.get(layer.op, 1)
    per_channel = out_c * ((8 if layer.dtype == "int16" else 4) + 4 + 4)   # bias, multiplier, shift
    return 2 * h * w * c * act + weights + per_channel + out_h * out_w * out_c * act + harness_scratch_bytes(board) \
        + harness_stack_bytes(board)


def harness_scratch_bytes(board: Board) -> int:
    return min(64 * 1024, board.ram_bytes // 8)


def harness_stack_bytes(board: Board) -> int:
    return min(DEFAULT_STACK_BYTES, board.ram_bytes // 8)   # microbit: 16 KB of RAM in all


def too_big(layer: Layer, board: Board, work: Path) -> str | None:
    """Why `layer` cannot be measured on `board` (mtk's compile for the board, or the CMSIS-NN harness's RAM),
    or None."""
    work.mkdir(parents=True, exist_ok=True)
    model = work / f"{layer.name}.tflite"
    model.write_bytes(layer_model(layer))
    try:
        compile_model(model, work / "fits", board=board.name, force=True)
    except ModelError as err:
        return str(err).splitlines()[0]
    need = harness_ram_bytes(layer, board)
    return f"CMSIS-NN's harness needs {need:,} B of RAM" if need > board.ram_bytes else None


def mtk_figures(layer: Layer, board: str, work: Path) -> dict:
    work.mkdir(parents=True, exist_ok=True)
    model = work / f"{layer.name}.tflite"
    model.write_bytes(layer_model(layer))
    row = measure(model, board, False, work, None)
    return {"instructions": row["instructions"], "estimated_cycles": row["estimated_cycles"],
            "arena_bytes": row["arena_bytes"], "exact": row["output_mismatches"] == 0}


class CmsisNN:
    """CMSIS-NN's int8 kernels built per core from a user's checkout, and one harness ELF per layer and board."""

    def __init__(self, checkout: Path, work: Path):
        self.checkout = checkout.resolve()
        self.work = work
        if not (self.checkout / "Include" / "arm_nnfunctions.h").is_file():
            raise SystemExit(f"{checkout}: not a CMSIS-NN checkout (no Include/arm_nnfunctions.h)")

    def library(self, board: Board) -> Path:
        """libcmsis-nn.a for the board's core (compiled on first use; a --work kept from a run that compiled other
        source folders gets another)."""
        folders = hashlib.sha1(" ".join(CMSIS_NN_SOURCES).encode()).hexdigest()[:8]
        out = self.work / "cmsis-nn" / f"{board.cpu.name}-{folders}"
        archive = out / "libcmsis-nn.a"
        if archive.is_file():
            return archive
        out.mkdir(parents=True, exist_ok=True)
        sources = [s for folder in CMSIS_NN_SOURCES for s in sorted((self.checkout / "Source" / folder).glob("*.c"))
                   if not s.stem.endswith(("_f16", "_f32"))]   # float kernels need their own build options

        def compile_one(source: Path) -> Path:
            obj = out / f"{source.stem}.o"
            self._run(["arm-none-eabi-gcc", *board.cpu.gcc_flags, "-O2", "-ffunction-sections", "-fdata-sections",
                       "-I", str(self.checkout / "Include"), "-c", str(source), "-o", str(obj)])
            return obj

        with ThreadPoolExecutor(max_workers=2) as pool:
            objects = list(pool.map(compile_one, sources))
        self._run(["arm-none-eabi-ar", "rcs", str(archive), *map(str, objects)])
        return archive

    def figures(self, layer: Layer, board: Board) -> tuple[int | None, int | None]:
        """The instructions of the CMSIS-NN call (SysTick) and its estimated cycles (the cycle model); (None, None),
        said on stderr, when the harness does not finish: the row shows '-' and the sweep goes on."""
        try:
            line, status, measured = run_measured(self._harness(layer, board), board, CMSIS_NN_CALLS, TIMEOUT_S)
        except TargetError as err:
            print(f"  CMSIS-NN left out: {str(err).splitlines()[0]}", file=sys.stderr)
            return None, None
        if line is None or not line.startswith("cmsis-nn ") or status != 0:
            raise SystemExit(f"CMSIS-NN harness for {layer.name} on {board.name} failed (exit {status}): {line!r}")
        return int(line.split()[1]), measured[0].cycles if measured else None

    def _harness(self, layer: Layer, board: Board) -> Path:
        out = self.work / "harness" / board.name.replace("/", "_") / layer.name
        out.mkdir(parents=True, exist_ok=True)
        render_board_files(board, out, harness_stack_bytes(board))
        (h, pad_h), (w, pad_w) = layer.window(0), layer.window(1)
        kind = {"CONV_2D": "CONV", "DEPTHWISE_CONV_2D": "DEPTHWISE", "FULLY_CONNECTED": "FC", "TRANSPOSE_CONV": "TCONV",
                "AVERAGE_POOL_2D": "AVGPOOL", "MAX_POOL_2D": "MAXPOOL", "ADD": "ADD", "MUL": "MUL",
                "SOFTMAX": "SOFTMAX"}[layer.op]
        defines = {f"LAYER_{kind}": 1, **({"S16": 1} if layer.dtype == "int16" else {}), "IN_H": layer.input[0], "IN_W": layer.input[1], "IN_C": layer.input[2],
                   "OUT_H": h, "OUT_W": w, "OUT_C": layer.out_channels, "K_H": layer.kernel[0], "K_W": layer.kernel[1],
                   "STRIDE_H": layer.stride[0], "STRIDE_W": layer.stride[1], "DIL_H": layer.dilation[0],
                   "DIL_W": layer.dilation[1], "PAD_H": pad_h, "PAD_W": pad_w, "MTK_SEMIHOSTING": 1,
                   "PAD_AFTER_H": layer.padding_after(0), "PAD_AFTER_W": layer.padding_after(1),
                   "SCRATCH_BYTES": harness_scratch_bytes(board), **softmax_defines(layer)}
        elf = out / "harness.elf"
        self._run(["arm-none-eabi-gcc", *board.cpu.gcc_flags, "-O2", "--specs=picolibc.specs", "-nostartfiles",
                   "-ffunction-sections", "-fdata-sections", "-Wl,--gc-sections", "-T", str(out / "linker.ld"),
                   *[f"-D{k}={v}" for k, v in defines.items()],
                   "-I", str(out), "-I", str(FIRMWARE), "-I", str(self.checkout / "Include"),
                   str(HARNESS), str(BAREMETAL_APP / "startup.c"), str(BAREMETAL_APP / "mtk_port_baremetal.c"),
                   str(self.library(board)), "-o", str(elf)])
        return elf

    @staticmethod
    def _run(command: list[str]) -> None:
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"{' '.join(command)} failed:\n{done.stderr[-2000:]}")


def print_table(rows: list[dict], boards: list[str]) -> None:
    width = max([len("layer"), *(len(r["layer"]) for r in rows)])
    print(f"{'layer':{width}} {'op':21} {'MACs':>9} │ " + " │ ".join(f"{b[-5:]:>5} {'mtk':>10} {'CMSIS-NN':>10} {'×':>6} {'cyc ×':>6} exact"
                                                           for b in boards))
    for layer_rows in _by_layer(rows):
        first = layer_rows[0]
        cells = []
        for board in boards:
            r = next((r for r in layer_rows if r["board"] == board), None)
            if r is None:
                cells.append(" " * 49)
                continue
            theirs = r["cmsis_nn_instructions"]
            ratio = f"{r['mtk_instructions'] / theirs:5.2f}{'!' if r['mtk_instructions'] > theirs else ' '}" \
                if theirs else "-"
            mine_c, theirs_c = r["mtk_estimated_cycles"], r["cmsis_nn_estimated_cycles"]
            cycles = f"{mine_c / theirs_c:5.2f}{'!' if mine_c > theirs_c else ' '}" if mine_c and theirs_c else "-"
            cells.append(f"{'':5} {r['mtk_instructions']:10,} {f'{theirs:,}' if theirs else '-':>10} {ratio:>6} "
                         f"{cycles:>6} {'yes' if r['exact'] else 'NO':>5}")
        op = first["op"] + (" s16" if first["dtype"] == "int16" else "")
        print(f"{first['layer']:{width}} {op:21} {first['macs']:9,} │ " + " │ ".join(cells))
    print("MACs: pools count window taps, ADD, MUL and SOFTMAX elements; × = mtk / CMSIS-NN instructions for the layer (QEMU -icount), "
          "cyc × = the same in the cycle model's estimated cycles (mtk.cycles); "
          "'!' = above 1.0 (slower than CMSIS-NN); exact = mtk's outputs equal tflite-micro's")


def cycle_ratio(row: dict) -> float | None:
    """mtk's estimated cycles over CMSIS-NN's for a row, or None without both."""
    mine, theirs = row.get("mtk_estimated_cycles"), row.get("cmsis_nn_estimated_cycles")
    return mine / theirs if mine and theirs else None


def summary(rows: list[dict], board: str, worst: int) -> str:
    """One line for `board`: its layers compared in cycles, how many are at most 1.0x CMSIS-NN's, and the `worst`
    highest ratios (every one above 1.0 whatever `worst`)."""
    ratios = sorted(((ratio, r["layer"]) for r in rows if r.get("board") == board
                     and (ratio := cycle_ratio(r)) is not None), reverse=True)
    wins = sum(ratio <= 1.0 for ratio, _ in ratios)
    shown = ratios[:max(worst, len(ratios) - wins)]
    listing = ", ".join(f"{name} {ratio:.2f}" for ratio, name in shown)
    return f"{board}: {len(ratios)} layers, {wins} at most 1.0x CMSIS-NN in cycles" + (f"; worst: {listing}"
                                                                                         if listing else "")


def _by_layer(rows: list[dict]) -> list[list[dict]]:
    order = list(dict.fromkeys(r["layer"] for r in rows))
    return [[r for r in rows if r["layer"] == name] for name in order]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], epilog=__doc__.split("\n\n", 2)[2],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--board", action="append", help=f"board(s) (default: {', '.join(BOARDS)})")
    parser.add_argument("--layer", action="append", metavar="NAME",
                        help="only these layers, of the built-in list or the random ones (default all); "
                             f"built in: {', '.join(layer.name for layer in LAYERS)}")
    parser.add_argument("--op", action="append", choices=[*WEIGHTED, "TRANSPOSE_CONV", *POOLS, *ELEMENTWISE, "SOFTMAX"],
                        help="only layers of these ops (default all)")
    parser.add_argument("--random", type=int, default=3, metavar="N", help="also N random layers (default 3)")
    parser.add_argument("--pointwise", type=int, default=3, metavar="N",
                        help="also N random 1x1 convolutions, pointwiseN (default 3)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random layers")
    parser.add_argument("--only-random", action="store_true", help="leave the built-in list out")
    parser.add_argument("--cmsis-nn", type=Path, metavar="DIR",
                        help="a CMSIS-NN checkout to compare with (not fetched: see below)")
    parser.add_argument("--work", type=Path, help="keep the builds here (default: a temporary folder)")
    parser.add_argument("--json", type=Path, help="write the rows to this file")
    parser.add_argument("--worst", type=int, default=5, metavar="N",
                        help="each board's summary line names its N highest cycle ratios (default 5), and every one "
                             "above 1.0")
    parser.add_argument("--from-json", type=Path, nargs="+", metavar="FILE",
                        help="print the table and summary of rows --json wrote (several: one board each), running "
                             "nothing")
    args = parser.parse_args()
    if args.from_json:
        return print_saved(args.from_json, args.worst)
    if args.json:
        try:
            check_output_file_first(args.json, [p for p in (args.cmsis_nn, args.work) if p])
        except MtkError as err:
            parser.error(str(err))

    layers = [*(() if args.only_random else LAYERS), *random_layers(args.random, args.seed),
              *pointwise_layers(args.pointwise, args.seed)]
    unknown = set(args.layer or ()) - {layer.name for layer in layers}
    if unknown:
        parser.error(f"no layer {', '.join(sorted(unknown))} (random ones: randomN-op up to --random, pointwiseN up "
                     "to --pointwise)")
    layers = [layer for layer in layers if (not args.layer or layer.name in args.layer)
              and (not args.op or layer.op in args.op)]
    boards = args.board or list(BOARDS)
    rows, skipped = [], []
    with tempfile.TemporaryDirectory(prefix="mtk-layers-") as tmp:
        work = args.work or Path(tmp)
        cmsis = CmsisNN(args.cmsis_nn, work) if args.cmsis_nn else None
        for board_name in boards:
            board = get_board(board_name)
            for layer in layers:
                print(f"{layer.name} on {board.name} ...", file=sys.stderr, flush=True)
                reason = too_big(layer, board, work / "fits" / board.name.replace("/", "_") / layer.name)
                if reason:
                    print(f"  left out: {reason}", file=sys.stderr)
                    skipped.append({"layer": layer.name, "board": board.name, "left_out": reason})
                    continue
                mtk = mtk_figures(layer, board.name, work / "mtk" / board.name.replace("/", "_") / layer.name)
                rows.append({"layer": layer.name, "board": board.name, **asdict(layer), "output": layer.output,
                             "macs": layer.macs, "mtk_instructions": mtk["instructions"],
                             "mtk_arena_bytes": mtk["arena_bytes"], "exact": mtk["exact"],
                             "mtk_estimated_cycles": mtk["estimated_cycles"],
                             **dict(zip(("cmsis_nn_instructions", "cmsis_nn_estimated_cycles"),
                                        cmsis.figures(layer, board) if cmsis else (None, None)))})
    if args.json:
        write_output_text(args.json, json.dumps(rows + skipped, indent=1) + "\n")
    return report(rows, skipped, [get_board(b).name for b in boards], args.worst)


SAVED_FIELDS = {"op", "dtype", "macs", "mtk_instructions", "cmsis_nn_instructions", "mtk_estimated_cycles",
                "cmsis_nn_estimated_cycles", "exact"}   # what print_table reads of a measured row


def report(rows: list[dict], skipped: list[dict], boards: list[str], worst: int) -> int:
    """The table, the layers left out, each board's summary line; 0 if every output was exact, else 1."""
    print_table(rows, boards)
    for row in skipped:
        print(f"{row['layer']} on {row['board']}: left out, it does not fit ({row['left_out']})")
    if any(cycle_ratio(r) is not None for r in rows):
        for board in boards:
            print(summary(rows, board, worst))
    return 0 if all(r["exact"] for r in rows) else 1


def print_saved(files: list[Path], worst: int) -> int:
    """report() of the rows in `files` (--json's), their boards in the order they come."""
    saved = []
    for file in files:
        try:
            rows = json.loads(file.read_text())
        except (OSError, ValueError) as err:
            rows = err
        if not isinstance(rows, list) or not all(isinstance(r, dict) and {"layer", "board"} <= r.keys()
                                                 and ("left_out" in r or SAVED_FIELDS <= r.keys()) for r in rows):
            print(f"{file}: not the rows layer_compare.py --json writes"
                  + (f" ({rows})" if isinstance(rows, Exception) else ""), file=sys.stderr)
            return 2
        saved += rows
    rows = [r for r in saved if "left_out" not in r]
    return report(rows, [r for r in saved if "left_out" in r], list(dict.fromkeys(r["board"] for r in saved)), worst)


if __name__ == "__main__":
    sys.exit(main())
