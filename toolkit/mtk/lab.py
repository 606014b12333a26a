"""A lab's boards in Zephyr Twister's hardware map format, so that a lab reuses the map it has:

    - connected: true
      id: 066DFF495177514867213407        # the probe's serial number
      platform: nucleo_f746zg             # a board name (a list of names is accepted too)
      product: STM32 STLink
      runner: stm32cubeprogrammer         # the Zephyr flash runner, or pyocd
      serial: /dev/ttyACM0
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import yaml

from . import ui
from .boards import Board, find_board, get_board
from .configfile import read_yaml
from .errors import MtkError
from .fsutil import atomic_output_file
from .transport.ports import SerialPort

MAX_MAP_BYTES = 1 << 20        # a thousand boards take about 150 KB
MAX_MAP_BOARDS = 1000
MAX_PLATFORM = 200             # characters of a platform name: board names and qualifiers are short
MAX_PLATFORM_PARTS = 4
UNKNOWN = "unknown"   # what Twister writes for a board it could not identify
REQUIRED = ("connected", "id", "platform", "product", "runner")
# How Twister's --generate-hardware-map guesses the runner from the probe's USB product string.
RUNNER_BY_PRODUCT = {"J-Link": "jlink", "STM32 STLink": "openocd", "MBED CMSIS-DAP": "pyocd",
                     "DAPLink CMSIS-DAP": "pyocd"}


@dataclass(frozen=True)
class LabBoard:
    platforms: tuple[str, ...]
    id: str
    runner: str
    product: str
    connected: bool
    serial: str | None = None
    notes: str | None = None

    def runner_options(self) -> dict[str, Any]:
        """What get_runner(board, **options) takes for this board."""
        return {"runner": self.runner, "serial_number": self.id, "port": self.serial}

    def to_yaml(self) -> dict[str, Any]:
        entry = {"connected": self.connected, "id": self.id,
                 "platform": self.platforms[0] if len(self.platforms) == 1 else list(self.platforms),
                 "product": self.product, "runner": self.runner}
        entry.update({key: value for key, value in (("serial", self.serial), ("notes", self.notes)) if value})
        return entry


def target_name(board: str, place: str | None) -> str:
    """The board, or for a lab's place `place (board)`: what reports tell results apart by."""
    return board if place is None else f"{place} ({board})"


@dataclass(frozen=True)
class Failure:
    """A model that did not run on a board (of a lab's place, when `place` is set)."""

    model: str
    board: str
    error: str
    place: str | None = None
    host: str | None = None

    @property
    def target_name(self) -> str:
        return target_name(self.board, self.place)

    def to_json(self) -> dict[str, str]:
        where = {"place": self.place, "host": self.host} if self.place is not None else {}
        return {**where, "model": self.model, "board": self.board, "error": self.error}


def _lab_board(entry: Any, where: str) -> LabBoard:
    if not isinstance(entry, dict):
        raise MtkError(f"{where}: expected a mapping with {', '.join(REQUIRED)}")
    missing = [key for key in REQUIRED if key not in entry]
    if missing:
        raise MtkError(f"{where}: missing {', '.join(missing)}")
    nested = [key for key in ("id", "runner", "product", "serial", "notes") if isinstance(entry.get(key), (dict, list))]
    if nested:
        raise MtkError(f"{where}: '{nested[0]}' must be a single value, not a {type(entry[nested[0]]).__name__}")
    platforms = entry["platform"] if isinstance(entry["platform"], list) else [entry["platform"]]
    if not platforms or not all(isinstance(p, str) for p in platforms) or not isinstance(entry["connected"], bool):
        raise MtkError(f"{where}: 'platform' must be a board name or a list of them, 'connected' true or false")
    serial = entry.get("serial")
    return LabBoard(tuple(platforms), str(entry["id"]), str(entry["runner"]), str(entry["product"]),
                    entry["connected"], None if serial is None else str(serial), entry.get("notes"))


def read_hardware_map(path: Path) -> list[LabBoard]:
    data = read_yaml(path, "the hardware map", max_bytes=MAX_MAP_BYTES)
    if not isinstance(data, list):
        raise MtkError(f"{path}: a hardware map is a list of boards (Zephyr Twister's format)")
    if len(data) > MAX_MAP_BOARDS:
        raise MtkError(f"{path}: {len(data):,} boards; a hardware map lists at most {MAX_MAP_BOARDS:,}")
    return [_lab_board(entry, f"{path}, board {k + 1}") for k, entry in enumerate(data)]


def write_hardware_map(path: Path, boards: list[LabBoard]) -> None:
    text = yaml.safe_dump([b.to_yaml() for b in boards], sort_keys=False, default_flow_style=False)
    with atomic_output_file(Path(path)) as tmp:
        tmp.write_text(text)


def known_board(platform: str) -> Board | None:
    """The registry board a Twister platform names; qualifiers are dropped from the right
    ("nucleo_f746zg/stm32f746xx" is nucleo_f746zg). Work bounded by the registry's names, not the
    input's: no name is longer than MAX_PLATFORM characters or MAX_PLATFORM_PARTS parts."""
    if len(platform) > MAX_PLATFORM:
        return None
    parts = platform.split("/")[:MAX_PLATFORM_PARTS]
    return next((b for end in range(len(parts), 0, -1) if (b := find_board("/".join(parts[:end]))) is not None), None)


def shown(name: str) -> str:
    """A name from a file as a message shows it: at most 60 characters, one line."""
    name = name if name.isprintable() else repr(name)
    return name if len(name) <= 60 else name[:57] + "..."


def lab_targets(path: Path) -> Iterator[tuple[Board, dict[str, Any]]]:
    """Per connected board of the map: the registry Board and the options for get_runner.
    Boards the registry does not know are skipped with a message."""
    boards = read_hardware_map(path)
    for entry in boards:
        if not entry.connected:
            continue
        board = next((b for b in map(known_board, entry.platforms) if b is not None), None)
        if board is None:
            ui.info(f"{path}: skipping probe {shown(entry.id)}: mtk knows no board "
                    f"'{shown(', '.join(entry.platforms))}' "
                    "(`mtk boards` lists them)")
            continue
        from .runners import runner_names   # not at import: `mtk ports` starts without numpy
        if entry.runner not in runner_names(board):   # a typo in the map is bad input (2), not a failed board (4)
            raise MtkError(f"{path}: probe {entry.id}: runner '{entry.runner}' cannot flash {board.name}",
                           hint=f"choose one of: {', '.join(runner_names(board))}")
        yield board, entry.runner_options()


def hardware_map_entries(ports: list[SerialPort]) -> list[LabBoard]:
    """A hardware map of the attached USB serial ports, as Twister's --generate-hardware-map
    writes one: a port whose USB ids fit several boards gets platform 'unknown' and a note."""
    entries = []
    for port in ports:
        if port.vid_pid is None or not port.serial_number:
            continue
        platform = port.boards[0] if len(port.boards) == 1 else UNKNOWN
        board_runners = get_board(platform).runners if platform != UNKNOWN else ()
        runner = board_runners[0] if board_runners else RUNNER_BY_PRODUCT.get(port.product or "", UNKNOWN)
        notes = f"one of: {', '.join(port.boards)}" if len(port.boards) > 1 else None
        entries.append(LabBoard((platform,), port.serial_number, runner, port.product or UNKNOWN, True,
                                port.device, notes))
    return entries
