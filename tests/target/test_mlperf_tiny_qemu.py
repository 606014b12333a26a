"""MLPerf Tiny conformance in QEMU: real models answer the runner over the serial port as the reference
submission does (compared with tflite-micro), and `serve` puts a paced DUT on a pseudo-terminal."""

from __future__ import annotations

import json
import re
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest

import mlperf_reference as ref
from mtk.boards import get_board
from mtk.mlperf import BENCHMARKS

from test_mlperf_tiny import FW_VERSION, HELP, RUNNER_LAP, RUNNER_PROFILE, runner_load


def _qemu_dut(model: Path, board: str, bid: str, work: Path):
    from mtk.pipeline import build_firmware
    from mtk.runoptions import RunOptions
    from mtk.runners import get_runner
    compiled, elf = build_firmware(model, RunOptions(get_board(board), mlperf_tiny=bid), work)
    return compiled, get_runner(get_board(board)).start(elf)


def _send(link, command: str) -> list[str]:
    link.write(command.encode("ascii") + b"%")
    lines = []
    while (line := link.read_line(60)) != "m-ready":
        assert line is not None, f"no answer to {command}"
        lines.append(line)
    return lines


@pytest.mark.qemu
@pytest.mark.parametrize("board", ["mps2/an385", "mps2/an386"])   # soft float; FPU (no fused multiply-add)
def test_ad01_score_is_the_mse_of_tflite_micros_outputs(shared_model_paths, tmp_path, board):
    """The runner's commands over QEMU's UART: profile, float32 windows loaded 31 bytes a command,
    `infer 1 0`; every score is the reference's MSE of tflite-micro's outputs for that window."""
    from mtk.reference import run_reference
    model = next((p for p in shared_model_paths if p.name.startswith("ad_")), None) or pytest.skip("no AD model")
    b = BENCHMARKS["ad01"]
    compiled, session = _qemu_dut(model, board, "ad01", tmp_path)
    x, y = compiled.inputs[0], compiled.outputs[0]
    rng = np.random.default_rng(5)
    with session:
        while session.link.read_line(30) != "m-ready":   # boot
            pass
        assert [RUNNER_PROFILE.match(line).group(2) for line in _send(session.link, "profile")] == [FW_VERSION, "ad01"]
        assert _send(session.link, "help") == HELP
        for window in range(3):
            steps = rng.integers(-100, 100, b.input_count) + rng.choice([0.0, 0.5, -0.5, 0.3], b.input_count)
            data = ((steps - x.zero_point) * x.scale).astype(np.float32).tobytes()
            for command in runner_load(data).split("%")[:-1]:
                reply = _send(session.link, command)
            assert reply == ["m-load-done"]
            infer = _send(session.link, "infer 1 0")
            assert [bool(RUNNER_LAP.match(line)) for line in infer[3:5]] == [True, True]
            q = ref.th_load_tensor(b, data, x.scale, x.zero_point)
            outputs = run_reference(model, [q.reshape(x.shape)])[0].reshape(-1)
            assert infer[-1] == ref.th_results(b, outputs, y.scale, y.zero_point, data)
            assert bytes.fromhex(_send(session.link, "mtk-out")[0][len("m-mtk-out-["):-1]) == outputs.tobytes()


@pytest.mark.qemu
def test_serve_puts_a_paced_dut_on_a_pty_and_stops_on_sigterm(shared_model_paths):
    import signal
    import sys

    import serial
    model = next((p for p in shared_model_paths if p.name.startswith("ad_")), None) or pytest.skip("no AD model")
    serve = subprocess.Popen([sys.executable, "-m", "mtk", "serve", str(model), "--json"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        served = json.loads(serve.stdout.readline())
        assert served["benchmark"] == "ad01" and served["icount_shift"] == 5   # 32 ns: 80 % of the time at 25 MHz
        with serial.Serial(served["port"], 115200, timeout=0.2) as port:
            port.write(b"profile%")
            reply = b""
            deadline = time.monotonic() + 60
            while not re.search(rb"m-model-\[\w+\]\r\nm-ready\r\n", reply):
                assert serve.poll() is None and time.monotonic() < deadline, reply
                reply += port.read(256)
        assert b"m-model-[ad01]\r\n" in reply
    finally:
        serve.send_signal(signal.SIGTERM)
        _, err = serve.communicate(timeout=30)
    assert serve.returncode == 0 and err.rstrip().endswith("stopped")
