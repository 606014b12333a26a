"""Host side of the firmware protocol (firmware/mtk_core.h): EEMBC EnergyRunner commands and
the mtk extensions (raw outputs, per-inference statistics, per-layer profile, exit)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from ..errors import TargetError
from .serial_link import SerialLink

READY = "m-ready"
LOAD_CHUNK_BYTES = 32  # `db <64 hex digits>%` stays within the firmware's 80-character commands
Answer = TypeVar("Answer")


@dataclass(frozen=True)
class FirmwareInfo:
    model: str
    arena_bytes: int
    input_bytes: int
    output_bytes: int
    unit: str        # "instructions" (QEMU) or "cycles"
    layers: int      # per-layer slots; 0 unless built with profiling
    stack_used_bytes: int | None = None   # the main stack's high-water mark since boot; None: the port cannot tell


@dataclass(frozen=True)
class CycleStats:
    count: int
    min: int
    median: int
    max: int


@dataclass(frozen=True)
class InferTiming:
    count: int
    start_us: int
    end_us: int
    results: list[float]

    @property
    def per_inference_us(self) -> float:
        return (self.end_us - self.start_us) / self.count


def _payload(lines: list[str], prefix: str) -> str:
    """The text between the brackets of the line `<prefix>[...]`."""
    for line in lines:
        if line.startswith(prefix + "[") and line.endswith("]"):
            return line[len(prefix) + 1:-1]
    raise ValueError(f"no '{prefix}[...]' line")


def _fields(payload: str) -> dict[str, str]:
    return dict(item.split(":", 1) for item in payload.split(","))


def _values(lines: list[str], prefix: str) -> list[str]:
    payload = _payload(lines, prefix)
    return payload.split(",") if payload else []


class FirmwareClient:
    """Request/response over a SerialLink: each command waits for the firmware's `m-ready`."""

    def __init__(self, link: SerialLink, timeout: float = 10.0):
        self.link = link
        self.timeout = timeout

    def _read_until_ready(self, what: str, timeout: float) -> list[str]:
        """The lines before the next `m-ready`, all within `timeout` (a target printing garbage
        without end does not keep the host waiting)."""
        deadline = time.monotonic() + timeout
        lines: list[str] = []
        while True:
            line = self.link.read_line(max(0.0, deadline - time.monotonic()))
            if line is None:
                raise TargetError(f"the target did not answer {what} within {timeout:g} s\n"
                                  f"{self.link.describe_last_lines()}")
            if line == READY:
                return lines
            lines.append(line)

    def wait_boot(self) -> None:
        """Wait for the boot banner that ends with the first `m-ready`."""
        self._read_until_ready("at boot", self.timeout)

    def sync(self) -> None:
        """Flush any partial command on the target (a lone '%') and wait for its `m-ready`."""
        self.link.write(b"%")
        self._read_until_ready("a resync", self.timeout)

    def command(self, command: str, timeout: float | None = None) -> list[str]:
        """Send `command%`; return the answer lines. Raises TargetError on an `e-` line."""
        self.link.write(command.encode("ascii") + b"%")
        lines = self._read_until_ready(f"'{command}'", timeout or self.timeout)
        errors = [line for line in lines if line.startswith("e-")]
        if errors:
            raise TargetError(f"the target refused '{command}': {errors[0]}")
        return lines

    def query(self, command: str, parse: Callable[[list[str]], Answer], timeout: float | None = None) -> Answer:
        """`command`'s answer read by `parse`; an answer it cannot read is a TargetError."""
        lines = self.command(command, timeout)
        try:
            return parse(lines)
        except (ValueError, KeyError) as err:
            raise TargetError(f"cannot read the target's answer to '{command}' ({err}): {lines[:4]}") from err

    def name(self) -> str:
        return self.query("name", lambda lines: _payload(lines, "m-name-dut-"))

    def info(self) -> FirmwareInfo:
        def parse(lines: list[str]) -> FirmwareInfo:
            f = _fields(_payload(lines, "m-mtk-info-"))
            return FirmwareInfo(model=f["model"], arena_bytes=int(f["arena"]), input_bytes=int(f["input"]),
                                output_bytes=int(f["output"]), unit=f["unit"], layers=int(f["layers"]),
                                stack_used_bytes=int(f["stack"]) or None)
        return self.query("mtk-info", parse)

    def load_input(self, data: bytes) -> None:
        """Load the model input with `db load N` and `db <hex>` commands."""
        self.command(f"db load {len(data)}")
        lines: list[str] = []
        for start in range(0, len(data), LOAD_CHUNK_BYTES):
            lines = self.command(f"db {data[start:start + LOAD_CHUNK_BYTES].hex()}")
        if "m-load-done" not in lines:
            raise TargetError(f"the target did not confirm loading {len(data)} bytes: {lines}")

    def infer(self, count: int = 1, warmup: int = 0, timeout: float | None = None) -> InferTiming:
        def parse(lines: list[str]) -> InferTiming:
            laps = [int(line[len("m-lap-us-"):]) for line in lines if line.startswith("m-lap-us-")]
            if len(laps) != 2 or "m-infer-done" not in lines:
                raise ValueError("two m-lap-us- lines and m-infer-done expected")
            return InferTiming(count, laps[0], laps[1], [float(v) for v in _values(lines, "m-results-")])
        return self.query(f"infer {count} {warmup}", parse, timeout)

    def results(self) -> list[float]:
        return self.query("results", lambda lines: [float(v) for v in _values(lines, "m-results-")])

    def read_output(self) -> bytes:
        """The raw bytes of the output buffer after the last inference."""
        return self.query("mtk-out", lambda lines: bytes.fromhex(_payload(lines, "m-mtk-out-")))

    def stats(self, count: int, timeout: float | None = None) -> CycleStats:
        """Run `count` inferences; min/median/max units (FirmwareInfo.unit) per inference."""
        def parse(lines: list[str]) -> CycleStats:
            f = _fields(_payload(lines, "m-mtk-stats-"))
            return CycleStats(count=int(f["n"]), min=int(f["min"]), median=int(f["median"]), max=int(f["max"]))
        return self.query(f"mtk-stats {count}", parse, timeout)

    def layers(self) -> list[int]:
        """Units per op of the last inference (firmware built with profiling)."""
        return self.query("mtk-layers", lambda lines: [int(v) for v in _values(lines, "m-mtk-layers-")])

    def exit(self, status: int = 0) -> None:
        """Ask the firmware to end the run with `status`."""
        self.link.write(f"mtk-exit {status}%".encode("ascii"))
        expected = f"m-mtk-exit-{status}"
        deadline = time.monotonic() + self.timeout   # one deadline: a target that keeps talking is not waited on
        while (line := self.link.read_line(max(0.0, deadline - time.monotonic()))) != expected:
            if line is None:
                raise TargetError(f"the target did not exit within {self.timeout:g} s\n{self.link.describe_last_lines()}")
