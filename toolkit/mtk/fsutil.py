"""Writing output folders so that a failure leaves nothing half-written."""

from __future__ import annotations

import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterable, Iterator

from .errors import MtkError


def umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def honour_umask(path: Path) -> None:
    """Give a file or folder made by tempfile (0600/0700) the mode an ordinary create would give it."""
    os.chmod(path, (0o777 if path.is_dir() else 0o666) & ~umask())


# Files and folders the running command reads (named on its command line): --force never deletes them.
_inputs: set[Path] = set()


def protect_inputs(paths: Iterable[str | Path]) -> None:
    _inputs.update(Path(p).resolve() for p in paths if Path(p).exists())


def check_writable(path: str | Path) -> None:
    """Before any work: `path` can be created (its nearest existing ancestor is a folder that takes a
    new entry: not a file, not read-only, not /proc)."""
    path = Path(path).absolute()
    parent = path.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        raise MtkError(f"cannot write {path}: {parent} is a file, not a folder")
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".mtk-probe-", dir=parent))
    except OSError as err:
        raise MtkError(f"cannot write {path}: {parent}: {err.strerror or err}") from None


def check_output_dir(path: Path, force: bool) -> None:
    """Refuse an existing non-empty folder unless --force, and even with --force a folder that holds
    an input of the command or the working directory."""
    if path.exists() and not path.is_dir():
        raise MtkError(f"output path {path} exists and is not a folder")
    if path.is_dir() and any(path.iterdir()):
        if not force:
            raise MtkError(f"output folder {path} is not empty", hint="pass --force to replace its content")
        resolved = path.resolve()
        kept = [(p, "an input of this command") for p in sorted(_inputs)] + [(Path.cwd().resolve(), "the working directory")]
        for p, what in kept:
            if p == resolved or resolved in p.parents:
                raise MtkError(f"--force would delete {p} ({what}) with output folder {path}",
                               hint="give an output folder of its own")


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
