"""MLPerf Tiny conformance: mtk firmware built for a benchmark answers the reference API's commands
with the reference strings (mlcommons/tiny benchmark/api/internally_implemented.cpp), converts what
the runner sends and prints its results as the benchmark's reference submission does
(tests/mlperf_reference.py restates those code paths), and the runner's own parsers
(benchmark/runner/device_under_test.py, script.py) read its answers.

Fast tests build the firmware core for the host with stand-in models that copy their input to
their output (so the output shows the converted input); tests/target/test_mlperf_tiny_qemu.py runs
real models in QEMU over its serial port and compares with tflite-micro."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mlperf_reference as ref
from mtk import mlperf
from mtk.boards import get_board
from mtk.errors import ModelError, MtkError
from mtk.mlperf import BENCHMARKS
from mtk.paths import FIRMWARE
from mtk.platforms import ProjectOptions, get_platform
from mtk.compiled import CompiledModel
from mtk.platforms.firmware import render_glue

from checkout import FAKE

FW_VERSION = "ULPMark for tinyML Firmware V0.0.1"       # EE_FW_VERSION
HELP = [FW_VERSION, "",                                   # ee_profile_parse(), "help"
        "help         : Print this information",
        "name         : Print the name of the device",
        "timestsamp   : Generate a timetsamp",
        "db SUBCMD    : Manipulate a generic byte buffer",
        "  load N     : Allocate N bytes and set load counter",
        "  db HH[HH]* : Load 8-bit hex byte(s) until N bytes",
        "  print [N=16] [offset=0]",
        "             : Print N bytes at offset as hex",
        "infer N [W=0]: Load input, execute N inferences after W warmup loops",
        "results      : Return the result fp32 vector"]
# the runner's parsers (device_under_test.py, script.py)
RUNNER_NAME = re.compile(r'^m-(name)-dut-\[([^]]+)]$')
RUNNER_PROFILE = re.compile(r'^m-(model|profile)-\[([^]]+)]$')
RUNNER_RESULTS = re.compile(r'^m-results-\[([^]]+)\]$')
RUNNER_LAP = re.compile(r'^m-lap-us-([0-9]+)$')
RUNNER_CHUNK = 31   # DUT._max_bytes: bytes per `db` command
# stand-in quantization: (input scale, zero point, output scale, zero point) per benchmark
QUANT = {"kws01": (0.5, -3, 1 / 256, -128), "ic01": (1 / 128, 0, 1 / 256, -128),
         "vww01": (0.0078125, -1, 1 / 256, -128), "ad01": (0.0625, 5, 0.3, -7)}
COPY_MODEL = """#include <stdint.h>
#include "tvmgen_default.h"
static uint8_t places[%(out_at)d + %(out)d] __attribute__((aligned(16)));   /* the input's, then the output's */
struct tvmgen_default_inputs tvmgen_default_map_inputs(void) {
  struct tvmgen_default_inputs p = {places};
  return p;
}
struct tvmgen_default_outputs tvmgen_default_map_outputs(void) {
  struct tvmgen_default_outputs p = {places + %(out_at)d};
  return p;
}
int32_t tvmgen_default_run(struct tvmgen_default_inputs* inputs, struct tvmgen_default_outputs* outputs) {
  const uint8_t* in = (const uint8_t*)inputs->input;
  uint8_t* out = (uint8_t*)outputs->Identity;
  for (int i = 0; i < %(out)d; i++) out[i] = in[i %% %(in)d];
  return 0;
}
"""


def copy_model(folder: Path, benchmark: mlperf.Benchmark, output_count: int) -> CompiledModel:
    """A compiled-model folder whose output is the first `output_count` bytes of its input, repeated."""
    x_scale, x_zp, y_scale, y_zp = QUANT[benchmark.id]
    shutil.copytree(FAKE, folder)
    meta = json.loads((folder / "metadata.json").read_text())
    meta["model"] = f"{benchmark.id}_copy.tflite"
    meta["inputs"][0] |= {"shape": [1, *benchmark.input_shape], "scale": x_scale, "zero_point": x_zp,
                          "bytes": benchmark.input_count}
    meta["outputs"][0] |= {"shape": [1, output_count], "scale": y_scale, "zero_point": y_zp, "bytes": output_count}
    (folder / "metadata.json").write_text(json.dumps(meta))
    (folder / "src" / "default_lib.c").write_text(COPY_MODEL % {"out": output_count, "in": benchmark.input_count,
                                                                "out_at": -(-benchmark.input_count // 16) * 16})
    return CompiledModel.load(folder)


def host_firmware(folder: Path, model: CompiledModel, benchmark: mlperf.Benchmark | None, *defines: str) -> Path:
    gcc = shutil.which("gcc") or pytest.skip("no host gcc")
    glue = folder / "model_glue.c"
    glue.write_text(render_glue(model, benchmark))
    binary = folder / "firmware"
    subprocess.run([gcc, "-O1", "-Wall", "-Werror", *defines, f"-I{FIRMWARE}", f"-I{model.path / 'include'}",
                    "-o", str(binary), str(FIRMWARE / "mtk_core.c"), str(FIRMWARE / "mtk_mlperf.c"),
                    str(FIRMWARE / "host" / "mtk_port_host.c"), str(glue), str(model.path / "src" / "default_lib.c")],
                   check=True)
    return binary


def runner_load(data: bytes) -> str:
    """The commands DUT.load() sends."""
    return f"db load {len(data)}%" + "".join(f"db {data[i:i + RUNNER_CHUNK].hex()}%"
                                             for i in range(0, len(data), RUNNER_CHUNK))


def session(binary: Path, commands: str) -> tuple[str, str]:
    """The firmware's whole output (after its 4 boot lines, without the exit line) and its stderr."""
    result = subprocess.run([str(binary)], input=commands.encode("ascii"), capture_output=True, timeout=30, check=True)
    out = result.stdout.decode("ascii")
    boot, _, rest = out.partition("m-ready\r\n")
    assert boot.startswith("m-timestamp-mode-") and rest.endswith("exit 0\n")
    return rest[:-len("exit 0\n")], result.stderr.decode()


def answers(binary: Path, commands: str) -> list[list[str]]:
    """Each command's lines as the runner's SerialDevice splits them (on '\\n', dropping '\\r')."""
    out, _ = session(binary, commands)
    lines = [line.replace("\r", "") for line in out.split("\n")][:-1]
    replies, current = [], []
    for line in lines:
        if line == "m-ready":
            replies.append(current)
            current = []
        else:
            current.append(line)
    return replies


@pytest.fixture(scope="module")
def firmwares(tmp_path_factory) -> dict[str, tuple[Path, CompiledModel, Path, CompiledModel]]:
    """Per benchmark: (firmware, model) whose output has the benchmark's size, and an identity one."""
    built = {}
    for b in BENCHMARKS.values():
        root = tmp_path_factory.mktemp(b.id)
        head = copy_model(root / "head", b, b.output_count)
        identity = copy_model(root / "identity", b, b.input_count)
        built[b.id] = (host_firmware(root / "head", head, b), head,
                       host_firmware(root / "identity", identity, b), identity)
    return built


def wire_data(benchmark: mlperf.Benchmark, seed: int) -> bytes:
    """What the runner sends: int8 features, uint8 pixels, or float32 features with some ties
    (halfway between two quantization steps) and out-of-range values."""
    rng = np.random.default_rng(seed)
    if benchmark.wire != "float32":
        return rng.integers(0, 256, benchmark.wire_bytes).astype(np.uint8).tobytes()
    scale, zp = QUANT[benchmark.id][:2]
    steps = rng.integers(-140, 140, benchmark.input_count) + rng.choice([0.0, 0.5, 0.25, 0.49999], benchmark.input_count)
    return ((steps - zp) * scale).astype(np.float32).tobytes()


@pytest.mark.parametrize("bid", list(BENCHMARKS))
def test_reference_api_replies(firmwares, bid):
    binary = firmwares[bid][0]
    b = BENCHMARKS[bid]
    replies = answers(binary, f"name%profile%help%db load {b.db_capacity + 1}%db load 4%db 0001ff%db print%"
                      "infer%infer 0%infer 2 -1%bogus%")
    name, profile, help_lines, too_big, load, load_more, printed, infer, zero, negative, bogus = replies
    assert RUNNER_NAME.match(name[0]).group(2) == "mtk"
    assert [RUNNER_PROFILE.match(line).groups() for line in profile] == [("profile", FW_VERSION), ("model", bid)]
    assert help_lines == HELP
    assert too_big == [f"Supplied buffer size {b.db_capacity + 1} exceeds maximum of {b.db_capacity}"]
    assert load == ["m-[Expecting 4 bytes]"] and load_more == []
    assert printed == ["m-buffer-00-01-ff-00", ""]   # the 4 bytes announced, 3 of them loaded
    element = 4 if b.wire == "float32" else 1
    assert infer[:4] == [f"Input db has {3 // element} elemented, expected {b.input_count}",
                         "m-warmup-start-10", "m-warmup-done", "m-infer-start-1"]   # the reference defaults
    assert [bool(RUNNER_LAP.match(line)) for line in infer[4:6]] == [True, True] and infer[6] == "m-infer-done"
    assert RUNNER_RESULTS.match(infer[7])
    assert zero == ["e-[Inference iterations must be >0]"] and negative == ["e-[Inference warmup must be >=0]"]
    assert bogus == ["e-[Unknown command: bogus]"]


def test_replies_end_with_crlf_and_ready(firmwares):
    out, _ = session(firmwares["kws01"][0], "name%timestamp%")
    assert re.fullmatch(r"m-name-dut-\[mtk\]\r\nm-ready\r\nm-lap-us-\d+\r\nm-ready\r\n", out)


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
@pytest.mark.parametrize("bid", list(BENCHMARKS))
def test_input_conversion_is_the_reference_submissions(firmwares, bid, seed):
    """The model input (shown by the identity model's raw output) is th_load_tensor's, bit for bit;
    a load of the largest input the benchmark accepts uses its first bytes, as the reference."""
    b = BENCHMARKS[bid]
    binary, model = firmwares[bid][2:]
    data = wire_data(b, seed)
    sent = data + bytes(b.db_capacity - len(data))
    replies = answers(binary, runner_load(sent) + "infer 1 0%mtk-out%")
    load, out = replies[0], replies[-1]
    assert load == [f"m-[Expecting {b.db_capacity} bytes]"]
    expected = ref.th_load_tensor(b, data, model.inputs[0].scale, model.inputs[0].zero_point)
    assert bytes.fromhex(out[0][len("m-mtk-out-["):-1]) == expected.tobytes()


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
@pytest.mark.parametrize("bid", list(BENCHMARKS))
def test_results_are_printed_as_the_reference_submissions(firmwares, bid, seed):
    b = BENCHMARKS[bid]
    binary, model = firmwares[bid][:2]
    data = wire_data(b, seed)
    infer, results = answers(binary, runner_load(data) + "infer 1 0%results%")[-2:]
    x, y = model.inputs[0], model.outputs[0]
    outputs = np.resize(ref.th_load_tensor(b, data, x.scale, x.zero_point), b.output_count)
    expected = ref.th_results(b, outputs, y.scale, y.zero_point, data)
    assert infer[-1] == expected and results == [expected]
    values = [float(v) for v in RUNNER_RESULTS.match(expected).group(1).split(",") if v.strip()]
    assert len(values) == (1 if b.results_format == "mse" else b.output_count)


def test_vww_prints_the_reference_trailing_comma(firmwares):
    infer = answers(firmwares["vww01"][0], runner_load(bytes(27648)) + "infer 1 0%")[-1]
    assert infer[-1] == "m-results-[0.000,0.000,]"


def test_energy_mode_pulses_instead_of_printing_timestamps(tmp_path):
    b = BENCHMARKS["kws01"]
    binary = host_firmware(tmp_path, copy_model(tmp_path / "m", b, b.output_count), b, "-DMTK_ENERGY_MODE")
    result = subprocess.run([str(binary)], input=(runner_load(bytes(490)) + "infer 3 1%timestamp%").encode(),
                            capture_output=True, timeout=30, check=True)
    out = result.stdout.decode()
    assert out.startswith("m-timestamp-mode-energy\r\nm-init-done\r\nm-ready\r\n")
    assert "m-lap-us-" not in out and "m-infer-start-3\r\nm-infer-done\r\n" in out
    assert result.stderr.decode().count("timestamp pulse") == 1 + 2 + 1   # boot, infer, timestamp%


def test_benchmark_detection_and_refusals(tmp_path):
    models = {bid: copy_model(tmp_path / bid, b, b.output_count) for bid, b in BENCHMARKS.items()}
    for bid, model in models.items():
        assert mlperf.detect(model).id == bid
        assert mlperf.resolve(mlperf.AUTO, model).id == bid
    assert mlperf.detect(CompiledModel.load(FAKE)) is None
    with pytest.raises(ModelError, match="matches none of the reference models"):
        mlperf.resolve(mlperf.AUTO, CompiledModel.load(FAKE))
    with pytest.raises(ModelError, match="not the reference model's"):
        mlperf.resolve("ic01", models["kws01"])
    assert mlperf.resolve(None, models["kws01"]) is None


def _zephyr_render(tmp_path: Path, board: str, bid: str, energy: bool = False) -> Path:
    b = BENCHMARKS[bid]
    model = copy_model(tmp_path / "model", b, b.output_count)
    return get_platform("zephyr").render(model, get_board(board), tmp_path / "app",
                                         ProjectOptions(benchmark=b, energy=energy))


@pytest.mark.parametrize("bid, energy, baud", [("kws01", False, 115200), ("ad01", False, 921600),
                                               ("ad01", True, 9600), ("vww01", True, 9600)])
def test_zephyr_app_baud_and_energy_pin(tmp_path, bid, energy, baud):
    """The console at the baud rate of the runner's devices_*.yaml; energy mode's timestamp pin."""
    project = _zephyr_render(tmp_path, "nucleo_l4r5zi", bid, energy)
    overlay = (project / "boards" / "nucleo_l4r5zi.overlay").read_text()
    assert f"&lpuart1 {{\n\tcurrent-speed = <{baud}>;\n}};" in overlay
    assert ("timestamp-gpios = <&arduino_header 13 GPIO_ACTIVE_HIGH>;" in overlay) == energy
    conf = (project / "boards" / "nucleo_l4r5zi.conf").read_text()
    assert ("CONFIG_MTK_ENERGY_MODE=y" in conf) == energy
    assert f'.id = "{bid}"' in (project / "src" / "model_glue.c").read_text()


def test_zephyr_app_on_qemu_keeps_the_console_and_refuses_energy(tmp_path):
    project = _zephyr_render(tmp_path / "a", "mps2/an386", "kws01")
    overlay = (project / "boards" / "mps2_an386.overlay").read_text()
    assert "current-speed" not in overlay
    assert "CONFIG_MTK_QEMU_CLOCK_MHZ=25" in (project / "boards" / "mps2_an386.conf").read_text()
    with pytest.raises(MtkError, match="energy mode needs"):
        _zephyr_render(tmp_path / "b", "mps2/an386", "kws01", energy=True)


# ---- real models in QEMU, over its serial port ------------------------------------------------

@pytest.mark.parametrize("clock_hz, shift, fraction", [(25_000_000, 5, 0.8), (32_000_000, 4, 0.512),
                                                       (12_000_000, 6, 0.768), (31_250_000, 5, 1.0)])
def test_pacing_runs_the_guest_at_the_boards_clock_on_average(clock_hz, shift, fraction):
    """2^shift ns an instruction is at least the board's speed; running `fraction` of the time makes it."""
    from mtk.runners.qemu_pty import pacing_shift, run_fraction
    assert pacing_shift(clock_hz) == shift and run_fraction(clock_hz, shift) == pytest.approx(fraction)
    assert 1e9 / 2**shift * run_fraction(clock_hz, shift) == pytest.approx(clock_hz)
