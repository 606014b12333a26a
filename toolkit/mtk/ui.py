"""Terminal output: progress on stderr for people, stdout kept clean for --json."""

from __future__ import annotations

import sys
import time
from contextlib import contextmanager
from typing import Iterator

_quiet = False
_pending_step: str | None = None   # a step's `message ...` line on the terminal, waiting for its `done`


def set_quiet(quiet: bool) -> None:
    global _quiet
    _quiet = quiet


def _end_pending_line() -> None:
    """Anything printed inside a step goes on a line of its own."""
    global _pending_step
    if _pending_step is not None:
        print(file=sys.stderr)
        _pending_step = None


def info(message: str) -> None:
    if not _quiet:
        _end_pending_line()
        print(message, file=sys.stderr, flush=True)


@contextmanager
def step(message: str) -> Iterator[None]:
    """Show a long step as `message ...` and its duration when done (repeating the message when
    something was printed in between)."""
    global _pending_step
    start = time.monotonic()
    if not _quiet:
        _end_pending_line()
        print(f"{message} ...", end="", file=sys.stderr, flush=True)
        _pending_step = message

    def finish(outcome: str) -> None:
        global _pending_step
        if not _quiet:
            line_open = _pending_step == message
            print(f" {outcome}" if line_open else f"{message} ... {outcome}", file=sys.stderr, flush=True)
            _pending_step = None

    try:
        yield
    except BaseException:
        finish("failed")
        raise
    finish(f"done ({time.monotonic() - start:.1f} s)")


def table(headers: list[str], rows: list[list[object]]) -> str:
    cells = [[str(h) for h in headers]] + [[str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)
