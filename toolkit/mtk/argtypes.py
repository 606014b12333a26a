"""argparse types for numeric options and folders: a value outside its range, or a file given for a
folder, is refused while the command line is parsed (exit 2, one line naming the option's value),
before any work."""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Callable

INT32_MAX = 2**31 - 1
MAX_TIMED_RUNS = 32     # inferences the firmware times in one `mtk-stats` (MTK_STATS_MAX, firmware/mtk_core.h)
MIN_STACK_BYTES = 512   # the firmware core's call chain and an exception frame, with a margin


def integer(low: int, high: int, what: str) -> Callable[[str], int]:
    """An integer in [low, high], e.g. integer(1, 32, "inferences")."""
    def parse(text: str) -> int:
        try:
            value = int(text, 0) if text.strip().lower().startswith(("0x", "-0x")) else int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of {what}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{text}: {what} must be {low:,} to {high:,}")
        return value
    parse.__name__ = what   # argparse names the type in its messages
    return parse


def real(low: float, high: float, what: str) -> Callable[[str], float]:
    """A number in [low, high]; never NaN; inf only if `high` is."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number of {what}") from None
        if math.isnan(value) or not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{text}: {what} must be from {low:g} to {high:g}")
        return value
    parse.__name__ = what
    return parse


def finite(what: str) -> Callable[[str], float]:
    return real(-3.4e38, 3.4e38, what)   # float32's range: what the data it applies to holds


def folder(text: str) -> Path:
    """A folder to write into: a new path or an existing folder, not a file."""
    path = Path(text)
    if path.exists() and not path.is_dir():
        raise argparse.ArgumentTypeError(f"{text} is a file, not a folder")
    return path
