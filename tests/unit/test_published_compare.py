"""bench/published_compare.py: the benchmark of a model file, the best published row of a board, the
table (one real comparison in QEMU: tests/target/test_published_compare_qemu.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from checkout import REPO

sys.path.insert(0, str(REPO / "bench"))

import published_compare  # noqa: E402
from mtk.errors import DoesNotFit, MtkError  # noqa: E402

ROWS = [{"benchmark": "kws", "system": "NUCLEO-L4R5ZI [X]", "cycles_per_inference": "900", "latency_ms": "7.5",
         "stack": "slow", "submitter": "a", "version": "1.0"},
        {"benchmark": "kws", "system": "NUCLEO-L4R5ZI-P [Y]", "cycles_per_inference": "600", "latency_ms": "5",
         "stack": "fast", "submitter": "b", "version": "1.3"},
        {"benchmark": "ic", "system": "NUCLEO-L4R5ZI [X]", "cycles_per_inference": "100", "latency_ms": "1",
         "stack": "other benchmark", "submitter": "a", "version": "1.0"},
        {"benchmark": "kws", "system": "NUCLEO-H7A3ZI-Q [Z]", "cycles_per_inference": "10", "latency_ms": "1",
         "stack": "other board", "submitter": "c", "version": "1.2"},
        {"benchmark": "kws", "system": "NUCLEO-L4R5ZI [W]", "cycles_per_inference": "500", "latency_ms": "4",
         "stack": "HALE [int8 max_performance (weights in RAM)]", "submitter": "d", "version": "1.2"}]


@pytest.mark.parametrize("name, benchmark", [("kws_dscnn_int8", "kws"), ("ic_resnet8_int8", "ic"),
                                             ("vww_96_int8", "vww"), ("ad_fc_int8", "ad"), ("my-kws", "kws")])
def test_benchmark_from_the_file_name(name, benchmark):
    assert published_compare.benchmark_of(Path(f"{name}.tflite")) == benchmark


def test_a_model_of_no_benchmark_is_refused():
    with pytest.raises(MtkError, match="no MLPerf Tiny benchmark"):
        published_compare.benchmark_of(Path("digits_cnn_int8.tflite"))


def test_best_published_is_the_fewest_cycles_of_that_board_and_benchmark():
    assert published_compare.best_published(ROWS, "nucleo_l4r5zi", "kws")["submitter"] == "d"
    assert published_compare.best_published(ROWS, "nucleo_l4r5zi", "vww") is None
    assert published_compare.best_published(ROWS, "mps2/an386", "kws") is None


def test_weights_in_ram_rows_are_compared_apart_from_weights_in_flash_ones():
    assert published_compare.best_published(ROWS, "nucleo_l4r5zi", "kws", in_ram=False)["stack"] == "fast"
    assert published_compare.best_published(ROWS, "nucleo_l4r5zi", "kws", in_ram=True)["submitter"] == "d"
    assert published_compare.best_published(ROWS, "nucleo_l4r5zi", "ic", in_ram=True) is None


def test_each_board_and_benchmark_with_a_weights_in_ram_row_gets_a_second_comparison(monkeypatch, tmp_path):
    """One row with mtk's default build against the best in-flash row, one with --weights-in-ram against the best
    in-RAM row; a benchmark without an in-RAM row keeps one."""
    runs = []

    def estimate(model, board, in_ram=False, profile=False):
        runs.append((model.name, board, in_ram, profile))
        return {"median": 400 if in_ram else 450, "time_ms_at_clock": 1.0, "clock_hz": 120_000_000,
                "instructions": 300, "ram_bytes": 30_000, "code_ram_bytes": 0 if in_ram else 20_000,
                "memory_wait_cycles": {"fetch": 0, "data": 0 if in_ram else 50}, "layers": LAYERS if profile else None}

    monkeypatch.setattr(published_compare, "estimate", estimate)
    csv = tmp_path / "published.csv"
    header = ["version", "submitter", "system", "stack", "benchmark", "latency_ms", "cycles_per_inference"]
    csv.write_text("\n".join([",".join(header), *(",".join(f'"{r[k]}"' for k in header) for r in ROWS)]) + "\n")
    results = published_compare.compare([Path("kws.tflite"), Path("ic.tflite")], ["nucleo_l4r5zi"], csv)
    # the rows above 0.70 of the best published run a profiling build for their layers
    assert runs == [("kws.tflite", "nucleo_l4r5zi", False, False), ("kws.tflite", "nucleo_l4r5zi", False, True),
                    ("kws.tflite", "nucleo_l4r5zi", True, False), ("kws.tflite", "nucleo_l4r5zi", True, True),
                    ("ic.tflite", "nucleo_l4r5zi", False, False), ("ic.tflite", "nucleo_l4r5zi", False, True)]
    assert [(r["weights"], r["published"]["cycles"], r["ratio"]) for r in results] == \
        [("flash", 600, 0.75), ("RAM", 500, 0.8), ("flash", 100, 4.5)]
    assert results[0]["limits"]["core_cycles"] == 400 and results[1]["limits"]["core_cycles"] == 400
    table = published_compare.markdown(results).splitlines()
    assert table[0].startswith("| board | benchmark | weights | mtk estimated cycles (ms) |")
    assert table[3].startswith("| nucleo_l4r5zi (120 MHz) | kws | RAM | 400 (1.000) | 500 (4) | HALE [int8 ")
    assert table[2].endswith("| 0.75 | 30,000 (code 20,000) |") and table[3].endswith("| 0.80 | 30,000 |")


LAYERS = [{"index": 0, "op": "CONV_2D", "cycles": 100, "memory_wait_cycles": {"fetch": 5, "data": 10}},
          {"index": 1, "op": "DEPTHWISE_CONV_2D", "cycles": 60, "memory_wait_cycles": {"fetch": 0, "data": 0}},
          {"index": 2, "op": "CONV_2D", "cycles": 200, "memory_wait_cycles": {"fetch": 1, "data": 30}},
          {"index": 3, "op": "SOFTMAX", "cycles": 40, "memory_wait_cycles": {"fetch": 0, "data": 0}}]


def test_a_row_above_070_says_what_limits_it():
    """Its memory waits and their share, the core's cycles without them and their ratio, the three layers with the
    most cycles and their share of the layers'; rows without limits say nothing."""
    mtk = {"median": 800, "memory_wait_cycles": {"fetch": 40, "data": 160}}
    limits = published_compare.limits(mtk, LAYERS, 1_000)
    assert limits == {"memory_wait_cycles": {"fetch": 40, "data": 160}, "memory_wait_share": 0.25, "core_cycles": 600,
                      "core_ratio": 0.6, "top_layers": [
                          {"index": 2, "op": "CONV_2D", "cycles": 200, "share": 0.5, "memory_wait_cycles": 31},
                          {"index": 0, "op": "CONV_2D", "cycles": 100, "share": 0.25, "memory_wait_cycles": 15},
                          {"index": 1, "op": "DEPTHWISE_CONV_2D", "cycles": 60, "share": 0.15,
                           "memory_wait_cycles": 0}]}
    row = {"board": "nucleo_u575zi_q", "benchmark": "ad", "weights": "flash", "ratio": 0.8,
           "mtk_estimated_cycles": 800, "limits": limits}
    without = {k: v for k, v in row.items() if k != "limits"}   # at or below 0.70: no limits
    assert published_compare.limits_text([row, without]) == (
        "What limits the rows above 0.70 of the best published:\n"
        "- nucleo_u575zi_q ad flash (0.80): memory waits 200 of 800 cycles (25.0 %: fetch 40, data 160); the core's "
        "600 without them: 0.60; most cycles (profiling build): layer 2 CONV_2D 200 (50.0 %, waits 31), layer 0 "
        "CONV_2D 100 (25.0 %, waits 15), layer 1 DEPTHWISE_CONV_2D 60 (15.0 %, waits 0)")
    assert published_compare.limits_text([without]) == ""


def test_the_shared_csv_has_the_readme_boards():
    rows = list(__import__("csv").DictReader(open(published_compare.PUBLISHED, newline="")))
    for board in published_compare.DEFAULT_BOARDS:
        for benchmark in published_compare.BENCHMARKS:
            assert published_compare.best_published(rows, board, benchmark) is not None, (board, benchmark)




def test_the_shared_csv_has_bosch_on_the_cortex_m0plus_board():
    rows = list(__import__("csv").DictReader(open(published_compare.PUBLISHED, newline="")))
    best = {b: published_compare.best_published(rows, "nucleo_g0b1re", b) for b in published_compare.BENCHMARKS}
    assert {b: int(r["cycles_per_inference"]) for b, r in best.items()} == \
        {"kws": 30374941, "ic": 97412481, "vww": 90523338, "ad": 2617159}


def test_a_model_that_does_not_fit_the_board_gets_a_row_without_estimate():
    row = {"board": "nucleo_g0b1re", "benchmark": "vww", "weights": "flash", "clock_hz": 64_000_000, "ratio": None,
           "mtk_estimated_cycles": None, "published": None,
           "does_not_fit": "vww.tflite does not fit nucleo_g0b1re: needs at least 200,000 B of RAM (...)"}
    assert published_compare.markdown([row]).splitlines()[2] == \
        "| nucleo_g0b1re (64 MHz) | vww | flash | does not fit: needs at least 200,000 B of RAM (...) | - | - | - | - |"


def test_constants_that_do_not_fit_the_boards_ram_make_a_row_that_says_so(monkeypatch):
    """The STM32F746's regions (DTCM 64 KB, SRAM0 256 KB) hold none of AD's 271 KB: mtk refuses --weights-in-ram
    there, and the row beside Bosch's weights-in-RAM figure says so instead of ending the comparison."""
    def estimate(model, board, in_ram=False):
        raise DoesNotFit("ad.tflite does not fit stm32f746g_disco: its constants (271,000 B, --weights-in-ram) fit "
                         "in none of its RAM regions")

    monkeypatch.setattr(published_compare, "estimate", estimate)
    best = {"cycles_per_inference": "307776", "latency_ms": "1.425", "stack": "HALE (weights in RAM)",
            "submitter": "bosch", "version": "1.2", "system": "DISCO-F746NG"}
    row = published_compare.comparison(Path("ad.tflite"), "stm32f746g_disco", "ad", True, best)
    assert (row["mtk_estimated_cycles"], row["ratio"]) == (None, None)
    assert row["does_not_fit"].startswith("ad.tflite does not fit stm32f746g_disco")
    assert published_compare.markdown([row]).splitlines()[2] == (
        "| stm32f746g_disco (216 MHz) | ad | RAM | does not fit: its constants (271,000 B, --weights-in-ram) fit in "
        "none of its RAM regions | 307,776 (1.425) | HALE (weights in RAM) (v1.2) | - | - |")
