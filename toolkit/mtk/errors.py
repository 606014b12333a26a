"""User-facing errors. The CLI prints these as one clear message, never a traceback."""

from __future__ import annotations

import errno
import os


INTERNAL_ERROR_EXIT = 70   # sysexits.h EX_SOFTWARE: a bug in mtk, not in the input


class MtkError(Exception):
    """An error the user can act on. `exit_code` is what the CLI exits with."""

    exit_code = 2

    def __init__(self, message: str, hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message if not self.hint else f"{self.message}\n  hint: {self.hint}"


class ModelError(MtkError):
    """The model file is unreadable, unsupported or does not fit."""


class DoesNotFit(ModelError):
    """The model needs more flash or RAM than the board has."""


class ToolMissing(MtkError):
    """A required external program (compiler, QEMU, west) is not installed."""

    exit_code = 3


class TargetError(MtkError):
    """Building, flashing or talking to the target failed."""

    exit_code = 4


class MismatchError(MtkError):
    """Target outputs differ from the reference."""

    exit_code = 1


class InternalError(MtkError):
    """A bug in mtk found by a check of its own output (e.g. generated C that does not build)."""

    exit_code = INTERNAL_ERROR_EXIT


NAME_MAX = 255   # bytes in one component of a path: Linux's, and most file systems'
# What the operating system says about a path the user gave (an argument, a name derived from one).
_USER_PATH_ERRNOS = {errno.ENAMETOOLONG: "a name too long"}


def user_path_error(err: BaseException) -> MtkError | None:
    """An OSError that a path from the user caused wherever it was first used (a --module-name, --board
    or file name whose component is over NAME_MAX bytes) as the one-line error it is; None otherwise."""
    if not isinstance(err, OSError) or err.errno not in _USER_PATH_ERRNOS:
        return None
    path = os.fsdecode(err.filename) if err.filename is not None else ""
    long = max(path.split(os.sep), key=lambda part: len(os.fsencode(part)), default="")
    size = len(os.fsencode(long))
    shown = long if len(long) <= 40 else f"{long[:24]}...{long[-12:]}"
    return MtkError(f"{_USER_PATH_ERRNOS[err.errno]}: {shown!r} is {size} bytes; a file name takes at most {NAME_MAX}")
