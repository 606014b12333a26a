"""What `--lab` takes from outside, bounded: a labgrid address is HOST[:PORT] or one line of exit 2 (never a
traceback from the session thread, never a main thread waiting forever); a hardware map's size, board
count and platform names bound the work (a platform of 4,000 parts, a 10 MB map: seconds, not minutes)."""

from __future__ import annotations

import errno
import subprocess
import sys
import threading
import time

import pytest
import yaml

from mtk.errors import MtkError, TargetError
from mtk.lab import MAX_MAP_BOARDS, known_board, read_hardware_map
from mtk.labgrid_lab import coordinator_address

from checkout import REPO, toolkit_env

BAD_ADDRESSES = ["labgrid://host:notaport", "labgrid://[::1", "labgrid://:99999999", "labgrid://:20408",
                 "labgrid://host:0", "labgrid://host:20408/x", "labgrid://user@host:1", "labgrid://a b:1",
                 "labgrid://host:1\n", "labgrid://host:-1"]


@pytest.mark.parametrize("lab", BAD_ADDRESSES)
def test_a_bad_labgrid_address_is_refused(lab):
    with pytest.raises(MtkError, match="is not a coordinator address HOST"):
        coordinator_address(lab)


@pytest.mark.parametrize("lab, address", [("labgrid://host", "host"), ("labgrid://h.example:20408", "h.example:20408"),
                                          ("labgrid://[::1]:20408", "[::1]:20408"), ("labgrid://10.0.0.1:1", "10.0.0.1:1")])
def test_good_labgrid_addresses(lab, address):
    assert coordinator_address(lab) == address


def test_a_bad_lg_coordinator_is_named(monkeypatch):
    monkeypatch.setenv("LG_COORDINATOR", "host:port")
    with pytest.raises(MtkError, match="LG_COORDINATOR: 'host:port'"):
        coordinator_address("labgrid")


@pytest.mark.parametrize("lab", ["labgrid://host:notaport", "labgrid://[::1", "labgrid://:99999999"])
def test_bench_on_a_bad_address_ends_in_one_line(lab):
    done = subprocess.run([sys.executable, "-m", "mtk", "bench", str(REPO / "models" / "digits_cnn_int8.tflite"),
                           "--lab", lab], capture_output=True, text=True, env=toolkit_env(), timeout=60)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip().count("\n") == 0 and "is not a coordinator address" in done.stderr


def test_a_session_that_cannot_start_is_reported_not_waited_for():
    from mtk.labgrid_lab.coordinator import Coordinator
    outcome = []

    def connect():
        try:
            Coordinator("host:notaport")
        except TargetError as err:
            outcome.append(str(err))
    thread = threading.Thread(target=connect, daemon=True)
    thread.start()
    thread.join(30)
    assert outcome and "cannot reach the labgrid coordinator at host:notaport" in outcome[0]


def test_a_platform_of_thousands_of_parts_takes_no_time():
    start = time.monotonic()
    assert known_board("a/" * 8000 + "b") is None
    assert known_board("x" * 100_000) is None
    assert time.monotonic() - start < 1
    assert known_board("stm32f746g_disco/stm32f746xx").name == "stm32f746g_disco"
    assert known_board("mps2/an386/extra/qualifiers").name == "mps2/an386"


def map_of(count: int) -> list[dict]:
    return [{"connected": True, "id": f"ID{k}", "platform": "nucleo_f746zg", "product": "STM32 STLink",
             "runner": "openocd", "serial": f"/dev/ttyACM{k}"} for k in range(count)]


def test_a_map_of_too_many_boards_or_bytes_is_refused_quickly(tmp_path):
    path = tmp_path / "map.yaml"
    path.write_text(yaml.safe_dump(map_of(MAX_MAP_BOARDS + 1)))
    with pytest.raises(MtkError, match="1,001 boards; a hardware map lists at most 1,000"):
        read_hardware_map(path)
    path.write_text("# padding\n" * 200_000)
    start = time.monotonic()
    with pytest.raises(MtkError, match="larger than 1,048,576 bytes"):
        read_hardware_map(path)
    assert time.monotonic() - start < 1
    path.write_text(yaml.safe_dump(map_of(MAX_MAP_BOARDS)))
    assert len(read_hardware_map(path)) == MAX_MAP_BOARDS


WRITE_PAST_A_FILE_SIZE_LIMIT = """
import resource, signal, sys
from pathlib import Path
from mtk.lab import LabBoard, write_hardware_map
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)   # a write past the limit fails with EFBIG instead
resource.setrlimit(resource.RLIMIT_FSIZE, (64, 64))
boards = [LabBoard(("nucleo_f746zg",), "0" * 24, "openocd", "STM32 STLink", True, f"/dev/ttyACM{k}") for k in range(20)]
try:
    write_hardware_map(Path(sys.argv[1]), boards)
except OSError as err:
    sys.exit(err.errno)
"""


def test_a_hardware_map_that_cannot_be_written_whole_leaves_the_old_one(tmp_path):
    """A full disk (here: a file size limit) while writing the map: the old map stays, nothing beside it."""
    path = tmp_path / "lab.yaml"
    path.write_text("- old: map\n")
    done = subprocess.run([sys.executable, "-c", WRITE_PAST_A_FILE_SIZE_LIMIT, str(path)], env=toolkit_env())
    assert done.returncode == errno.EFBIG
    assert path.read_text() == "- old: map\n" and [p.name for p in tmp_path.iterdir()] == ["lab.yaml"]
