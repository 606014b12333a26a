"""Writing output folders so that a failure leaves nothing half-written."""

from __future__ import annotations

import errno
import os
import shutil
import stat
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterable, Iterator

from . import interrupts
from .errors import NAME_MAX, MtkError



def umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def honour_umask(path: Path) -> None:
    """Give a file or folder made by tempfile (0600/0700) the mode an ordinary create would give it."""
    os.chmod(path, (0o777 if path.is_dir() else 0o666) & ~umask())


# Files and folders the running command reads (named on its command line): no output replaces them.
_inputs: list[Path] = []


def set_inputs(paths: Iterable[str | Path]) -> None:
    """The files and folders the running command reads; no output path may be or hold one of them."""
    _inputs[:] = [Path(p) for p in paths if _exists(Path(p))]


def _exists(path: Path) -> bool:
    try:
        return path.exists()
    except OSError:   # a name too long, a loop of symlinks: nothing there to protect
        return False


def _resolved(path: Path) -> Path:
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return path.absolute()


def _same_inode(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def input_under(path: str | Path, also: Iterable[str | Path] = ()) -> Path | None:
    """The input of the command that writing or replacing `path` would destroy: the input itself,
    however it is spelled (`..`, a symlink, a hard link of it), or one inside the folder `path`."""
    target = _resolved(Path(path))
    for p in [*_inputs, *(Path(a) for a in also if _exists(Path(a)))]:
        resolved = _resolved(p)
        if resolved == target or target in resolved.parents or _same_inode(p, path):
            return p
    return None


def check_not_input(path: str | Path, what: str = "output", also: Iterable[str | Path] = ()) -> None:
    """Refuse an output path that is (or holds) an input of the command (`also`: inputs the caller
    names besides the command line's), whatever --force says."""
    hit = input_under(path, also)
    if hit is not None:
        same = "is" if _resolved(Path(path)) == _resolved(hit) or _same_inode(hit, path) else "holds"
        raise MtkError(f"{what} {path} {same} {hit}, an input of this command: it would be replaced",
                       hint="give the output a path of its own")


def check_readable_files(paths: Iterable[str | Path], what: str) -> None:
    """Before any work: each of `paths` is a regular file mtk may open (not a folder, not a device)."""
    for p in paths:
        try:
            regular = stat.S_ISREG(os.stat(p).st_mode)   # a FIFO is not opened: that would wait for a writer
        except OSError as err:
            raise MtkError(f"cannot read {what} {p}: {err.strerror or err}") from None
        if not regular:
            raise MtkError(f"{what} {p} is not a regular file")
        if not os.access(p, os.R_OK):
            raise MtkError(f"cannot read {what} {p}: permission denied")


def check_writable(path: str | Path) -> None:
    """Before any work: `path` can be created (its nearest existing ancestor is a folder that takes a
    new entry: not a file, not read-only, not /proc)."""
    path = Path(path).absolute()
    long = next((part for part in path.parts if len(os.fsencode(part)) > NAME_MAX), None)
    if long is not None:
        raise MtkError(f"cannot write {path}: a name of {len(os.fsencode(long))} bytes (at most {NAME_MAX})")
    parent = path.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        raise MtkError(f"cannot write {path}: {parent} is a file, not a folder")
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".mtk-probe-", dir=parent))
    except OSError as err:
        if err.errno == errno.ENOENT:   # the folder is there: it takes no new entries (/proc)
            kind = filesystem_type(parent)
            on = f"the {kind} file system" if kind else "a virtual file system"
            raise MtkError(f"cannot write {path}: {parent} is on {on}, which takes no new files") from None
        raise MtkError(f"cannot write {path}: {parent}: {err.strerror or err}") from None


def filesystem_type(path: Path) -> str | None:
    """The type of the file system `path` is on (proc, sysfs, ext4, ...), from /proc/self/mounts."""
    try:
        mounts = [line.split() for line in Path("/proc/self/mounts").read_text().splitlines()]
    except OSError:
        return None
    target = _resolved(path)
    on = [(Path(m[1]), m[2]) for m in mounts if len(m) > 2 and (Path(m[1]) == target or Path(m[1]) in target.parents)]
    return max(on, key=lambda mount: len(mount[0].parts))[1] if on else None


def check_output_dir(path: Path, force: bool, inputs: Iterable[str | Path] = ()) -> None:
    """Refuse an existing non-empty folder unless --force, and even with --force a folder that holds
    an input of the command (`inputs`: besides the command line's) or the working directory."""
    if path.exists() and not path.is_dir():
        raise MtkError(f"output path {path} exists and is not a folder")
    if path.is_dir() and any(path.iterdir()):
        if not force:
            raise MtkError(f"output folder {path} is not empty", hint="pass --force to replace its content")
        hit, what = input_under(path, also=inputs), "an input of this command"
        if hit is None and input_under(path, also=[Path.cwd()]) is not None:
            hit, what = Path.cwd(), "the working directory"
        if hit is not None:
            raise MtkError(f"--force would delete {hit} ({what}) with output folder {path}",
                           hint="give an output folder of its own")


def check_not_folder(path: str | Path, what: str = "output path") -> None:
    """An output file's path: refuse an existing folder there."""
    if Path(path).is_dir():
        raise MtkError(f"{what} {path} is a folder; give a file name")


def check_output_file(path: Path, force: bool) -> None:
    """Refuse an existing file unless --force, a folder, and an input of the command."""
    check_not_input(path)
    check_not_folder(path)
    if path.exists() and not force:
        raise MtkError(f"output file {path} exists", hint="pass --force to replace it")


def check_output_file_first(path: Path, inputs: Iterable[str | Path] = ()) -> None:
    """Before any work, an output file's path: not an input (the command line's or `inputs`), not a folder, and
    one that can be written."""
    check_not_input(path, also=inputs)
    check_not_folder(path)
    check_writable(path)


def write_output_text(path: Path, text: str) -> None:
    """`text` as the file `path`: whole, or not at all (atomic_output_file)."""
    with atomic_output_file(path) as staged:
        staged.write_text(text)


@contextmanager
def atomic_output_dir(path: Path, force: bool = False, inputs: Iterable[str | Path] = ()) -> Iterator[Path]:
    """Yield a temporary folder beside `path`; it replaces `path` only if the block succeeds and no
    signal came meanwhile (one whose KeyboardInterrupt a library swallowed)."""
    path = Path(path).resolve()
    check_output_dir(path, force, inputs)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", dir=path.parent))
    honour_umask(tmp)
    try:
        yield tmp
        interrupts.check()
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
    """Yield a temporary file name beside `path`; it becomes `path` only if the block succeeds and no
    signal came meanwhile. An existing `path` that is no regular file (/dev/null, a FIFO) is written
    into at the end, never replaced."""
    path = Path(path)
    check_not_input(path)
    check_not_folder(path)
    if _exists(path) and not path.is_file():
        with tempfile.TemporaryDirectory(prefix="mtk-output-") as folder:
            staged = Path(folder) / "output"
            yield staged
            interrupts.check()
            with open(staged, "rb") as data, open(path, "wb") as out:
                shutil.copyfileobj(data, out)
        return
    if path.parent and not path.parent.is_dir():
        raise MtkError(f"cannot write {path}: folder {path.parent} does not exist")
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    os.close(fd)
    tmp = Path(name)
    honour_umask(tmp)
    try:
        yield tmp
        interrupts.check()
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
