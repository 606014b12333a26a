"""Terminal output: progress on stderr for people, stdout kept clean for --json."""

from __future__ import annotations

import sys
import time
from contextlib import contextmanager
from typing import Iterator

_quiet = False


def set_quiet(quiet: bool) -> None:
    global _quiet
    _quiet = quiet


def info(message: str) -> None:
    if not _quiet:
        print(message, file=sys.stderr, flush=True)


@contextmanager
def step(message: str) -> Iterator[None]:
    """Show a long step as `message ...` and its duration when done."""
    start = time.monotonic()
    if not _quiet:
        print(f"{message} ...", end="", file=sys.stderr, flush=True)
    try:
        yield
    except BaseException:
        if not _quiet:
            print(" failed", file=sys.stderr, flush=True)
        raise
    if not _quiet:
        print(f" done ({time.monotonic() - start:.1f} s)", file=sys.stderr, flush=True)


def table(headers: list[str], rows: list[list[object]]) -> str:
    cells = [[str(h) for h in headers]] + [[str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)
