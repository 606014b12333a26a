"""Messages, progress and tables.

Library code reports through the `mtk` logger: `info` lines and the end of each `step` (a long piece of
work: `message ... done (1.2 s)`) as INFO records, a step's start and the `progress` inside it as DEBUG
ones, so that a program's INFO handler prints each step once. The library adds no handler but a
NullHandler: nothing shows unless the program installs one (`logging.basicConfig(level=logging.INFO)`).
The CLI installs `TerminalHandler`, which draws steps with a live progress bar on a terminal (rich)
and as plain `message ... done (1.2 s)` lines elsewhere, and keeps its records from a handler of the
program's own (`mtk.cli.main` called from Python). stdout stays clean for --json.
"""

from __future__ import annotations

import logging
import re
import shutil
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Iterator, TextIO

log = logging.getLogger("mtk")
log.addHandler(logging.NullHandler())


@dataclass(eq=False)
class Step:
    message: str
    start: float = field(default_factory=time.monotonic)


_open_steps: list[Step] = []


def info(message: str) -> None:
    log.info("%s", message)


def progress(done: int, total: int | None = None) -> None:
    """How far the innermost step is (e.g. inferences run, or ninja's [n/m])."""
    if _open_steps:
        current = _open_steps[-1]
        log.debug("%s: %d/%s", current.message, done, total if total is not None else "?",
                  extra={"mtk_step": current, "mtk_progress": (done, total)})


@contextmanager
def step(message: str) -> Iterator[Step]:
    """Report a long step as `message ...`, then its outcome and duration."""
    current = Step(message)
    log.debug("%s ...", message, extra={"mtk_step": current, "mtk_event": "start"})
    _open_steps.append(current)

    def finish(outcome: str) -> None:
        _open_steps.remove(current)
        log.info("%s ... %s", message, outcome, extra={"mtk_step": current, "mtk_event": outcome})

    try:
        yield current
    except BaseException:
        finish("failed")
        raise
    finish(f"done ({time.monotonic() - current.start:.1f} s)")


class TerminalHandler(logging.Handler):
    """mtk's records on a stream: live progress bars on a terminal, plain lines elsewhere."""

    def __init__(self, stream: TextIO):
        super().__init__(logging.DEBUG)
        self.stream = stream
        self.live = _RichSteps(stream) if stream.isatty() else None
        self.pending: Step | None = None   # plain mode: a step's `message ...` waiting for its outcome

    def emit(self, record: logging.LogRecord) -> None:
        try:
            current: Step | None = getattr(record, "mtk_step", None)
            event: str | None = getattr(record, "mtk_event", None)
            if self.live is not None:
                self.live.show(record, current, event)
            elif not hasattr(record, "mtk_progress") and (record.levelno >= logging.INFO or event == "start"):
                self._plain(record, current, event)
        except Exception:   # a display problem must never break the work
            self.handleError(record)

    def _plain(self, record: logging.LogRecord, current: Step | None, event: str | None) -> None:
        if event is not None and event != "start" and self.pending is current:
            self.stream.write(f" {event}\n")      # the outcome ends the step's own line
            self.pending = None
        else:
            if self.pending is not None:
                self.stream.write("\n")           # something printed inside a step: its own line
                self.pending = None
            if event == "start":
                self.stream.write(f"{current.message} ...")
                self.pending = current
            else:
                self.stream.write(record.getMessage() + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self.live is not None:
            self.live.stop()
        elif self.pending is not None:
            self.stream.write("\n")
            self.pending = None
        super().close()


class _RichSteps:
    """Open steps as rich progress tasks (spinner, bar once the total is known, n/m, time); lines above."""

    def __init__(self, stream: TextIO):
        from rich.console import Console
        from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

        self.console = Console(file=stream, highlight=False)
        count = TextColumn("{task.fields[count]}", markup=False)   # "n/m" once a total is known
        self.progress = Progress(SpinnerColumn(), TextColumn("{task.description}", markup=False), BarColumn(),
                                 count, TimeElapsedColumn(), console=self.console, transient=True)
        self.tasks: dict[Step, Any] = {}

    def show(self, record: logging.LogRecord, current: Step | None, event: str | None) -> None:
        from rich.text import Text

        if hasattr(record, "mtk_progress"):
            if current in self.tasks:
                done, total = record.mtk_progress
                self.progress.update(self.tasks[current], completed=done, total=total,
                                     count=f"{done}/{total}" if total else str(done))
        elif event == "start":
            if not self.tasks:
                self.progress.start()
            self.tasks[current] = self.progress.add_task(current.message, total=None, count="")
        elif record.levelno >= logging.INFO:
            if current in self.tasks:
                self.progress.remove_task(self.tasks.pop(current))
            style = {"failed": "red"}.get(event or "", "green" if event else "")
            line = Text(record.getMessage())
            if event:
                line.stylize(style, len(current.message) + 5)
            self.progress.console.print(line)
            if not self.tasks:
                self.progress.stop()

    def stop(self) -> None:
        self.tasks.clear()
        self.progress.stop()


@contextmanager
def terminal_output(quiet: bool = False, stream: TextIO | None = None) -> Iterator[None]:
    """Show mtk's messages and progress on `stream` (stderr) for the block (nothing if `quiet`)."""
    if quiet:
        yield
        return
    handler = TerminalHandler(stream or sys.stderr)
    level, propagate = log.level, log.propagate
    log.addHandler(handler)
    log.setLevel(logging.DEBUG)
    log.propagate = False   # the records are drawn here, not again by a handler of the program's
    try:
        yield
    finally:
        log.removeHandler(handler)
        log.setLevel(level)
        log.propagate = propagate
        handler.close()


NUMBER = re.compile(r"[-+]?[\d,.]+( ?%| [A-Za-z]+)?|-")


ELLIPSIS = "…"
NARROWEST = 16   # a shortened cell keeps at least this many characters


def shorten_middle(text: str, width: int) -> str:
    """`text` in at most `width` characters, its middle replaced by an ellipsis (as ls and git shorten
    names): the start and the end, where names differ, stay."""
    if len(text) <= width:
        return text
    head = width // 2
    return text[:head] + ELLIPSIS + text[len(text) - (width - 1 - head):]


def _fit_column(headers: list[str], cells: list[list[str]], column: int) -> list[list[str]]:
    """`cells` with `column`'s cells shortened in the middle so that a row fits the terminal's width
    (COLUMNS, else 80 off a terminal)."""
    others = sum(max(len(r[i]) for r in [headers, *cells]) for i in range(len(headers)) if i != column)
    room = max(NARROWEST, shutil.get_terminal_size().columns - others - 3 * (len(headers) - 1))   # rich: 3 between
    return [[shorten_middle(c, room) if i == column else c for i, c in enumerate(r)] for r in cells]


def table(headers: list[str], rows: list[list[object]], shorten: int | None = None) -> str:
    """Rows under headers: plain aligned columns when stdout is not a terminal (whole lines, for
    grep and files), on a terminal a rich table that fits its width, numbers right-aligned.
    `shorten`: the column whose long cells (e.g. TFLite tensor names) are shortened in the middle so
    that every row fits on one line of the terminal."""
    cells = [[str(c) for c in r] for r in rows]
    if shorten is not None and cells:
        cells = _fit_column([str(h) for h in headers], cells, shorten)
    if not sys.stdout.isatty():
        return _plain_table([str(h) for h in headers], cells)
    from rich import box
    from rich.console import Console
    from rich.table import Table

    console = Console(file=sys.stdout, width=shutil.get_terminal_size().columns, highlight=False)
    rich_table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, header_style="bold")
    for i, header in enumerate(headers):
        numeric = bool(cells) and all(NUMBER.fullmatch(r[i]) for r in cells if r[i])
        rich_table.add_column(str(header), justify="right" if numeric else "left", overflow="fold")
    for r in cells:
        rich_table.add_row(*r)
    with console.capture() as captured:
        console.print(rich_table)
    return captured.get().rstrip("\n")


def _plain_table(headers: list[str], rows: list[list[str]]) -> str:
    cells = [headers] + rows
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)
