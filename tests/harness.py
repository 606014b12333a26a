"""What the tests share (test modules import from here, never from one another): the one harness that
compares mtk's outputs element by element with tflite-micro's reference kernels (the `tflite_micro`
interpreter, mtk.reference): on the host (the compiled C library through mtk.hostrun, also in the DSP
formulation) and on a target board (QEMU); the build checks of the generated C; the model builders and
hypothesis settings several test modules use; the stand-ins of the Zephyr and flashing tests."""

from __future__ import annotations

import dataclasses
import stat
import subprocess
import tempfile
from pathlib import Path
from typing import Sequence

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import armbuild
import modelgen
from mtk.boards import Board, get_board
from mtk.compiler import compile_model
from mtk.errors import ModelError
from mtk.hostrun import HostModel
from mtk.pipeline import run_model
from mtk.runoptions import RunOptions
from mtk.reference import run_reference_batch, run_reference_sequence
from mtk.target import DEFAULT_CPU, get_cpu
from mtk.tflite_builder import ModelBuilder
from mtk.tuning import Tuning

Samples = Sequence[Sequence[np.ndarray]]   # per sample, one array per model input

HYPOTHESIS = settings(max_examples=10, deadline=None, derandomize=True,
                      suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
RANDOM = settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                          HealthCheck.too_slow])
M4_FLAGS = ["-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16", "-std=c99", "-O2",
            "-Wall", "-Wextra", "-Werror"]


# ---- bit-exact with tflite-micro -----------------------------------------------------------------

def mismatches(got: np.ndarray, ref: np.ndarray) -> int:
    """Differing elements; float32 outputs must be the identical float (compared bit for bit)."""
    assert got.shape == ref.shape and got.dtype == ref.dtype, (got.shape, got.dtype, ref.shape, ref.dtype)
    if got.dtype == np.float32:
        return int((got.view(np.uint32) != ref.view(np.uint32)).sum())
    return int((got != ref).sum())


def subdir(base: Path, name) -> Path:
    """base/name, made if missing: one work folder per case of a test."""
    (base / str(name)).mkdir(exist_ok=True)
    return base / str(name)


def layer_kernel(compiled) -> str:
    """The kernel variant of a compiled model's one layer."""
    [op] = compiled.ops
    return op.variant["kernel"]


def random_samples(model: bytes, count: int = 2) -> list[list[np.ndarray]]:
    return [modelgen.random_inputs(model, seed) for seed in range(count)]


def assert_outputs_match(model: bytes, samples: Samples, outputs: Sequence[Sequence[np.ndarray]],
                         where: str = "") -> None:
    """`outputs` (per sample, per model output) equal tflite-micro's for `samples`, element by element."""
    expected = run_reference_batch(model, samples)
    assert len(outputs) == len(expected)
    for got, ref in zip(outputs, expected):
        assert len(got) == len(ref)
        for g, r in zip(got, ref):
            bad = mismatches(np.asarray(g), np.asarray(r))
            assert bad == 0, f"{where}{bad} of {r.size} outputs differ from tflite-micro"


def assert_bit_exact(model: bytes, workdir: Path | None = None, inputs: Samples | None = None, *, samples: int = 2,
                     cpu: str | None = None, tuning: Tuning | None = None, plain_too: bool = False) -> Path | None:
    """Compile `model` (for `cpu`, with `tuning`'s variants), run it on the host on `inputs` (default:
    `samples` random ones) and in tflite-micro: 0 mismatching elements. With `plain_too` and a DSP `cpu`, also
    the plain C of cores without DSP (c_path_libraries). Compiled into `workdir` (its lib/ folder returned) or a
    temporary folder."""
    if workdir is None:
        with tempfile.TemporaryDirectory() as tmp:
            assert_bit_exact(model, Path(tmp), inputs, samples=samples, cpu=cpu, tuning=tuning, plain_too=plain_too)
        return None
    if not isinstance(workdir, Path):
        raise TypeError("assert_bit_exact(model, workdir, inputs): pass the inputs as inputs=...")
    inputs = inputs or random_samples(model, samples)
    libs = c_path_libraries(model, workdir, cpu, tuning, plain_too)
    for lib in libs:
        host = HostModel(lib)
        assert_outputs_match(model, inputs, [host.run(sample) for sample in inputs], f"{lib.name}: ")
        assert_outputs_match(model, inputs, [host.run(sample, in_arena=True) for sample in inputs],
                             f"{lib.name}, I/O in the arena: ")
    return libs[0]


PLAIN_CPU = "cortex-m3"   # the plain C kernels: no DSP extension, no Helium


def c_path_libraries(model: bytes, workdir: Path, cpu: str | None = "cortex-m4", tuning: Tuning | None = None,
                     plain_too: bool = True) -> list[Path]:
    """The model compiled for `cpu` (with `tuning`'s variants) into workdir/lib, as the host runs it (a DSP core's
    kernels in their DSP formulation, the intrinsics in portable C: mtk_dsp_intrinsics.h) and, with `plain_too` for a
    DSP core, compiled for PLAIN_CPU (untuned: the variants are the DSP core's) into workdir/lib_plain."""
    path = workdir / "model.tflite"
    path.write_bytes(model)
    libs = [compile_model(path, workdir / "lib", cpu=cpu, force=True, tuning=tuning).path]
    if plain_too and get_cpu(cpu or DEFAULT_CPU).dsp:
        libs.append(compile_model(path, workdir / "lib_plain", cpu=PLAIN_CPU, force=True).path)
    return libs


def assert_bit_exact_on_c_paths(model: bytes, workdir: Path, cpu: str = "cortex-m4", tuning: Tuning | None = None
                                ) -> None:
    """Compiled for `cpu` (with `tuning`'s variants), run on the host: for a DSP core its DSP formulation (what
    Cortex-M4/M7/M33/M55 execute) and the plain C kernels of cores without DSP; bit-exact with tflite-micro."""
    assert_bit_exact(model, workdir, cpu=cpu, tuning=tuning, plain_too=True)


def assert_bit_exact_on_target(model: bytes, board: str, workdir: Path, inputs: Samples | None = None, *,
                               max_ram: int | None = None) -> int:
    """`model` built into firmware for `board` (its arena at most `max_ram`: tiled if need be), run there
    (QEMU) on `inputs` (default: 2 random samples): the outputs read back equal tflite-micro's. The
    firmware's arena bytes are returned."""
    path = workdir / "model.tflite"
    path.write_bytes(model)
    inputs = inputs or random_samples(model)
    result = run_model(path, RunOptions(board=get_board(board), runs=1, max_ram=max_ram), inputs)
    assert_outputs_match(model, inputs, result.outputs, f"{board}: ")
    return result.arena_bytes


def conv_chain(seed: int = 0) -> bytes:
    """A 16x16x3 input read by the first convolution only, then two more layers: its place is free after step 0."""
    d = modelgen.Draw(np.random.default_rng(seed))
    net = modelgen.Net("mtk io in arena")
    x = net.model_input((1, 16, 16, 3), modelgen.activation_quant(d))
    ws = modelgen.weighted_sum
    x = ws(net, d, x, "CONV_2D", (8, 3, 3, 3), 0, 27, (1, 16, 16, 8), padding="SAME", activation="NONE")
    x = ws(net, d, x, "CONV_2D", (8, 1, 1, 8), 0, 8, (1, 16, 16, 8), padding="SAME", activation="NONE")
    return net.build(ws(net, d, x, "CONV_2D", (4, 1, 1, 8), 0, 8, (1, 16, 16, 4), padding="SAME", activation="NONE"))


def fc_chain(widths: Sequence[int] = (256, 128, 128, 64), seed: int = 0) -> bytes:
    """Fully connected layers from widths[0] inputs through each next width: one weight array a layer."""
    d = modelgen.Draw(np.random.default_rng(seed))
    net = modelgen.Net("mtk fc chain")
    x = net.model_input((1, widths[0]), modelgen.activation_quant(d))
    for depth, units in zip(widths, widths[1:]):
        x = modelgen.weighted_sum(net, d, x, "FULLY_CONNECTED", (units, depth), 0, depth, (1, units),
                                  activation="RELU")
    return net.build(x)


def split_ram_an547() -> Board:
    """The AN547 with its RAM regions cut down (DTCM 48 KB, the system region; SRAM 40 KB), so that fc_chain()'s
    61 KB of constants fit neither whole, only split (--weights-in-ram)."""
    board = get_board("mps3/an547")
    dtcm, sram = board.ram_regions
    return dataclasses.replace(board, ram_bytes=88 * 1024, ram_regions=(dataclasses.replace(dtcm, size=48 * 1024),
                                                                        dataclasses.replace(sram, size=40 * 1024)))


STEPS = 10   # inferences of a stream, the state carried from one to the next


def host_model(model: bytes, workdir: Path) -> HostModel:
    """`model` compiled into `workdir`, loaded on the host."""
    (workdir / "model.tflite").write_bytes(model)
    return HostModel(compile_model(workdir / "model.tflite", workdir / "lib", force=True))


def assert_stream_bit_exact(model: bytes, host: HostModel, seed: int = 0) -> list[np.ndarray]:
    """STEPS inferences from a reset, each output equal to tflite-micro's on the same stream."""
    samples = [modelgen.random_inputs(model, seed * 100 + s) for s in range(STEPS)]
    host.reset()
    got = [host.run(sample)[0] for sample in samples]
    for step, (g, want) in enumerate(zip(got, run_reference_sequence(model, samples))):
        bad = mismatches(g, want[0])
        assert bad == 0, f"step {step}: {bad} of {g.size} outputs differ from tflite-micro"
    return got


def assert_state_carries_and_reset_restarts(model: bytes, host: HostModel) -> None:
    """A stream differs from the same samples each run from a fresh state, and replays after reset()."""
    first = assert_stream_bit_exact(model, host, seed=1)
    samples = [modelgen.random_inputs(model, 100 + s) for s in range(STEPS)]
    stateless = run_reference_batch(model, samples)   # every sample from a fresh state
    assert any((g != s[0]).any() for g, s in zip(first, stateless)), "the state changed nothing"
    again = assert_stream_bit_exact(model, host, seed=1)   # reset() inside: the same stream again
    assert all((a == b).all() for a, b in zip(first, again))


def random_models_test(family: str, max_examples: int = 10):
    """A test: `max_examples` models of modelgen's `family`, each bit-exact with TFLM."""
    @settings(HYPOTHESIS, max_examples=max_examples)
    @given(model=modelgen.strategies[family])
    def test(model):
        assert_bit_exact(model)
    test.__doc__ = f"modelgen's {family} models are bit-exact with TFLM"
    return test


def check_random_models(op: str, tmp_path_factory) -> None:
    """modelgen's random single-op models of `op`: bit-exact, and the C builds for Cortex-M4."""
    @RANDOM
    @given(model=modelgen.strategies[op])
    def check(model):
        work = tmp_path_factory.mktemp(op.lower())
        assert_builds_for_cortex_m4(assert_bit_exact(model, work), work)
    check()


def compile_error(model: bytes) -> str:
    """The message of the ModelError compiling `model` raises."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "model.tflite"
        path.write_bytes(model)
        with pytest.raises(ModelError) as err:
            compile_model(path, Path(tmp) / "lib")
    return err.value.message


# ---- the generated C on Cortex-M -----------------------------------------------------------------

def undefined_symbols(model: bytes, cpu: str, tmp: Path) -> set[str]:
    """Compile `model` for `cpu`; what its C, built with warnings as errors, leaves undefined."""
    tmp.mkdir(parents=True, exist_ok=True)
    (tmp / "model.tflite").write_bytes(model)
    return armbuild.undefined_symbols(compile_model(tmp / "model.tflite", tmp / f"lib_{cpu}", cpu=cpu).path,
                                      cpu, tmp)


def assert_example_c_builds(families: tuple[str, ...], cpu: str, tmp: Path) -> None:
    """modelgen's example models of `families` compile to C that builds for `cpu` with no undefined symbol."""
    models = modelgen.example_models(seed=3)
    for family in families:
        symbols = undefined_symbols(models[family], cpu, tmp / family)
        assert not symbols, f"{family} on {cpu} needs {sorted(symbols)}"


def assert_builds_for_cortex_m4(folder: Path, workdir: Path) -> None:
    gcc = armbuild.arm_gcc()
    for src in sorted((folder / "src").glob("*.c")):
        result = subprocess.run([gcc, *M4_FLAGS, "-I", str(folder / "include"), "-c", str(src),
                                 "-o", str(workdir / f"{src.stem}.o")], capture_output=True, text=True)
        assert result.returncode == 0, result.stderr


# ---- models several test modules build -------------------------------------------------------------

def single_op(op: str, x_shape, y_shape, params: list[np.ndarray] = (), x_quant=(0.05, 3), y_quant=None,
              dtype: str = "int8", **options) -> bytes:
    """x -> op(x, *constant int32 params) -> y, int8 (or `dtype`) with y quantized like x unless told."""
    b = ModelBuilder(description=f"test {op}")
    x = b.tensor("x", x_shape, dtype, scale=x_quant[0], zero_point=x_quant[1])
    y_quant = y_quant or x_quant
    y = b.tensor("y", y_shape, dtype, scale=y_quant[0], zero_point=y_quant[1])
    consts = [b.const(f"p{i}", np.asarray(p, dtype=np.int32)) for i, p in enumerate(params)]
    b.op(op, [x, *consts], [y], **options)
    b.inputs([x])
    b.outputs([y])
    return b.build()


def single_op_model(op: str, inputs: Sequence, output: tuple, **options) -> bytes:
    """One op. `inputs`: (shape, scale, zero_point) for a model input, or a numpy array (int8
    constant, per-tensor (scale, zero_point) in `const_quant`, or an int32 constant without one);
    `output`: (shape, scale, zero_point)."""
    b = ModelBuilder(description=f"mtk test {op}")
    const_quant = options.pop("const_quant", (1.0, 0))
    model_inputs, indices = [], []
    for k, spec in enumerate(inputs):
        if isinstance(spec, np.ndarray):
            quant = dict(scale=const_quant[0], zero_point=const_quant[1]) if spec.dtype == np.int8 else {}
            indices.append(b.const(f"c{k}", spec, **quant))
        else:
            indices.append(b.tensor(f"in{k}", spec[0], "int8", scale=spec[1], zero_point=spec[2]))
            model_inputs.append(indices[-1])
    y = b.tensor("out", output[0], "int8", scale=output[1], zero_point=output[2])
    b.op(op, indices, [y], **options)
    b.inputs(model_inputs)
    b.outputs([y])
    return b.build()


def all_int8_pairs() -> list[np.ndarray]:
    """Inputs (256, 1) and (1, 256): broadcast together they cover every pair of int8 values."""
    values = np.arange(-128, 128, dtype=np.int8)
    return [values.reshape(256, 1), values.reshape(1, 256)]


def conv_model(op: str, in_shape, w_shape, out_shape, *, per_channel: bool, seed: int = 0, x_scale: float = 0.05,
               y_scale: float = 0.2, y_zp: int = 5, dead: tuple[int, ...] = (), w_scales: np.ndarray | None = None,
               **options) -> bytes:
    """One `op` layer of random weights and biases (per-channel weight scales `w_scales` where given); `dead`
    (CONV_2D, FULLY_CONNECTED): output channels made as quantizers leave pruned ones: zero weights, biases of ±2^30
    at a tiny weight scale."""
    rng = np.random.default_rng(seed)
    b = ModelBuilder(description=f"mtk test {op}")
    x = b.tensor("x", in_shape, "int8", scale=x_scale, zero_point=-7)
    channels = w_shape[0] if op != "DEPTHWISE_CONV_2D" else w_shape[-1]
    axis = 0 if op != "DEPTHWISE_CONV_2D" else 3
    w_scale = rng.uniform(0.002, 0.02, channels) if per_channel else np.array([0.01])
    if w_scales is not None:
        w_scale = np.asarray(w_scales, np.float64)
    weights = rng.integers(-127, 128, w_shape).astype(np.int8)
    biases = rng.integers(-2000, 2000, channels).astype(np.int32)
    for k, c in enumerate(dead):
        weights[c], biases[c], w_scale[c] = 0, (-1) ** k * 2**30, 1e-9 * (k + 1)
    w = b.const("w", weights, scale=w_scale, zero_point=np.zeros(len(w_scale), np.int64), axis=axis)
    bias = b.const("b", biases, scale=x_scale * w_scale, zero_point=np.zeros(len(w_scale), np.int64), axis=0)
    y = b.tensor("y", out_shape, "int8", scale=y_scale, zero_point=y_zp)
    b.op(op, [x, w, bias], [y], **options)
    b.inputs([x])
    b.outputs([y])
    return b.build()


def long_fc_model(rows: int = 1, depth: int = 4000, units: int = 4) -> bytes:
    """A fully connected layer whose whole-row scratch would be the arena's peak."""
    return conv_model("FULLY_CONNECTED", (rows, depth), (units, depth), (rows, units), per_channel=True,
                      fused_activation_function="NONE")


def few_channel_pointwise(seed: int) -> bytes:
    """A random 1x1 CONV_2D of 1 to 3 output channels (the DSP cores' 2x2/s16 over pairs of the input's rows): 1 to 7
    rows and columns, 1 to 40 input channels, a random activation."""
    rng = np.random.default_rng(seed)
    h, w, c, out = (int(v) for v in (rng.integers(1, 8), rng.integers(1, 8), rng.integers(1, 41), rng.integers(1, 4)))
    return conv_model("CONV_2D", (1, h, w, c), (out, 1, 1, c), (1, h, w, out), per_channel=True, seed=seed,
                      padding="VALID", stride_h=1, stride_w=1, dilation_h_factor=1, dilation_w_factor=1,
                      fused_activation_function=str(rng.choice(["NONE", "RELU", "RELU6"])))


def few_channel_fc(seed: int) -> bytes:
    """A random FULLY_CONNECTED of 1-3 or 5-7 output channels (the DSP cores' 1x4/s16 over the input's row and its
    1- to 3-channel tails): 1 to 400 deep, per-tensor or per-channel weights, a random activation."""
    rng = np.random.default_rng(seed)
    depth, out = int(rng.integers(1, 401)), int(rng.choice([1, 2, 3, 5, 6, 7]))
    return conv_model("FULLY_CONNECTED", (1, depth), (out, depth), (1, out), per_channel=bool(rng.integers(2)),
                      seed=seed, fused_activation_function=str(rng.choice(["NONE", "RELU", "RELU6"])))


GEMM_MODELS = {   # a GEMM over rows of the input, over im2col taps, over gathered patches (1→N depthwise too)
    "fc": lambda: conv_model("FULLY_CONNECTED", (1, 37), (10, 37), (1, 10), per_channel=True,
                             fused_activation_function="NONE"),
    "fc-chunked": lambda: long_fc_model(rows=3, depth=1003, units=5),   # pairs of rows, a partial last chunk
    "conv-taps": lambda: conv_model("CONV_2D", (1, 5, 6, 8), (6, 3, 3, 8), (1, 5, 6, 6), per_channel=True,
                                    padding="SAME", stride_h=1, stride_w=1, dilation_h_factor=1,
                                    dilation_w_factor=1, fused_activation_function="NONE"),
    # its arena is its scratch: taps packed a kernel row at a time (chunked), an odd count of windows
    "conv-taps-dilated": lambda: conv_model("CONV_2D", (1, 9, 9, 16), (5, 3, 3, 16), (1, 5, 5, 5), per_channel=True,
                                            padding="VALID", stride_h=1, stride_w=1, dilation_h_factor=2,
                                            dilation_w_factor=2, fused_activation_function="RELU"),
    "conv-taps-one-row": lambda: conv_model("CONV_2D", (1, 5, 6, 8), (6, 1, 3, 8), (1, 5, 6, 6), per_channel=True,
                                            padding="SAME", stride_h=1, stride_w=1, dilation_h_factor=1,
                                            dilation_w_factor=1, fused_activation_function="NONE"),   # whole rows
    "conv-gather": lambda: conv_model("CONV_2D", (1, 9, 9, 3), (5, 3, 3, 3), (1, 5, 5, 5), per_channel=True,
                                      padding="SAME", stride_h=2, stride_w=2, dilation_h_factor=1,
                                      dilation_w_factor=1, fused_activation_function="RELU"),
    "depthwise-1-to-n": lambda: conv_model("DEPTHWISE_CONV_2D", (1, 9, 8, 1), (1, 3, 4, 6), (1, 5, 4, 6),
                                           per_channel=True, padding="SAME", stride_h=2, stride_w=2,
                                           depth_multiplier=6, dilation_h_factor=1, dilation_w_factor=1,
                                           fused_activation_function="RELU"),
}


def depthwise(in_shape, kernel, multiplier, out_hw, stride=(1, 1), padding="SAME", dilation=(1, 1),
              activation="RELU", seed=0, w_scales=None) -> bytes:
    channels = in_shape[3] * multiplier
    return conv_model("DEPTHWISE_CONV_2D", in_shape, (1, *kernel, channels), (1, *out_hw, channels),
                      per_channel=True, seed=seed, w_scales=w_scales, padding=padding, stride_h=stride[0],
                      stride_w=stride[1],
                      depth_multiplier=multiplier, dilation_h_factor=dilation[0], dilation_w_factor=dilation[1],
                      fused_activation_function=activation)


def conv(in_shape, kernel, out_c, out_hw, stride=(1, 1), padding="SAME", dilation=(1, 1), activation="NONE") -> bytes:
    return conv_model("CONV_2D", in_shape, (out_c, *kernel, in_shape[3]), (1, *out_hw, out_c), per_channel=True,
                      padding=padding, stride_h=stride[0], stride_w=stride[1], dilation_h_factor=dilation[0],
                      dilation_w_factor=dilation[1], fused_activation_function=activation)


LAYERS = {   # layer shapes beyond the shared models: test_ops_shapes.py, test_kernels_qemu.py
    # a keyword model's first layer (TFLM's micro_speech): 1 input channel, multiplier 8, 10×8, stride 2
    "dw-1to8-10x8-s2": lambda: depthwise((1, 49, 40, 1), (10, 8), 8, (25, 20), stride=(2, 2)),
    "dw-1to3-valid": lambda: depthwise((1, 7, 9, 1), (3, 2), 3, (5, 8), padding="VALID", activation="NONE"),
    "dw-3to6-dilated": lambda: depthwise((1, 9, 8, 3), (3, 3), 2, (9, 8), dilation=(2, 1), activation="RELU6"),
    "dw-5to20-s3": lambda: depthwise((1, 10, 10, 5), (4, 5), 4, (4, 4), stride=(3, 3)),
    "dw-7to21-valid": lambda: depthwise((1, 6, 7, 7), (2, 3), 3, (5, 5), padding="VALID"),
    "dw-67-s2": lambda: depthwise((1, 5, 6, 67), (3, 3), 1, (3, 3), stride=(2, 2)),
    "dw-6-partial": lambda: depthwise((1, 4, 4, 6), (3, 3), 1, (4, 4), activation="NONE"),
    # DSP depthwise (depthwise_dsp.py): more taps than its fixed table, an odd count, 2 groups + 1 channel, multiplier 2
    "dw-9to18-5x7-dilated": lambda: depthwise((1, 11, 10, 9), (5, 7), 2, (6, 10), stride=(2, 1), dilation=(2, 1),
                                              activation="RELU6"),
    "conv-1ch-3x3-s2": lambda: conv((1, 24, 20, 1), (3, 3), 8, (12, 10), stride=(2, 2), activation="RELU"),
    "conv-1ch-10x4-s2": lambda: conv((1, 49, 10, 1), (10, 4), 7, (25, 5), stride=(2, 2)),
    "conv-2ch-10x8-valid": lambda: conv((1, 13, 11, 2), (10, 8), 5, (4, 4), padding="VALID"),
    "conv-3ch-dilated": lambda: conv((1, 11, 9, 3), (3, 3), 5, (7, 3), stride=(1, 2), padding="VALID",
                                     dilation=(2, 2)),
}


# ---- stand-ins of the Zephyr and flashing tests -----------------------------------------------------

def zephyr_tree(root: Path, version: tuple[int, int, int] = (4, 2, 0), extra: str = "rc1") -> Path:
    (root / "cmake").mkdir(parents=True)
    major, minor, patch = version
    (root / "VERSION").write_text(f"VERSION_MAJOR = {major}\nVERSION_MINOR = {minor}\nPATCHLEVEL = {patch}\n"
                                  f"VERSION_TWEAK = 0\nEXTRAVERSION = {extra}\n")
    return root


def executable(folder: Path, name: str, first_line: str = "#!/bin/sh") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(first_line + "\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return path


RUNNERS_YAML = """\
runners:
- stm32cubeprogrammer
- openocd
- jlink
flash-runner: stm32cubeprogrammer
debug-runner: openocd
"""   # the runners.yaml of a Zephyr build for a board with three flash runners
