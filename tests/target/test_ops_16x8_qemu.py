"""16x8 models in QEMU: chunked wide sums, the encoder-decoder and the mixed int8/int16 model bit-exact on a
Cortex-M4 and a Cortex-M55 board, int16 ADD/SUB/MUL on Helium (mtk_add_mve_s16, mtk_mul_mve_s16) with and without
broadcasting."""

from __future__ import annotations

import numpy as np
import pytest

import modelgen16x8
from mtk.boards import get_board
from mtk.pipeline import run_model
from mtk.runoptions import RunOptions
from mtk.reference import run_reference_batch
from mtk.tflite_builder import ModelBuilder
from harness import assert_bit_exact_on_target
from test_ops_16x8 import _samples, wide_sums_at_the_edge


def binary_s16_model(op: str, shape: tuple[int, ...], other: tuple[int, ...], scales: tuple[float, float, float],
                     zero_points: tuple[int, int, int], activation: str) -> bytes:
    b = ModelBuilder(description=f"{op} int16")
    x1 = b.tensor("x1", shape, "int16", scale=scales[0], zero_point=zero_points[0])
    x2 = b.tensor("x2", other, "int16", scale=scales[1], zero_point=zero_points[1])
    y = b.tensor("y", np.broadcast_shapes(shape, other), "int16", scale=scales[2], zero_point=zero_points[2])
    b.op(op, [x1, x2], [y], fused_activation_function=activation)
    b.inputs([x1, x2])
    b.outputs([y])
    return b.build()


HELIUM_BINARY_S16 = {   # mtk_add_mve_s16: a predicated tail, inputs that stay (per channel, scalar, both), SUB
    "add-105-relu": ("ADD", (1, 5, 3, 7), (1, 5, 3, 7), (0.0003, 0.0002, 0.0004), (-32000, 1234, -100), "RELU"),
    "add-zp0-16x16x16": ("ADD", (1, 16, 16, 16), (1, 16, 16, 16), (0.0003, 0.0002, 0.0004), (0, 0, 0), "NONE"),
    "sub-bcast-channels": ("SUB", (1, 5, 4, 23), (1, 1, 1, 23), (0.0001, 0.00025, 0.0003), (5, -3, 0), "NONE"),
    "add-bcast-scalar": ("ADD", (1,), (2, 3, 5), (0.0001, 0.00025, 0.0003), (7, 0, 2), "RELU6"),
    "sub-bcast-both": ("SUB", (1, 1, 6, 1), (1, 5, 1, 3), (0.0002, 0.0002, 0.0001), (0, 9, -9), "RELU_N1_TO_1"),
    # mtk_mul_mve_s16: a predicated tail, a rescale shifting left (x1_scale * x2_scale / y_scale 2), broadcasts
    "mul-odd-relu": ("MUL", (1, 5, 3, 7), (1, 5, 3, 7), (0.0003, 0.0002, 0.0000005), (0, 0, 0), "RELU"),
    "mul-lshift": ("MUL", (1, 4, 4, 9), (1, 4, 4, 9), (0.01, 0.02, 0.0001), (0, 0, 0), "NONE"),
    "mul-bcast-channels": ("MUL", (1, 5, 4, 23), (1, 1, 1, 23), (0.0001, 0.00025, 0.0000003), (0, 0, 0), "RELU6"),
    "mul-bcast-scalar": ("MUL", (1,), (2, 3, 5), (0.0001, 0.00025, 0.0000003), (0, 0, 0), "NONE"),
}


@pytest.mark.qemu
@pytest.mark.parametrize("board", ["mps3/corstone300/an547", "mps2/an386", "mps2/an385"])
def test_sums_in_chunks_on_target(board, tmp_path):
    """The same on the M55 (VMLADAVA), M4 (SMLAD) and M3 (plain C) kernels."""
    model, samples = wide_sums_at_the_edge(tmp_path)
    assert_bit_exact_on_target(model, board, tmp_path, samples)


@pytest.mark.qemu
@pytest.mark.parametrize("board", ["mps2/an386", "mps3/corstone300/an547", "mps2/an385"])
def test_int16_models_bit_exact_on_target(board, tmp_path):
    """The encoder-decoder (CONV, DEPTHWISE, TRANSPOSE_CONV, ADD), the mixed model (QUANTIZE, FULLY_CONNECTED),
    the depthwise chain (SMLABB/SMLATT lanes of each mode), the micro-kernels' loop tails (one and two rows) and the
    conv chain (im2col rows: Helium's runs of whole window rows, taps one by one)."""
    for name, model in (("encoder", modelgen16x8.encoder_decoder(1)), ("mixed", modelgen16x8.mixed_int8_int16(0)),
                        ("depthwise", modelgen16x8.depthwise_chain(3)), ("tails", modelgen16x8.dot_tails(0)),
                        ("conv", modelgen16x8.conv_chain(0))):
        path = tmp_path / f"{name}.tflite"
        path.write_bytes(model)
        samples = _samples(model)
        result = run_model(path, RunOptions(board=get_board(board), runs=1), samples)
        for expected, got in zip(run_reference_batch(model, samples), result.outputs):
            for want, out in zip(expected, got):
                assert np.array_equal(np.asarray(out).reshape(-1), np.asarray(want).reshape(-1)), name


@pytest.mark.qemu
@pytest.mark.parametrize("name", HELIUM_BINARY_S16)
def test_int16_binary_ops_on_helium(name, tmp_path):
    """int16 ADD/SUB/MUL in Helium's vectors (c/mtk_add_mve.h, c/mtk_mul_mve.h) on the M55, over the whole int16
    range of inputs."""
    assert_bit_exact_on_target(binary_s16_model(*HELIUM_BINARY_S16[name]), "mps3/corstone300/an547", tmp_path)
