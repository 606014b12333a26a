"""The cycle model: its tables, its plugin, and instruction sequences whose cycles the Arm TRMs state,
assembled (tests/target/test_cycles_qemu.py runs them in QEMU under the real plugin)."""

from __future__ import annotations

import re
import subprocess

import pytest

from mtk.cycles import memory, plugin, tables
from mtk.cycles.model import CycleModel, CycleTrace, Measured
from mtk.errors import MtkError

PLUGIN_CLASSES = re.findall(r"X\((\w+)\)", re.search(r"#define CLASSES\(X\)(.*?)\n\n", plugin.SOURCE.read_text(),
                                                       re.S).group(1))


@pytest.mark.parametrize("cpu", list(tables.TABLES))
def test_every_table_costs_every_class_and_cites_its_source(cpu):
    table = tables.TABLES[cpu]
    assert list(table.rows) == PLUGIN_CLASSES
    assert all(row.source for row in table.rows.values())


def test_feature_suffixes_use_the_core_table_and_unknown_cores_are_refused():
    assert tables.core_table("cortex-m33+nodsp+nofp").name == "cortex-m33"
    with pytest.raises(MtkError, match="no table for cortex-m85"):
        tables.core_table("cortex-m85")


def test_plugin_builds_once_per_source(tmp_path, monkeypatch):
    monkeypatch.setenv(plugin.CACHE_ENV, str(tmp_path))
    built = plugin.ensure_plugin()
    assert built.parent == tmp_path / "qemu-plugins" and built.is_file()
    mtime = built.stat().st_mtime_ns
    assert plugin.ensure_plugin() == built and built.stat().st_mtime_ns == mtime


def test_plugin_compiles_without_warnings(tmp_path):
    subprocess.run(["gcc", "-shared", "-fPIC", "-O2", "-Wall", "-Wextra", "-Werror", "-o", str(tmp_path / "p.so"),
                    str(plugin.SOURCE)], check=True)


def test_memory_timing_lines_cover_each_role_range():
    timing = memory.memory_timing_from_yaml({
        "flash": {"wait_states": 5, "prefetch": True, "icache": {"bytes": 1024, "line": 32, "ways": 32}},
        "ram": {"wait_states": 0}})
    lines = memory.plugin_lines(timing, {"flash": [(0, 0x400000)], "ram": [(0x20000000, 0x1000)]})
    assert lines == ["region 0x0 0x400000 5 1 0", "region 0x20000000 0x20001000 0 0 0", "icache 1024 32 32",
                     "param prefetch 1"]


@pytest.mark.parametrize("entry, message", [
    ({"rom": {"wait_states": 1}}, "roles"),
    ({"flash": {"wait_states": 1, "icache": {"bytes": 100, "line": 24, "ways": 1}}}, "power-of-two"),
])
def test_bad_memory_timing_is_refused(entry, message):
    with pytest.raises(ValueError, match=message):
        memory.memory_timing_from_yaml(entry)


def test_trace_reads_whole_lines_and_keeps_the_last_inference_layers(tmp_path):
    out = tmp_path / "cycles.txt"
    trace = CycleTrace(out, CycleModel(tables.core_table("cortex-m4"), 25_000_000))
    out.write_text("layer 0 10 15 3 1\nlayer 2 5 9 0 2\ninference 0x100 20 30 4 3 7\nlayer 0 11 16 0 0\ninfer")
    assert trace.take_inferences() == [Measured(20, 30, fetch_waits=4, data_waits=3, uart_bytes=7)]
    assert trace.last_layers() == {0: Measured(10, 15, 3, 1), 2: Measured(5, 9, 0, 2)}
    with open(out, "a") as f:
        f.write("ence 0x100 21 31 0 0 9\n")
    assert [m.cycles for m in trace.take_inferences()] == [31]
    assert {i: m.cycles for i, m in trace.last_layers().items()} == {0: 16}
    assert trace.take_inferences() == []


# ---- TRM sequences, run in QEMU (r0: a RAM buffer, r2 = 4, r3 = 7; see mtk.cycles.sequences) ----

# ---- the model in firmware runs: the fake model's profiling build (tests/target/test_qemu.py) ----

# ---- estimated cycles in the commands' reports ----

DIGITS = plugin.SOURCE.parents[3] / "models" / "digits_cnn_int8.tflite"


def test_emulate_is_for_physical_boards(capsys):
    from mtk.cli import main
    assert main(["run", str(DIGITS), "--board", "mps2/an386", "--emulate"]) == 2
    assert "--emulate runs a physical board's code in QEMU: not with mps2/an386" in capsys.readouterr().err


# ---- MLPerf Tiny timestamps under QEMU (mtk serve) ----

class _FakeTrace:
    def __init__(self, clock_hz):
        self.model = CycleModel(tables.core_table("cortex-m4"), clock_hz)
        self.pending = []

    def take_inferences(self, until_uart=None):
        taken = [m for m in self.pending if until_uart is None or m.uart_bytes <= until_uart]
        self.pending = self.pending[len(taken):]
        return taken


def test_laps_put_the_inferences_at_their_estimated_cycles():
    from mtk.cycles.laps import LapClock
    trace = _FakeTrace(120_000_000)
    clock = LapClock(trace, 25)                      # firmware: 25 instructions a microsecond
    assert clock.rewrite(b"m-lap-us-40\r", 100) == b"m-lap-us-8\r"   # 1,000 instructions at 120 MHz
    trace.pending = [Measured(2_000, 3_000, uart_bytes=120), Measured(2_000, 3_000, uart_bytes=120),
                     Measured(2_000, 3_000, uart_bytes=150)]
    # 4,500 instructions later: two inferences of 2,000 (3,000 cycles each), 500 others; the third ended after
    assert clock.rewrite(b"m-lap-us-220\r", 140) == b"m-lap-us-%d\r" % round((1_000 + 500 + 6_000) / 120)
    assert clock.rewrite(b"m-infer-done\r", 160) == b"m-infer-done\r" and len(trace.pending) == 1


def test_boards_carry_their_memory_timing():
    from mtk.boards import all_boards, get_board
    assert get_board("nucleo_l4r5zi").to_json()["memory_timing"]["flash"]["wait_states"] == 5
    assert get_board("nucleo_h7a3zi_q").to_json()["memory_timing"]["flash"]["icache"] == \
        {"bytes": 16384, "line": 32, "ways": 2}
    assert all(not b.memory_timing for b in all_boards() if b.qemu)   # the FPGA images: zero wait
    assert all({t.role for t in b.memory_timing} == {"flash", "ram"} for b in all_boards() if b.memory_timing)
