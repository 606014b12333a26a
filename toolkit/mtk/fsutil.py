"""Writing output folders so that a failure leaves nothing half-written."""

from __future__ import annotations

import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from .errors import MtkError


def umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def honour_umask(path: Path) -> None:
    """Give a file or folder made by tempfile (0600/0700) the mode an ordinary create would give it."""
    os.chmod(path, (0o777 if path.is_dir() else 0o666) & ~umask())


def check_output_dir(path: Path, force: bool) -> None:
    """Refuse an existing non-empty folder unless --force."""
    if path.exists() and not path.is_dir():
        raise MtkError(f"output path {path} exists and is not a folder")
    if path.is_dir() and any(path.iterdir()) and not force:
        raise MtkError(f"output folder {path} is not empty", hint="pass --force to replace its content")


def check_output_file(path: Path, force: bool) -> None:
    """Refuse an existing file unless --force, and a folder."""
    if path.is_dir():
        raise MtkError(f"output path {path} is a folder; give a file name")
    if path.exists() and not force:
        raise MtkError(f"output file {path} exists", hint="pass --force to replace it")


@contextmanager
def atomic_output_dir(path: Path, force: bool = False) -> Iterator[Path]:
    """Yield a temporary folder beside `path`; it replaces `path` only if the block succeeds."""
    path = Path(path).resolve()
    check_output_dir(path, force)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", dir=path.parent))
    honour_umask(tmp)
    try:
        yield tmp
        if path.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{path.name}.old.", dir=path.parent))
            os.replace(path, old / "x")
            os.replace(tmp, path)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, path)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


@contextmanager
def atomic_output_file(path: Path) -> Iterator[Path]:
    """Yield a temporary file name beside `path`; it becomes `path` only if the block succeeds."""
    path = Path(path)
    if path.parent and not path.parent.is_dir():
        raise MtkError(f"cannot write {path}: folder {path.parent} does not exist")
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    os.close(fd)
    tmp = Path(name)
    honour_umask(tmp)
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
