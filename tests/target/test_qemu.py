"""End to end in QEMU: render, build, run the firmware and drive it over the TCP serial port."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mtk.compiled import CompiledModel
from mtk.boards import all_boards, get_board
from mtk.errors import TargetError
from mtk.platforms import ProjectOptions, get_platform
from mtk.runners import get_runner
from mtk.transport.protocol import FirmwareClient

from checkout import FAKE, SHARED_MODELS

pytestmark = pytest.mark.qemu

QEMU_BOARDS = [b.name for b in all_boards() if b.qemu]
INPUT = bytes(range(64))
OUTPUT = bytes.fromhex("05093a6d")  # FNV-1a of INPUT
RESULTS = [0.5, 1.5, 13.75, 26.5]   # OUTPUT dequantised: (q - 3) * 0.25


def build(board: str, out: Path, compiled: Path | CompiledModel = FAKE, profile: bool = False) -> Path:
    platform = get_platform("baremetal")
    model = compiled if isinstance(compiled, CompiledModel) else CompiledModel.load(compiled)
    return platform.build(platform.render(model, get_board(board), out, ProjectOptions(profile=profile)))


@pytest.fixture(scope="module")
def firmware(tmp_path_factory) -> dict[str, Path]:
    """A profiling build of the fake model for every QEMU board."""
    return {board: build(board, tmp_path_factory.mktemp("fw"), profile=True) for board in QEMU_BOARDS}


def eembc_session(board: str, elf: Path) -> tuple[list[float], int]:
    """Drive the firmware with EEMBC commands only; return the results and the latency in virtual µs."""
    with get_runner(get_board(board)).start(elf) as session:
        client = FirmwareClient(session.link)
        client.wait_boot()
        assert client.name() == "mtk"
        assert client.command("profile")[1] == "m-model-[fake_checksum.tflite]"
        client.load_input(INPUT)
        timing = client.infer(count=10, warmup=2)
        assert client.results() == timing.results
        return timing.results, timing.end_us - timing.start_us


@pytest.mark.parametrize("board", QEMU_BOARDS)
def test_eembc_commands_alone(firmware, board):
    results, window_us = eembc_session(board, firmware[board])
    assert results == RESULTS
    assert window_us > 0


@pytest.mark.parametrize("board", ["mps2/an386", "qemu_cortex_m3"])
def test_instruction_counts_identical_across_runs(firmware, board):
    runs = []
    for _ in range(2):
        with get_runner(get_board(board)).start(firmware[board]) as session:
            client = FirmwareClient(session.link)
            client.wait_boot()
            assert client.info().unit == "instructions"
            client.load_input(INPUT)
            stats = client.stats(5)
            assert client.read_output() == OUTPUT
            layers = client.layers()
            runs.append((stats, layers))
            client.exit(0)
            assert session.wait_exit(5) == 0
    (stats, layers), (stats2, layers2) = runs
    assert stats == stats2 and layers == layers2
    assert stats.min == stats.median == stats.max > 10_000
    assert len(layers) == 2 and sum(layers) <= stats.median < sum(layers) + 1_000


def test_exit_status_is_reported(firmware):
    with get_runner(get_board("mps2/an386")).start(firmware["mps2/an386"]) as session:
        client = FirmwareClient(session.link)
        client.wait_boot()
        client.exit(42)
        assert session.wait_exit(5) == 42


def test_timeout_shows_last_output(firmware):
    with get_runner(get_board("mps2/an386")).start(firmware["mps2/an386"]) as session:
        client = FirmwareClient(session.link, timeout=0.3)
        client.wait_boot()
        with pytest.raises(TargetError, match=r"(?s)did not answer at boot within 0.3 s.*\| m-init-done.*\| m-ready"):
            client.wait_boot()
    assert session.process.poll() is not None  # QEMU was stopped


def test_target_dying_mid_inference(firmware):
    with get_runner(get_board("qemu_cortex_m3")).start(firmware["qemu_cortex_m3"]) as session:
        client = FirmwareClient(session.link)
        client.wait_boot()
        client.load_input(b"\xee\xee" + INPUT[2:])
        with pytest.raises(TargetError, match=r"(?s)closed the serial connection.*e-\[Fault\]"):
            client.infer(1, 0)
        assert session.wait_exit(5) == 3


def test_missing_elf(tmp_path):
    with pytest.raises(TargetError, match="does not exist"):
        get_runner(get_board("mps2/an386")).start(tmp_path / "none.elf")


def test_shared_model_bit_exact_on_target(tmp_path):
    """A real model from ../shared/models through `mtk compile`, run in QEMU, against tflite-micro."""
    from mtk.compiler import compile_model
    from mtk.reference import run_reference

    model = SHARED_MODELS / "ad_fc_int8.tflite"
    if not model.exists():
        pytest.skip(f"{model} is missing")
    compiled = compile_model(model, tmp_path / "compiled", cpu="cortex-m4")
    elf = build("mps2/an386", tmp_path / "project", compiled=compiled)
    samples = [np.random.default_rng(seed).integers(-128, 128, (1, 640), dtype=np.int8) for seed in range(3)]
    with get_runner(get_board("mps2/an386")).start(elf) as session:
        client = FirmwareClient(session.link)
        client.wait_boot()
        for sample in samples:
            client.load_input(sample.tobytes())
            client.infer(1, 0)
            expected = run_reference(model, [sample])[0]
            assert client.read_output() == expected.astype(np.int8).tobytes()
