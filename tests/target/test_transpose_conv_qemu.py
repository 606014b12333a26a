"""int8 TRANSPOSE_CONV bit-exact with tflite-micro in QEMU, on the 16x8 GEMM (its stride phases gathered as values
less the input's zero point, mtk_im2col_s8_s16) and, up to 8 output channels, scattered a row at a time; on the
Cortex-M55 each stride phase a stride-1 convolution on Helium's fused GEMM (transpose_conv_phases.py), elsewhere a
stride-1 layer of more than 8 output channels the CONV_2D it equals on the int8 GEMM: strides 1-3
(one unlike the other), filters larger and smaller than the stride, SAME (padding above and left) and VALID, with
and without bias, odd and even channel counts, fused activations, rescales that shift left."""

from __future__ import annotations

import numpy as np
import pytest

from mtk.tflite_builder import ModelBuilder
from harness import assert_bit_exact_on_target

# output channels, filter (h, w), stride (h, w), padding, bias, activation
BRANCHES = (
    (5, (3, 3), (2, 2), "SAME", True, "RELU"),
    (3, (5, 5), (3, 3), "VALID", False, "NONE"),
    (16, (2, 2), (2, 2), "VALID", True, "NONE"),
    (7, (4, 3), (1, 2), "SAME", True, "RELU6"),
    (2, (1, 1), (3, 1), "VALID", True, "NONE"),
    (4, (3, 5), (2, 2), "SAME", True, "RELU"),
)
INPUTS = ((6, 5, 9), (5, 6, 8))   # (h, w, c): every branch reads each
# the Helium GEMM's tiles: 1-3 channels past whole tiles of 4, 1x1 filters, a phase with no taps and one rows apart;
# stride-1 layers of more than 8 channels (13, 20): the int8 GEMM on every core
HELIUM_BRANCHES = (
    (13, (3, 3), (1, 1), "SAME", True, "NONE"),
    (9, (4, 4), (2, 2), "SAME", True, "RELU"),
    (6, (5, 3), (3, 2), "VALID", False, "RELU6"),
    (1, (2, 2), (3, 3), "SAME", True, "NONE"),
    (20, (1, 1), (1, 1), "VALID", True, "NONE"),
    (3, (3, 3), (2, 1), "VALID", True, "RELU"),
)


def _size(size: int, kernel: int, stride: int, padding: str) -> int:
    return size * stride if padding == "SAME" else (size - 1) * stride + kernel


def transpose_conv_branches(in_zp: int = -3, branches=BRANCHES, w_exponents: tuple[float, float] = (-9, -6)) -> bytes:
    """INPUTS (the first of zero point `in_zp`) into every TRANSPOSE_CONV of `branches`, each a model output, weight
    scales 2^`w_exponents` (an input scale of 0.05, outputs of 0.03: from 2^-1 on a rescale may shift left)."""
    rng = np.random.default_rng(27)
    b = ModelBuilder(description="transpose conv branches")
    xs = [b.tensor(f"x{k}", (1, *shape), "int8", scale=0.05, zero_point=in_zp if k == 0 else 4)
          for k, shape in enumerate(INPUTS)]
    outputs = []
    for i, (x, (in_h, in_w, in_c), (cout, (kh, kw), (sh, sw), padding, has_bias, activation)) in enumerate(
            (x, shape, branch) for x, shape in zip(xs, INPUTS) for branch in branches):
        shape = (1, _size(in_h, kh, sh, padding), _size(in_w, kw, sw, padding), cout)
        w_scales = 2.0 ** rng.uniform(*w_exponents, size=cout)
        w = b.const(f"w{i}", rng.integers(-127, 128, size=(cout, kh, kw, in_c)).astype(np.int8), scale=w_scales,
                    zero_point=np.zeros(cout), axis=0)
        bias = [b.const(f"bias{i}", rng.integers(-3000, 3000, size=cout).astype(np.int32), scale=0.05 * w_scales,
                        zero_point=np.zeros(cout), axis=0)] if has_bias else []
        y = b.tensor(f"y{i}", shape, "int8", scale=0.03, zero_point=int(rng.integers(-20, 20)))
        b.op("TRANSPOSE_CONV", [b.const(f"shape{i}", np.array(shape, np.int32)), w, x, *bias], [y],
             padding=padding, stride_h=sh, stride_w=sw, fused_activation_function=activation)
        outputs.append(y)
    b.inputs(xs)
    b.outputs(outputs)
    return b.build()


@pytest.mark.parametrize("board", ["mps2/an386", "mps2/an500", "mps2/an505", "mps3/corstone300/an547",
                                   "mps2/an385"])
def test_int8_transpose_conv_bit_exact_on_target(board, tmp_path):
    assert_bit_exact_on_target(transpose_conv_branches(), board, tmp_path)


@pytest.mark.parametrize("board, w_exponents", [
    ("mps3/corstone300/an547", (-9, -6)), ("mps3/corstone300/an547", (-2, 0)), ("mps2/an386", (-2, 0)),
    ("mps2/an500", (-9, -6)), ("mps2/an505", (-2, 0)), ("mps2/an385", (-9, -6))])
def test_int8_transpose_conv_as_convolutions_on_target(board, w_exponents, tmp_path):
    """HELIUM_BRANCHES, the rescales shifting right only (weight scales 2^-9..2^-6) or some left (2^-2..1)."""
    assert_bit_exact_on_target(transpose_conv_branches(5, HELIUM_BRANCHES, w_exponents), board, tmp_path)
