"""The GEMM of the input's own rows in one call ("2x4/band": ops/gemm_band.py, c/dsp/mtk_gemm_band_fused.h): which
layers take it first on which core, its bands, its C bit-exact with tflite-micro on the host; the models of
tests/target/test_gemm_band_qemu.py, which runs its assembly on the Cortex-M4, M7 and M33."""

from __future__ import annotations

import re

import pytest

from harness import assert_bit_exact_on_c_paths, conv_model
from mtk.ops import op_def, prepare_ops
from mtk.ops.gemm_band import BAND_BYTES, band_pairs, band_suits, pair_bytes
from mtk.ops.variants import Variant
from mtk.reader import read_model
from mtk.target import get_cpu
from mtk.tuning import Tuning, layer_key


def pointwise_image(h: int, w: int, channels: int, out_c: int, activation: str = "NONE", y_zp: int = 5) -> bytes:
    """A 1x1 CONV_2D over h x w pixels."""
    return conv_model("CONV_2D", (1, h, w, channels), (out_c, 1, 1, channels), (1, h, w, out_c), per_channel=True,
                      y_zp=y_zp, padding="VALID", stride_h=1, stride_w=1, dilation_h_factor=1, dilation_w_factor=1,
                      fused_activation_function=activation)


BAND_MODELS = {   # its assembly for 1 to 16 groups, with and without the sign term; bands whole, partial and odd
    "band-1-group-relu": lambda: pointwise_image(13, 7, 4, 8, "RELU", y_zp=-128),   # 45 pairs: bands of 42, 3, odd
    "band-2-groups": lambda: pointwise_image(9, 7, 8, 16),          # 63 rows: a band of 25 pairs, 6, the odd row
    "band-3-groups-relu": lambda: pointwise_image(4, 4, 12, 4, "RELU", y_zp=-128),
    "band-4-groups": lambda: pointwise_image(6, 6, 16, 32),
    "band-8-groups-relu": lambda: pointwise_image(5, 3, 32, 12, "RELU", y_zp=-128),
    "band-8-groups": lambda: pointwise_image(3, 4, 32, 64),
    "band-13-groups": lambda: pointwise_image(3, 3, 52, 8),         # a band of one pair and the odd row
    "band-16-groups-relu": lambda: pointwise_image(2, 3, 64, 4, "RELU", y_zp=-128),
    "fc-5-rows-relu": lambda: conv_model("FULLY_CONNECTED", (5, 24), (12, 24), (5, 12), per_channel=False, y_zp=-128,
                                         fused_activation_function="RELU"),   # a fully connected layer's rows
}


def test_a_band_holds_as_many_pairs_as_its_bytes_allow_and_no_more_than_the_rows():
    assert pair_bytes(8) == 40 and band_pairs(2304, 8) == BAND_BYTES // 40
    assert band_pairs(5, 8) == 3   # (the last pair the odd row twice)
    assert band_pairs(100, 256) == 1


@pytest.mark.parametrize("rows, channels, depth, input_rows, suits", [
    (16, 16, 8, True, True),
    (16, 16, 8, False, False),   # im2col rows
    (1, 16, 8, True, False),     # one row
    (16, 6, 8, True, False),     # a partial quad
    (16, 16, 6, True, False),    # a partial group
    (16, 16, 64, True, True),
    (16, 16, 68, True, False),   # more groups than its straight code
])
def test_which_gemms_the_band_kernel_computes(rows, channels, depth, input_rows, suits):
    assert band_suits(rows, channels, depth, input_rows) is suits


def kernels(model: bytes, cpu: str, tmp_path) -> list[str]:
    """The variants of the model's one layer on `cpu`, the default first."""
    (tmp_path / "m.tflite").write_bytes(model)
    data = prepare_ops(read_model(tmp_path / "m.tflite"), get_cpu(cpu))[0]
    return [v.kernel for v in op_def(data.op.type).variants(data)]


def band_tuning(model: bytes, cpu: str, tmp_path) -> Tuning:
    """A tuning file's choice of the band kernel for the model's one layer."""
    (tmp_path / "m.tflite").write_bytes(model)
    data = prepare_ops(read_model(tmp_path / "m.tflite"), get_cpu(cpu))[0]
    assert "2x4/band" in kernels(model, cpu, tmp_path)
    return Tuning({layer_key(data): Variant("2x4/band")})


@pytest.mark.parametrize("cpu, depth, out_c, activation, y_zp, kernel", [
    ("cortex-m4", 8, 16, "NONE", 5, "2x4/band"),
    ("cortex-m4", 32, 64, "RELU", -128, "2x4/band"),
    ("cortex-m4", 8, 128, "NONE", 5, "2x4/band"),
    ("cortex-m4", 40, 8, "NONE", 5, "2x4/band"),
    ("cortex-m4", 48, 8, "NONE", 5, "2x4/fused"),      # deeper rows: the quads kernel's pairs
    ("cortex-m4", 8, 16, "RELU", 5, "2x2/fused"),      # clamped outputs
    ("cortex-m33", 16, 32, "NONE", 5, "2x4/band"),
    ("cortex-m33", 32, 64, "NONE", 5, "2x4/fused"),    # a pair's many quads
    ("cortex-m7", 8, 16, "NONE", 5, "2x2/fused"),
])
def test_few_channel_pointwise_layers_take_the_band_kernel_on_the_m4_and_m33(cpu, depth, out_c, activation, y_zp,
                                                                               kernel, tmp_path):
    assert kernels(pointwise_image(6, 6, depth, out_c, activation, y_zp), cpu, tmp_path)[0] == kernel


def test_under_a_ram_limit_its_rows_are_packed_a_pair_at_a_time(tmp_path):
    (tmp_path / "m.tflite").write_bytes(BAND_MODELS["band-2-groups"]())
    data = prepare_ops(read_model(tmp_path / "m.tflite"), get_cpu("cortex-m4"))[0]
    assert op_def(data.op.type).leaner(data, Variant("2x4/band")) == Variant("2x4/fused")


def test_clamped_outputs_and_im2col_rows_do_not_offer_it(tmp_path):
    assert "2x4/band" not in kernels(pointwise_image(6, 6, 8, 16, "RELU", 5), "cortex-m4", tmp_path)
    assert "2x4/band" in kernels(pointwise_image(6, 6, 64, 64), "cortex-m7", tmp_path)   # mtk tune's to measure


@pytest.mark.slow
@pytest.mark.parametrize("name", BAND_MODELS)
def test_the_band_kernel_is_bit_exact_on_the_host(name, tmp_path):
    model = BAND_MODELS[name]()
    assert_bit_exact_on_c_paths(model, tmp_path, tuning=band_tuning(model, "cortex-m4", tmp_path))
    source = (tmp_path / "lib" / "src" / "tvmgen_default_kernels.c").read_text()
    assert len(re.findall(r"mtk_gemm_band_fused_s8\(", source)) == 2   # the prototype, the call
