"""`mtk bench --lab labgrid`: every model on every place tagged `board=<mtk board>`, wherever its
exporter is. Firmware is built once per board type; then each place, in a thread of its own, is
reserved (waiting up to the lab timeout while another client holds it), acquired, flashed and run
with every model, and released. A place that fails does not stop the others; places are released
also when mtk is interrupted (Ctrl-C, SIGTERM)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from .. import ui
from ..boards import Board
from ..errors import MtkError
from ..lab import Failure, known_board
from ..pipeline import Firmware, build_model_firmware, run_built, work_folder
from ..runoptions import RunOptions
from ..runresult import RunResult
from .coordinator import BOARD_TAG, Coordinator, LabPlace
from .place import PlaceRunner

JOIN_POLL_S = 0.2
# why a stand-in cannot carry the cycle model: QEMU 7.2 loads TCG plugins only from its command line, and
# the model's plugin takes the firmware's function addresses and writes its records on the exporter's host
STAND_IN_NO_ESTIMATE = "QEMU takes the cycle model's plugin only when it starts, given the firmware's addresses"


def lab_places(coordinator: Coordinator) -> list[tuple[LabPlace, Board]]:
    places = []
    for place in coordinator.places():
        board = known_board(place.board_tag)
        if board is None:
            ui.info(f"skipping place {place.name}: mtk knows no board '{place.board_tag}' (`mtk boards` lists them)")
        else:
            places.append((place, board))
    return places


class LabRun:
    """One bench run over a lab's places."""

    def __init__(self, coordinator: Coordinator, timeout_s: float):
        self.coordinator = coordinator
        self.timeout_s = timeout_s
        self.results: list[RunResult] = []
        self.failures: list[Failure] = []
        self._stop = threading.Event()
        self._held: set[str] = set()        # places acquired
        self._reservations: set[str] = set()  # tokens not cancelled yet
        self._lock = threading.Lock()

    def run(self, places: list[tuple[LabPlace, Board]], firmware: dict[str, list[Firmware | Failure]]) -> None:
        deadline = time.monotonic() + self.timeout_s
        threads = [threading.Thread(target=self._run_place, args=(place, board, firmware[board.name], deadline),
                                    name=f"place-{place.name}", daemon=True) for place, board in places]
        try:   # Ctrl-C, or SIGTERM/SIGHUP (the CLI raises them as a KeyboardInterrupt): released all the same
            for thread in threads:
                thread.start()
            for thread in threads:
                while thread.is_alive():
                    thread.join(JOIN_POLL_S)
        finally:
            self._release_all()

    def _release_all(self) -> None:
        """When the run ends: stop the places' threads, release what they still hold and cancel their
        reservations (only after an interrupt is anything left; a reservation left behind would keep
        its place from others until it expires)."""
        with self._lock:
            self._stop.set()
            for name in sorted(self._held):
                self._release(name)
            for token in sorted(self._reservations):
                self._cancel(token)

    def _cancel(self, token: str) -> None:
        try:
            self.coordinator.cancel(token)
        except MtkError:
            pass   # cancelled already, or expired
        self._reservations.discard(token)

    def _release(self, name: str) -> None:
        try:
            self.coordinator.release(name)
            ui.info(f"released place {name}")
        except MtkError as err:
            ui.info(f"could not release place {name}: {err}")
        self._held.discard(name)

    def _fail_all(self, items: list[Firmware | Failure], board: Board, error: str, place: str,
                  host: str | None = None) -> None:
        for item in items:
            model = item.model.name if isinstance(item, Firmware) else item.model
            self.failures.append(Failure(model, board.name, error, place, host))

    def _run_place(self, place: LabPlace, board: Board, firmware: list[Firmware | Failure], deadline: float) -> None:
        with self._lock:
            if self._stop.is_set():
                return
            try:
                token = self.coordinator.reserve(place.name)
            except MtkError as err:
                self._fail_all(firmware, board, str(err), place.name)
                return
            self._reservations.add(token)
        try:
            if not self.coordinator.wait_allocated(token, deadline, self._stop):
                if not self._stop.is_set():
                    holder = next((p.acquired_by for p in self.coordinator.places() if p.name == place.name), None)
                    self._fail_all(firmware, board, f"place busy{f' (acquired by {holder})' if holder else ''} "
                                   f"for {self.timeout_s:g} s (--lab-timeout): skipped", place.name,
                                   self.coordinator.host(place.name))
                return
            with self._lock:
                if self._stop.is_set():
                    return
                self.coordinator.acquire(place.name)
                self._held.add(place.name)
            try:
                self._run_acquired(place, board, firmware)
            finally:
                with self._lock:
                    if place.name in self._held:
                        self._release(place.name)
        except MtkError as err:
            self._fail_all(firmware, board, str(err).splitlines()[0], place.name)
        finally:
            with self._lock:
                if token in self._reservations:
                    self._cancel(token)

    def _run_acquired(self, place: LabPlace, board: Board, firmware: list[Firmware | Failure]) -> None:
        host = self.coordinator.host(place.name)
        ui.info(f"acquired place {place.name} ({board.name} on {host})")
        if board.is_qemu:
            ui.info(f"place {place.name} is a QEMU stand-in its exporter started: its figures are instructions, "
                    f"without estimated cycles ({STAND_IN_NO_ESTIMATE}; --emulate estimates in local QEMU)")
        target = self.coordinator.target(place.name)
        try:
            try:
                runner = PlaceRunner(target, board)
            except MtkError as err:
                self._fail_all(firmware, board, str(err).splitlines()[0], place.name, host)
                return
            for item in firmware:
                if self._stop.is_set():
                    return
                if isinstance(item, Failure):
                    self.failures.append(replace(item, place=place.name, host=host))
                    continue
                ui.info(f"{item.model.name} on place {place.name} ({board.name} on {host})")
                try:
                    self.results.append(replace(run_built(item, runner), place=place.name, host=host))
                except MtkError as err:
                    ui.info(f"  {place.name} failed: {str(err).splitlines()[0]}")
                    self.failures.append(Failure(item.model.name, board.name, str(err).splitlines()[0],
                                                 place.name, host))
        finally:
            target.cleanup()


def build_for_boards(models: list[Path], boards: list[Board], options_for: Callable[[Board], RunOptions],
                     work: Path) -> dict[str, list[Firmware | Failure]]:
    """Every model built once per board type; a build that fails is a Failure for that board."""
    built: dict[str, list[Firmware | Failure]] = {}
    for board in boards:
        built[board.name] = []
        for k, model in enumerate(models):
            options = options_for(board)
            folder = work / board.name.replace("/", "_") / f"{k}-{model.stem}"
            try:
                built[board.name].append(build_model_firmware(model, options, folder))
            except MtkError as err:
                ui.info(f"  building {model.name} for {board.name} failed: {err}")
                built[board.name].append(Failure(model.name, board.name, str(err).splitlines()[0]))
    return built


def tagged_places(coordinator: Coordinator, address: str) -> list[tuple[LabPlace, Board]]:
    """The places of mtk boards; MtkError when there is none."""
    places = lab_places(coordinator)
    if not places:
        raise MtkError(f"the labgrid coordinator at {address} has no place tagged {BOARD_TAG}=<an mtk board>",
                       hint="tag one: labgrid-client -p PLACE set-tags board=nucleo_f746zg (`mtk boards` lists "
                            "the names; '/' may be written '_')")
    return places


def lab_boards(address: str) -> list[Board]:
    """The boards of the lab's places (`--lab labgrid --emulate`: none is reserved)."""
    with Coordinator(address) as coordinator:
        return [board for _, board in tagged_places(coordinator, address)]


def bench_on_labgrid(address: str, models: list[Path], options_for: Callable[[Board], RunOptions],
                     timeout_s: float, build_dir: Path | None) -> tuple[list[RunResult], list[Failure]]:
    with Coordinator(address) as coordinator:
        places = tagged_places(coordinator, address)
        ui.info("places: " + ", ".join(f"{place.name} ({board.name})" for place, board in places))
        boards = list({board.name: board for _, board in places}.values())
        with work_folder(build_dir) as work:
            firmware = build_for_boards(models, boards, options_for, work)
            run = LabRun(coordinator, timeout_s)
            run.run(places, firmware)
    order = {place.name: k for k, (place, _) in enumerate(places)}
    names = [m.name for m in models]

    def in_report_order(row: RunResult | Failure) -> tuple[int, int]:
        return order.get(row.place, -1), names.index(row.model) if row.model in names else -1
    return sorted(run.results, key=in_report_order), sorted(run.failures, key=in_report_order)
