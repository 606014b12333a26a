"""mtk as a labgrid client: a session with the coordinator (labgrid's ClientSession) whose event
loop runs in a thread of its own, so that its gRPC stream keeps being served while mtk builds and
flashes; places are reserved, acquired and released through the coordinator's calls."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import TypeVar

import grpc
from labgrid.remote.client import ClientSession, Error as LabgridError, start_session
from labgrid.remote.common import Reservation, ReservationState
from labgrid.remote.generated import labgrid_coordinator_pb2 as pb2
from labgrid.resource.remote import RemotePlace, RemotePlaceManager
from labgrid.target import Target

from ..errors import MtkError, TargetError

CALL_TIMEOUT_S = 30.0
POLL_S = 1.0              # reservations are polled (and so kept alive: they expire after 60 s unpolled)
BOARD_TAG = "board"
Answer = TypeVar("Answer")


@dataclass(frozen=True)
class LabPlace:
    name: str
    board_tag: str
    acquired_by: str | None   # "host/user" of the client holding it


class Coordinator:
    """A labgrid client session; usable from any thread."""

    def __init__(self, address: str):
        self.address = address
        labgrid_log = logging.getLogger("labgrid")   # its session's errors, which mtk reports itself: not to
        if not labgrid_log.handlers:                 # logging's last resort (a program's handlers still see them)
            labgrid_log.addHandler(logging.NullHandler())
        self._loop = asyncio.new_event_loop()
        self._session: ClientSession | None = None
        self._error: BaseException | None = None
        started = threading.Event()
        self._thread = threading.Thread(target=self._serve, args=(started,), name="labgrid-session", daemon=True)
        self._thread.start()
        started.wait()
        if self._error is not None:
            reason = self._error.args[0] if isinstance(self._error, LabgridError) else self._error
            raise TargetError(f"cannot reach the labgrid coordinator at {address}: {reason}",
                              hint="start it (labgrid-coordinator), or give its address as "
                                   "--lab labgrid://HOST:PORT or LG_COORDINATOR=HOST:PORT")

    def _serve(self, started: threading.Event) -> None:
        asyncio.set_event_loop(self._loop)
        try:
            self._session = start_session(self.address, loop=self._loop)
        except Exception as err:   # noqa: BLE001 (gRPC's address parsing too: reported by the caller's thread)
            self._error = err
        finally:
            started.set()
        if self._error is None:
            self._loop.run_forever()

    def _call(self, coroutine: Awaitable[Answer]) -> Answer:
        try:
            return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(CALL_TIMEOUT_S)
        except TimeoutError:
            raise TargetError(f"the labgrid coordinator at {self.address} did not answer within "
                              f"{CALL_TIMEOUT_S:g} s") from None

    async def _rpc(self, method: str, request) -> object:
        try:
            reply = await getattr(self._session.stub, method)(request)
        except grpc.aio.AioRpcError as err:
            raise TargetError(f"the labgrid coordinator refused {method}: {err.details()}") from None
        if not self._session.stopping.is_set():   # the update stream is up: wait for the call's updates
            await self._session.sync_with_coordinator()
        return reply

    def places(self) -> list[LabPlace]:
        """Every place tagged with a board, as the coordinator has them now."""
        async def snapshot() -> list[LabPlace]:
            return [LabPlace(place.name, place.tags[BOARD_TAG], place.acquired)
                    for place in self._session.places.values() if BOARD_TAG in place.tags]
        return sorted(self._call(snapshot()), key=lambda p: p.name)

    def host(self, place: str) -> str:
        """The exporter(s) serving the resources the place holds, or, while it holds none (not acquired,
        or held by another client), those whose resources its matches name."""
        async def exporters() -> str:
            lab_place = self._session.places[place]
            held = {path[0] for path in lab_place.acquired_resources}
            matched = {exporter for exporter, groups in self._session.resources.items()
                       for group, classes in groups.items() for cls in classes
                       if any(match.ismatch((exporter, group, cls)) for match in lab_place.matches)}
            return ",".join(sorted(held or matched)) or "?"
        return self._call(exporters())

    def reserve(self, place: str) -> str:
        """A reservation of this one place (labgrid's scheduler matches the filter `name=PLACE`)."""
        request = pb2.CreateReservationRequest(filters={"main": pb2.Reservation.Filter(filter={"name": place})})
        return self._call(self._rpc("CreateReservation", request)).reservation.token

    def reservation(self, token: str) -> Reservation:
        reply = self._call(self._rpc("PollReservation", pb2.PollReservationRequest(token=token)))
        return Reservation.from_pb2(reply.reservation)

    def cancel(self, token: str) -> None:
        self._call(self._rpc("CancelReservation", pb2.CancelReservationRequest(token=token)))

    def wait_allocated(self, token: str, deadline: float, stop: threading.Event) -> bool:
        """Poll the reservation until it holds its place; False at `deadline` or when stopped."""
        while not stop.is_set():
            if self.reservation(token).state in (ReservationState.allocated, ReservationState.acquired):
                return True
            if time.monotonic() >= deadline:
                return False
            stop.wait(min(POLL_S, max(0.0, deadline - time.monotonic())))
        return False

    def acquire(self, place: str) -> None:
        self._call(self._rpc("AcquirePlace", pb2.AcquirePlaceRequest(placename=place)))

    def release(self, place: str) -> None:
        self._call(self._rpc("ReleasePlace", pb2.ReleasePlaceRequest(placename=place)))

    def target(self, place: str) -> Target:
        """A labgrid Target holding the acquired place's resources (as `labgrid-client` makes one)."""
        async def make() -> Target:
            manager = RemotePlaceManager.get()
            manager.session, manager.loop = self._session, self._loop
            target = Target(place)
            try:
                RemotePlace(target, name=place)
            except LabgridError as err:
                raise TargetError(f"place {place}: {err}") from None
            return target
        return self._call(make())

    def close(self) -> None:
        if self._session is not None:
            try:
                self._call(self._session.stop())
                self._call(self._session.close())
            except MtkError:
                pass   # the coordinator is gone: nothing to close there
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(CALL_TIMEOUT_S)

    def __enter__(self) -> Coordinator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

