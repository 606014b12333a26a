"""3x3 stride-1 CONV_2D as integer Winograd F(2x2, 3x3) and F(4x4, 3x3) on DSP cores (ops/winograd_dsp.py,
c/dsp/mtk_winograd_s8_dsp.h, mtk_winograd4_s8_dsp.h): the transforms' arithmetic is exactly 4 and 576 times the
convolution's, which layers take the kernels and when they are the default, and layers bit-exact with tflite-micro on
the host (odd sizes, odd channel counts, VALID and SAME padding, channel counts off the kernel's blocks, the largest
weights and inputs, dead channels); tests/target/test_winograd_dsp_qemu.py runs them on the Cortex-M4, M7 and M33."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pytest

from checkout import SHARED_MODELS
from harness import assert_bit_exact, assert_bit_exact_on_c_paths, conv, conv_model
from mtk.compiler import compile_model
from mtk.errors import ModelError
from mtk.ops import op_def, prepare_ops, winograd_dsp
from mtk.kernels.table import WINOGRAD, WINOGRAD4
from mtk.ops.base import Const
from mtk.reader import read_model
from mtk.target import get_cpu
from mtk.tflite_builder import ModelBuilder
from mtk.tuning import Tuning, layer_key

# Per transform, B^T and A'^T (A^T with the columns scaled back by G's row scales)
B_A = {
    winograd_dsp.F2: (np.array([[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]]),
                      np.array([[1, 1, 1, 0], [0, 1, -1, -1]])),
    winograd_dsp.F4: (np.array([[4, 0, -5, 0, 1, 0], [0, -4, -4, 1, 1, 0], [0, 4, -4, -1, 1, 0], [0, -2, -1, 2, 1, 0],
                                [0, 2, -1, -2, 1, 0], [0, 4, 0, -5, 0, 1]]),
                      np.array([[6, 4, 4, 1, 1, 0], [0, 4, -4, 2, -2, 0], [0, 4, 4, 4, 4, 0], [0, 4, -4, 8, -8, 24]])),
}
TRANSFORMS = {"f2": winograd_dsp.F2, "f4": winograd_dsp.F4}


def extreme_weights_model(in_c: int = 24, out_c: int = 7, hw: tuple[int, int] = (7, 9)) -> bytes:
    """Every weight ±127 (the largest sums a layer of `in_c` channels can have), SAME padding, RELU6."""
    rng = np.random.default_rng(1)
    b = ModelBuilder(description="mtk test winograd extremes")
    x = b.tensor("x", (1, *hw, in_c), "int8", scale=0.05, zero_point=-128)
    w_scale = rng.uniform(0.002, 0.004, out_c)
    weights = (127 * rng.choice([-1, 1], (out_c, 3, 3, in_c))).astype(np.int8)
    w = b.const("w", weights, scale=w_scale, zero_point=np.zeros(out_c, np.int64), axis=0)
    bias = b.const("b", rng.integers(-30000, 30000, out_c).astype(np.int32), scale=0.05 * w_scale,
                   zero_point=np.zeros(out_c, np.int64), axis=0)
    y = b.tensor("y", (1, *hw, out_c), "int8", scale=0.5, zero_point=3)
    b.op("CONV_2D", [x, w, bias], [y], padding="SAME", stride_h=1, stride_w=1, fused_activation_function="RELU6")
    b.inputs([x])
    b.outputs([y])
    return b.build()


LAYERS = {
    "16to16-8x8": lambda: conv((1, 8, 8, 16), (3, 3), 16, (8, 8), activation="RELU"),   # its default
    "5to7-odd-7x9": lambda: conv((1, 7, 9, 5), (3, 3), 7, (7, 9)),                       # odd sizes, a tail group
    "13to4-valid": lambda: conv((1, 9, 6, 13), (3, 3), 4, (7, 4), padding="VALID"),     # partial tiles, a 1-channel block
    "8to2-5x5-relu6": lambda: conv((1, 5, 5, 8), (3, 3), 2, (5, 5), activation="RELU6"),
    "32to33-valid-odd": lambda: conv((1, 6, 5, 32), (3, 3), 33, (4, 3), padding="VALID"),
    "16to3-valid-1x1": lambda: conv((1, 3, 3, 16), (3, 3), 3, (1, 1), padding="VALID"),  # one partial tile
    "3to16-first": lambda: conv((1, 6, 6, 3), (3, 3), 16, (6, 6)),                       # 8 channels of pairs
    "dead-channels": lambda: conv_model("CONV_2D", (1, 6, 7, 12), (9, 3, 3, 12), (1, 6, 7, 9), per_channel=True,
                                        dead=(2, 5), padding="SAME", stride_h=1, stride_w=1),
}


def winograd_sums(w: np.ndarray, d: np.ndarray, t: winograd_dsp.Transform) -> np.ndarray:
    """A'^T (Σ_c U ⊙ V) A' of weights [out_c, 3, 3, in_c] over one patch d [n + 2, n + 2, in_c]: [out_c, n, n]."""
    b_t, a_t = B_A[t]
    side = b_t.shape[0]
    u = winograd_dsp.transformed(w, t).reshape(w.shape[0], side, side, w.shape[3])
    v = np.einsum("ar,rsc,bs->abc", b_t, d.astype(np.int64), b_t)
    m = np.einsum("oabc,abc->oab", u, v)
    return np.einsum("ra,oab,sb->ors", a_t, m, a_t)


@pytest.mark.parametrize("t", TRANSFORMS.values(), ids=TRANSFORMS)
def test_the_integer_transform_is_scale_times_the_convolution(t):
    rng = np.random.default_rng(0)
    n = B_A[t][1].shape[0]
    w = rng.integers(-127, 128, (5, 3, 3, 7))
    d = rng.integers(-128, 128, (n + 2, n + 2, 7))
    direct = np.array([[[np.sum(w[o] * d[r:r + 3, s:s + 3]) for s in range(n)] for r in range(n)] for o in range(5)])
    assert np.array_equal(winograd_sums(w, d, t), t.scale * direct)
    assert np.abs(winograd_dsp.transformed(np.full((1, 3, 3, 1), -128), t)).max() < 1 << 15   # int16
    assert np.abs(B_A[t][0]).sum(axis=1).max() ** 2 * 128 < 1 << 15                            # |V|: int16


def test_packed_weights_hold_channel_pairs_in_sxtb16_order():
    """Per block of 3 output channels, position, pair: pair 2g is input channels (4g, 4g + 2), 2g + 1 (4g + 1,
    4g + 3); input channels past the layer's, and output channels past its last block, zero (the kernel leaves
    the pairs of V past the input channels as they were: these weights make them count for nothing)."""
    w = np.arange(2 * 9 * 5).reshape(2, 3, 3, 5) % 7 - 3
    u = winograd_dsp.transformed(w, winograd_dsp.F2)                   # [out_c, 16, in_c]
    packed = winograd_dsp.pack(w, winograd_dsp.F2).reshape(1, 16, winograd_dsp.pairs(5), 3, 2)
    assert winograd_dsp.pairs(5) == 4                                  # in fours: 8 channels
    assert packed[0, 6, 0, 1].tolist() == [u[1, 6, 0], u[1, 6, 2]]
    assert packed[0, 6, 1, 0].tolist() == [u[0, 6, 1], u[0, 6, 3]]
    assert packed[0, 6, 2, 0].tolist() == [u[0, 6, 4], 0]
    assert not packed[0, :, 3].any() and not packed[0, :, :, 2].any()


@pytest.mark.parametrize("t", TRANSFORMS.values(), ids=TRANSFORMS)
def test_the_bound_on_the_sums_is_the_weights(t):
    limit = -(-(1 << 31) // (t.scale * 128))   # Σ|w| of a channel whose scale · 128 · Σ|w| reaches 2^31
    below = np.zeros((2, 4096), np.int64)
    below[0, :] = (limit - 1) // 4096
    assert winograd_dsp.exact(below, t.scale)
    at = below.copy()
    at[1, 0] = -limit
    assert not winograd_dsp.exact(at, t.scale)


def variants(model: bytes, tmp_path, cpu: str = "cortex-m4") -> list[str]:
    (tmp_path / "m.tflite").write_bytes(model)
    data = prepare_ops(read_model(tmp_path / "m.tflite"), get_cpu(cpu))[0]
    return [v.kernel for v in op_def(data.op.type).variants(data)]


def winograd_tuning(model: bytes, cpu: str = "cortex-m4", t: winograd_dsp.Transform = winograd_dsp.F2) -> Tuning:
    """The tuning that has the model's (first) layer take the Winograd kernel of `t` on `cpu`, default or not."""
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "m.tflite").write_bytes(model)
        data = prepare_ops(read_model(Path(tmp) / "m.tflite"), get_cpu(cpu))[0]
    return Tuning({layer_key(data): t.variant})


@pytest.mark.parametrize("cpu", ["cortex-m4", "cortex-m7", "cortex-m33"])
def test_it_is_the_default_of_3x3_stride_1_layers_on_dsp_cores(cpu, tmp_path):
    """F(4x4) first, F(2x2) next."""
    assert variants(LAYERS["16to16-8x8"](), tmp_path, cpu)[:2] == [WINOGRAD4, WINOGRAD]
    # random weights over 64 channels: beyond F(4x4)'s bound
    assert variants(conv((1, 8, 8, 64), (3, 3), 5, (8, 8)), tmp_path, cpu)[0] == WINOGRAD


def test_where_f4x4_sums_overflow_int32_f2x2_is_the_default(tmp_path):
    """Every weight ±127 over 32 channels: 576 · 128 · Σ|w| beyond 2^31, 4 · 128 · Σ|w| within."""
    choices = variants(extreme_weights_model(in_c=32), tmp_path)
    assert choices[0] == WINOGRAD and WINOGRAD4 not in choices


def test_its_leaner_variants_and_band_rows_follow_the_transform(tmp_path):
    """Under a RAM limit F(4x4) steps down to F(2x2), F(2x2) to the GEMM (OpDef.leaner); bands are whole tiles of
    the kernel in use: 4 rows for F(4x4), 2 for F(2x2), 1 for the GEMM."""
    (tmp_path / "m.tflite").write_bytes(LAYERS["16to16-8x8"]())
    data = prepare_ops(read_model(tmp_path / "m.tflite"), get_cpu("cortex-m4"))[0]
    layer = op_def(data.op.type)
    f4, f2, gemm = layer.variants(data)[:3]
    assert (layer.leaner(data, f4), layer.leaner(data, f2)) == (f2, gemm)
    assert [layer.band_row_block(data, v) for v in (f4, f2, gemm)] == [4, 2, 1]


@pytest.mark.parametrize("in_c", [3, 8, 15])
def test_below_16_input_channels_it_is_the_last_choice(in_c, tmp_path):
    choices = variants(conv((1, 6, 6, in_c), (3, 3), 16, (6, 6)), tmp_path)
    assert choices[-2:] == [WINOGRAD4, WINOGRAD] and choices[0] not in (WINOGRAD4, WINOGRAD)


@pytest.mark.parametrize("model, cpu", [
    (lambda: conv((1, 8, 8, 8), (3, 3), 8, (4, 4), stride=(2, 2)), "cortex-m4"),           # stride 2
    (lambda: conv((1, 9, 9, 8), (3, 3), 8, (9, 9), dilation=(2, 2)), "cortex-m4"),         # dilated
    (lambda: conv((1, 8, 8, 8), (5, 5), 8, (8, 8)), "cortex-m4"),                          # 5x5
    (lambda: conv((1, 8, 8, 8), (3, 3), 8, (8, 8)), "cortex-m3"),                          # no DSP
    (lambda: conv((1, 8, 8, 8), (3, 3), 8, (8, 8)), "cortex-m55"),                         # Helium: its own GEMM
], ids=["stride-2", "dilated", "5x5", "m3", "m55"])
def test_other_layers_and_cores_do_not_take_it(model, cpu, tmp_path):
    assert not {WINOGRAD4, WINOGRAD} & set(variants(model(), tmp_path, cpu))


@pytest.mark.parametrize("t", TRANSFORMS.values(), ids=TRANSFORMS)
def test_flash_is_its_transformed_weights_and_channel_words(t, tmp_path):
    (tmp_path / "m.tflite").write_bytes(LAYERS["16to16-8x8"]())
    data = prepare_ops(read_model(tmp_path / "m.tflite"), get_cpu("cortex-m4"))[0]
    opdef = op_def("CONV_2D")
    consts = [a for k in opdef.lower(data, t.variant).kernels for a in k.args
              if isinstance(a, Const) and a.name != "pad"]
    words = 18 * (t.positions * 8 * 4 + 16)   # 18 channels of 8 pairs of int16 a position, 4 parameter words
    assert opdef.weight_bytes(data, t.variant) == sum(c.data.nbytes for c in consts) == words


@pytest.mark.slow
@pytest.mark.parametrize("t", TRANSFORMS.values(), ids=TRANSFORMS)
@pytest.mark.parametrize("name", LAYERS)
def test_layers_are_bit_exact_on_the_host(name, t, tmp_path):
    model = LAYERS[name]()
    assert_bit_exact_on_c_paths(model, tmp_path, tuning=winograd_tuning(model, t=t))


def extreme_inputs() -> list[list[np.ndarray]]:
    """-128 everywhere, 127 everywhere, and a checkerboard of both: the largest |V| the transform meets."""
    board = np.where(np.indices((7, 9)).sum(axis=0) % 2 == 0, 127, -128)[None, :, :, None]
    return [[np.full((1, 7, 9, 24), v, np.int8)] for v in (-128, 127)] + [[np.broadcast_to(board, (1, 7, 9, 24))
                                                                            .astype(np.int8)]]


@pytest.mark.slow
@pytest.mark.parametrize("t", TRANSFORMS.values(), ids=TRANSFORMS)
def test_the_largest_weights_and_inputs_are_bit_exact_on_the_host(t, tmp_path):
    """24 channels of ±127: within F(4x4)'s bound too (576 · 128 · 216 · 127 < 2^31)."""
    model = extreme_weights_model()
    assert_bit_exact(model, tmp_path, extreme_inputs(), cpu="cortex-m4", tuning=winograd_tuning(model, t=t),
                     plain_too=True)


def test_under_a_ram_limit_its_layers_take_f2x2_then_the_gemm(tmp_path):
    """IC's four Winograd layers F(4x4) untiled, and tiled with them (bands of whole 4-row tiles) at half TFLM's
    RAM (27,002 B of arena: 26,720); at 26,400 B, which tiling them in whole tiles does not reach, F(2x2)'s leaner
    scratch (OpDef.leaner) where the untiled arena's live bytes are above the limit (three of them; the last keeps
    F(4x4)), tiled; at 25,600 B, which tiling F(2x2) cannot reach either, the GEMM's at those three, tiled."""
    model = SHARED_MODELS / "ic_resnet8_int8.tflite"
    if not model.exists():
        pytest.skip(f"{model} is missing")
    untiled = compile_model(model, tmp_path / "untiled", cpu="cortex-m4")
    assert winograd_layers(untiled, WINOGRAD4) == 4
    tiled = compile_model(model, tmp_path / "tiled", cpu="cortex-m4", max_ram=27_002)
    assert winograd_layers(tiled, WINOGRAD4) == 4 and tiled.arena_bytes <= 27_002 and any(op.tiled for op in tiled.ops)
    lean = compile_model(model, tmp_path / "lean", cpu="cortex-m4", max_ram=26_400)
    assert (winograd_layers(lean, WINOGRAD), winograd_layers(lean, WINOGRAD4)) == (3, 1)
    assert lean.arena_bytes <= 26_400 and any(op.tiled for op in lean.ops)
    capped = compile_model(model, tmp_path / "capped", cpu="cortex-m4", max_ram=25_600)
    assert (winograd_layers(capped, WINOGRAD), winograd_layers(capped, WINOGRAD4)) == (0, 1)
    assert capped.arena_bytes <= 25_600


def winograd_layers(compiled, *kernels: str) -> int:
    """The layers taking one of `kernels` (default: either Winograd kernel)."""
    kernels = kernels or (WINOGRAD4, WINOGRAD)
    return sum(op.variant is not None and op.variant["kernel"] in kernels for op in compiled.ops)


def test_a_model_whose_winograd_weights_overflow_the_boards_flash_takes_the_gemm(tmp_path):
    """256 -> 256 channels: Winograd's int16 transformed weights (2 MiB) exceed the STM32F746's 1 MiB of flash,
    its GEMM's int8 weights (576 KiB) fit: compiled for that board, the layer takes the GEMM; for a board with room,
    Winograd. A variant the tuning file holds is kept (and the model refused when it does not fit)."""
    model = tmp_path / "wide.tflite"
    model.write_bytes(conv((1, 4, 4, 256), (3, 3), 256, (4, 4)))
    roomy = compile_model(model, tmp_path / "roomy", board="mps2/an500")
    assert roomy.ops[0].variant == winograd_dsp.F2.variant.to_json()
    tight = compile_model(model, tmp_path / "tight", board="nucleo_f746zg")
    assert tight.ops[0].variant != winograd_dsp.F2.variant.to_json()
    assert tight.constant_bytes < 1 << 20 < roomy.constant_bytes
    pinned = Tuning({roomy.ops[0].layer_key: winograd_dsp.F2.variant})
    with pytest.raises(ModelError, match="does not fit nucleo_f746zg"):
        compile_model(model, tmp_path / "pinned", board="nucleo_f746zg", tuning=pinned)
