"""Numpy data files (.npy, .npz) read with limits: every header is checked before any data is read.

A file's content decides how it is read, not its name: an .npz that is really an .npy (or the other
way round) is refused with what it is. Limits: MAX_DATA_BYTES of array data per file (for an .npz
the sum of its members, from the sizes its zip directory declares: a zip bomb is refused before it
is inflated), MAX_MEMBERS arrays per archive, numeric element types only (no pickles, no objects),
shapes of non-negative integers. A caller that knows the shapes it expects checks the headers
(`Npz.headers`, `read_npy(check=...)`) before the data is inflated and read.
"""

from __future__ import annotations

import lzma
import math
import stat
import tokenize
import zipfile
import zlib
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Callable, Iterator

import numpy as np

from .errors import MtkError

MAX_DATA_BYTES = 1 << 30
MAX_MEMBERS = 256
NPY_MAGIC = b"\x93NUMPY"
ZIP_MAGIC = b"PK\x03\x04"
ENCRYPTED = 0x1   # bit 0 of a zip member's general purpose flags
FLOAT32_MAX = float(np.finfo(np.float32).max)

# What zipfile and its decompressors raise on a corrupt archive or member.
_ZIP_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, ValueError, NotImplementedError,
               zlib.error, lzma.LZMAError)

Header = tuple[tuple[int, ...], np.dtype]     # an array's shape and element type, as its .npy header declares
HeaderCheck = Callable[[tuple[int, ...], np.dtype], None]


def _kind(path: Path) -> str:
    try:
        if not stat.S_ISREG(path.stat().st_mode):
            raise MtkError(f"cannot read {path}: not a regular file")
        with open(path, "rb") as f:
            head = f.read(len(NPY_MAGIC))
    except OSError as err:
        raise MtkError(f"cannot read {path} ({err.strerror or err})") from None
    return "npy" if head.startswith(NPY_MAGIC) else "npz" if head.startswith(ZIP_MAGIC) else "other"


def _read_header(f: IO[bytes], limit: int, name: str) -> tuple[tuple[int, ...], bool, np.dtype]:
    """An .npy stream's header (shape, fortran order, dtype), checked against `limit` bytes of data."""
    try:
        version = np.lib.format.read_magic(f)
        read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
        shape, fortran, dtype = read_header(f, max_header_size=10000)
    except (*_ZIP_ERRORS, SyntaxError, TypeError, tokenize.TokenError, RecursionError) as err:   # a Python literal
        raise MtkError(f"cannot read {name}: not a valid .npy array ({err})") from None
    if dtype.hasobject or dtype.kind not in "biuf":
        raise MtkError(f"{name} holds {dtype} values; expected integer or float numbers")
    if not all(type(d) is int and 0 <= d <= MAX_DATA_BYTES for d in shape):
        raise MtkError(f"{name}: its header declares the shape {shape!r}; dimensions are integers "
                       f"from 0 to {MAX_DATA_BYTES}")
    nbytes = math.prod(shape) * dtype.itemsize
    if nbytes > limit:
        raise MtkError(f"{name}: its header declares shape {list(shape)} of {dtype} ({nbytes} bytes); "
                       f"at most {limit} bytes are read")
    return shape, fortran, dtype


def _read_data(f: IO[bytes], header: tuple[tuple[int, ...], bool, np.dtype], name: str) -> np.ndarray:
    shape, fortran, dtype = header
    nbytes = math.prod(shape) * dtype.itemsize
    try:
        data = f.read(nbytes)
    except _ZIP_ERRORS as err:
        raise MtkError(f"cannot read {name} ({err})") from None
    if len(data) != nbytes:
        raise MtkError(f"cannot read {name}: truncated, {len(data)} of {nbytes} data bytes")
    array = np.frombuffer(data, dtype=dtype)
    return array.reshape(shape[::-1]).transpose() if fortran else array.reshape(shape)


def read_npy(path: str | Path, check: HeaderCheck | None = None) -> np.ndarray:
    """An .npy array; `check(shape, dtype)` may refuse it from its header, before the data is read."""
    path = Path(path)
    kind = _kind(path)
    if kind != "npy":
        raise MtkError(f"cannot read {path}: " + ("it is a zip archive (an .npz?), not" if kind == "npz" else "not")
                       + " a numpy .npy file")
    size = path.stat().st_size
    with open(path, "rb") as f:
        header = _read_header(f, min(size, MAX_DATA_BYTES), str(path))
        if check is not None:
            check(header[0], header[2])
        return _read_data(f, header, str(path))


class Npz:
    """An .npz archive whose member headers are read (and checked) first: `headers` by key (member
    name without .npy), then `read(key)` inflates one member.

        with Npz(path) as npz:
            shape, dtype = npz.headers["x"]
            x = npz.read("x")
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        kind = _kind(self.path)
        if kind != "npz":
            raise MtkError(f"cannot read {self.path}: " + ("it is an .npy array, not" if kind == "npy" else "not")
                           + " a numpy .npz archive")
        self._archive: zipfile.ZipFile | None = None
        self._members: dict[str, zipfile.ZipInfo] = {}
        self.headers: dict[str, Header] = {}

    def __enter__(self) -> "Npz":
        with _zip_errors(self.path):
            self._archive = zipfile.ZipFile(self.path)
            members = self._archive.infolist()
            if len(members) > MAX_MEMBERS:
                raise MtkError(f"{self.path} holds {len(members)} members; at most {MAX_MEMBERS} are read")
            total = sum(m.file_size for m in members)
            if total > MAX_DATA_BYTES:
                raise MtkError(f"{self.path} inflates to {total} bytes; at most {MAX_DATA_BYTES} are read")
            for m in members:
                if not m.filename.endswith(".npy"):
                    raise MtkError(f"{self.path}: member '{m.filename}' is not an .npy array")
                if m.flag_bits & ENCRYPTED:
                    raise MtkError(f"{self.path}: member '{m.filename}' is encrypted")
                with self._archive.open(m) as f:
                    shape, _, dtype = _read_header(f, m.file_size, self._name(m))
                self._members[m.filename[:-4]] = m
                self.headers[m.filename[:-4]] = (shape, dtype)
        return self

    def __exit__(self, *exc) -> None:
        if self._archive is not None:
            self._archive.close()

    def read(self, key: str) -> np.ndarray:
        member = self._members[key]
        with _zip_errors(self.path), self._archive.open(member) as f:
            return _read_data(f, _read_header(f, member.file_size, self._name(member)), self._name(member))

    def _name(self, member: zipfile.ZipInfo) -> str:
        return f"{self.path}:{member.filename}"


@contextmanager
def _zip_errors(path: Path) -> Iterator[None]:
    """What zipfile raises on a corrupt archive as one MtkError naming the file."""
    try:
        yield
    except _ZIP_ERRORS as err:
        raise MtkError(f"cannot read {path} as a numpy .npz archive ({err})") from None


def read_npz(path: str | Path) -> dict[str, np.ndarray]:
    """Every array of an .npz archive by key (member name without .npy)."""
    with Npz(path) as npz:
        return {key: npz.read(key) for key in npz.headers}


def require_finite(array: np.ndarray, name: str) -> None:
    """Float values that float32 holds: no NaN, no infinity, nothing beyond float32's range (1e300
    would become inf on the way to the model)."""
    if not np.issubdtype(array.dtype, np.floating):
        return
    finite = np.isfinite(array)
    if not finite.all():
        raise MtkError(f"{name}: {int((~finite).sum())} of {array.size} values are NaN or infinite")
    huge = np.abs(array) > FLOAT32_MAX
    if huge.any():
        raise MtkError(f"{name}: {int(huge.sum())} of {array.size} values are beyond float32's range "
                       f"(±{FLOAT32_MAX:.4g}; the largest is {float(np.abs(array).max()):.4g})")
