"""User-facing errors. The CLI prints these as one clear message, never a traceback."""

from __future__ import annotations


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
