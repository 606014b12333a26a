"""The firmware core's command parser and framing, built for the host with gcc and driven over
stdin/stdout (port: firmware/host/mtk_port_host.c, model: tests/fixtures/fake_compiled)."""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mtk.paths import FIRMWARE
from mtk.compiled import CompiledModel
from mtk.platforms.firmware import render_glue

from checkout import FAKE

BOOT = ["m-timestamp-mode-performance", "m-lap-us-0", "m-init-done", "m-ready"]
INPUT = bytes(range(64))
# FNV-1a of INPUT as 4 int8 outputs, dequantised with the fake model's scale 0.25, zero point 3
OUTPUT_HEX = "05093a6d"
RESULTS = "m-results-[0.500,1.500,13.750,26.500]"
LOAD = f"db load 64%db {INPUT[:32].hex()}%db {INPUT[32:].hex()}%"


def _build(out: Path, profile: bool) -> Path:
    gcc = shutil.which("gcc") or pytest.skip("no host gcc")
    glue = out / "model_glue.c"
    glue.write_text(render_glue(CompiledModel.load(FAKE)))
    flags = ["-DMTK_PROFILE", "-include", str(FIRMWARE / "mtk_layer_hook.h")] if profile else []
    binary = out / ("firmware_profile" if profile else "firmware")
    subprocess.run([gcc, "-O1", "-Wall", "-Werror", *flags, f"-I{FIRMWARE}", f"-I{FAKE / 'include'}", "-o", str(binary),
                    str(FIRMWARE / "mtk_core.c"), str(FIRMWARE / "mtk_mlperf.c"), str(FIRMWARE / "host" / "mtk_port_host.c"),
                    str(glue),
                    str(FAKE / "src" / "default_lib.c")], check=True)
    return binary


@pytest.fixture(scope="module")
def firmware(tmp_path_factory) -> Path:
    return _build(tmp_path_factory.mktemp("host_fw"), profile=False)


@pytest.fixture(scope="module")
def profiled_firmware(tmp_path_factory) -> Path:
    return _build(tmp_path_factory.mktemp("host_fw_profile"), profile=True)


def talk(binary: Path, data: bytes | str, status: int = 0) -> list[str]:
    """Feed `data` to the firmware; its output lines after the boot banner, without the exit line."""
    result = subprocess.run([str(binary)], input=data.encode() if isinstance(data, str) else data,
                            capture_output=True, timeout=10)
    lines = result.stdout.decode().split("\r\n")
    assert lines[:4] == BOOT
    assert lines[-1] == f"exit {status}\n" and result.returncode == status
    return lines[4:-1]


def test_boot_and_empty_input(firmware):
    assert talk(firmware, b"") == []


def test_name_profile_timestamp(firmware):
    lines = talk(firmware, "name%profile%timestamp%")
    assert lines[:5] == ["m-name-dut-[mtk]", "m-ready", "m-profile-[ULPMark for tinyML Firmware V0.0.1]",
                         "m-model-[fake_checksum.tflite]", "m-ready"]
    assert lines[5].startswith("m-lap-us-") and lines[5][9:].isdigit() and lines[6] == "m-ready"


def test_unknown_and_empty_commands(firmware):
    assert talk(firmware, "bogus arg%%  %") == ["e-[Unknown command: bogus]", "m-ready", "m-ready", "m-ready"]


def test_db_load_and_print(firmware):
    """`db print` prints every loaded byte, 8 a line, whatever its arguments (as the reference API)."""
    lines = talk(firmware, "db load 10%db 00112233445566778899%db print 2 3%")
    assert lines == ["m-[Expecting 10 bytes]", "m-ready", "m-load-done", "m-ready",
                     "m-buffer-00-11-22-33-44-55-66-77", "m-buffer-88-99", "", "m-ready"]


@pytest.mark.parametrize("command, error", [
    ("db 00", "e-[No load in progress: db load N first]"),
    ("db load 65", "Supplied buffer size 65 exceeds maximum of 64\n"),   # sic: "\n" only, as the reference
    ("db load 0", "e-[Command 'db load' must be >0 bytes]"),
    ("db load x1", "e-[Command 'db load' must be >0 bytes]"),
    ("db load", "e-[Command 'db load' requires the # of bytes]"),
    ("db", "e-[Command 'db' requires a subcommand]"),
    ("infer 0", "e-[Inference iterations must be >0]"),
    ("infer x", "e-[Inference iterations must be >0]"),
    ("infer 1 -1", "e-[Inference warmup must be >=0]"),
    ("mtk-stats 0", "e-[mtk-stats N must be 1..32]"),
    ("mtk-stats 33", "e-[mtk-stats N must be 1..32]"),
    ("mtk-stats 1x", "e-[Invalid number: 1x]"),
    ("mtk-layers", "e-[Built without profiling]"),
])
def test_refused_commands(firmware, command, error):
    transcript = error if error.endswith("\n") else error + "\r\n"
    assert "\r\n".join(talk(firmware, command + "%")) == transcript + "m-ready"


def test_bad_hex(firmware):
    assert talk(firmware, "db load 4%db 123%db 11zz%") == [
        "m-[Expecting 4 bytes]", "m-ready", "e-[Insufficent number of hex digits]", "m-ready",
        "e-[Invalid hex digit 'zz']", "m-ready"]


def test_infer_results_and_outputs(firmware):
    lines = talk(firmware, LOAD + "infer 2 1%results%mtk-out%")[5:]
    assert lines[:3] == ["m-warmup-start-1", "m-warmup-done", "m-infer-start-2"]
    t0, t1 = (int(line[len("m-lap-us-"):]) for line in lines[3:5])
    assert lines[3].startswith("m-lap-us-") and t1 >= t0
    assert lines[5:] == ["m-infer-done", RESULTS, "m-ready", RESULTS, "m-ready",
                         f"m-mtk-out-[{OUTPUT_HEX}]", "m-ready"]


def test_info_and_stats(firmware):
    lines = talk(firmware, "mtk-info%mtk-stats 3%")
    assert lines[0] == "m-mtk-info-[model:fake_checksum.tflite,arena:256,input:64,output:4,unit:ticks,layers:0]"
    assert lines[2] == "m-mtk-stats-[n:3,min:7,median:7,max:7]"


def test_layers_in_profiling_build(profiled_firmware):
    lines = talk(profiled_firmware, "mtk-info%infer 1 0%mtk-layers%")
    assert lines[0].endswith(",layers:2]")
    assert lines[-2:] == ["m-mtk-layers-[7,7]", "m-ready"]


def test_exit_status(firmware):
    assert talk(firmware, "mtk-exit 5%name%", status=5) == ["m-mtk-exit-5"]


def test_overlong_command_is_refused_whole(firmware):
    assert talk(firmware, "x" * 300 + "%name%") == ["e-[Command too long]", "m-ready", "m-name-dut-[mtk]", "m-ready"]
    assert talk(firmware, "name " + "1" * 75 + "%") == ["m-name-dut-[mtk]", "m-ready"]  # exactly 80 characters


def test_control_and_high_bytes_are_dropped(firmware):
    assert talk(firmware, b"\x00\xff\r\nna\x1b\x80me\n%") == ["m-name-dut-[mtk]", "m-ready"]


def test_partial_lines_across_writes(firmware):
    process = subprocess.Popen([str(firmware)], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    for piece in (b"na", b"me", b"%db lo", b"ad 2%db 0", b"1ff%"):
        process.stdin.write(piece)
        process.stdin.flush()
        time.sleep(0.01)
    out, _ = process.communicate(timeout=10)
    assert out.decode().split("\r\n")[4:-1] == [
        "m-name-dut-[mtk]", "m-ready", "m-[Expecting 2 bytes]", "m-ready", "m-load-done", "m-ready"]


@settings(max_examples=40, deadline=None)
@given(garbage=st.binary(max_size=200))
def test_garbage_then_resync(firmware, garbage):
    """Any garbage, then a lone '%' to flush it: the firmware answers the next command correctly."""
    lines = talk(firmware, garbage + b"%name%")
    assert lines[-2:] == ["m-name-dut-[mtk]", "m-ready"]
