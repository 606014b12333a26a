"""Numpy data files (.npy, .npz) read with limits: the header is checked before any data is read.

A file's content decides how it is read, not its name: an .npz that is really an .npy (or the other
way round) is refused with what it is. Limits: MAX_DATA_BYTES of array data per file (for an .npz
the sum of its members, from the sizes its zip directory declares: a zip bomb is refused before it
is inflated), MAX_MEMBERS arrays per archive, numeric element types only (no pickles, no objects).
"""

from __future__ import annotations

import math
import zipfile
from pathlib import Path
from typing import IO

import numpy as np

from .errors import MtkError

MAX_DATA_BYTES = 1 << 30
MAX_MEMBERS = 256
NPY_MAGIC = b"\x93NUMPY"
ZIP_MAGIC = b"PK\x03\x04"


def _kind(path: Path) -> str:
    try:
        with open(path, "rb") as f:
            head = f.read(len(NPY_MAGIC))
    except OSError as err:
        raise MtkError(f"cannot read {path} ({err.strerror or err})") from None
    return "npy" if head.startswith(NPY_MAGIC) else "npz" if head.startswith(ZIP_MAGIC) else "other"


def _read_array(f: IO[bytes], limit: int, name: str) -> np.ndarray:
    """One .npy stream: header checked against `limit` bytes before the data is read."""
    try:
        version = np.lib.format.read_magic(f)
        read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
        shape, fortran, dtype = read_header(f, max_header_size=10000)
    except (ValueError, EOFError, OSError, SyntaxError, TypeError) as err:
        raise MtkError(f"cannot read {name}: not a valid .npy array ({err})") from None
    if dtype.hasobject or dtype.kind not in "biuf":
        raise MtkError(f"{name} holds {dtype} values; expected integer or float numbers")
    nbytes = math.prod(shape) * dtype.itemsize
    if nbytes > limit:
        raise MtkError(f"{name}: its header declares shape {list(shape)} of {dtype} ({nbytes} bytes); "
                       f"at most {limit} bytes are read")
    try:
        data = f.read(nbytes)
    except (OSError, EOFError, zipfile.BadZipFile, ValueError) as err:
        raise MtkError(f"cannot read {name} ({err})") from None
    if len(data) != nbytes:
        raise MtkError(f"cannot read {name}: truncated, {len(data)} of {nbytes} data bytes")
    array = np.frombuffer(data, dtype=dtype)
    return array.reshape(shape[::-1]).transpose() if fortran else array.reshape(shape)


def read_npy(path: str | Path) -> np.ndarray:
    path = Path(path)
    kind = _kind(path)
    if kind != "npy":
        raise MtkError(f"cannot read {path}: " + ("it is a zip archive (an .npz?), not" if kind == "npz" else "not")
                       + " a numpy .npy file")
    size = path.stat().st_size
    with open(path, "rb") as f:
        return _read_array(f, min(size, MAX_DATA_BYTES), str(path))


def read_npz(path: str | Path) -> dict[str, np.ndarray]:
    """The arrays of an .npz archive by key (member name without .npy)."""
    path = Path(path)
    kind = _kind(path)
    if kind != "npz":
        raise MtkError(f"cannot read {path}: " + ("it is an .npy array, not" if kind == "npy" else "not")
                       + " a numpy .npz archive")
    try:
        with zipfile.ZipFile(path) as archive:
            members = archive.infolist()
            if len(members) > MAX_MEMBERS:
                raise MtkError(f"{path} holds {len(members)} members; at most {MAX_MEMBERS} are read")
            total = sum(m.file_size for m in members)
            if total > MAX_DATA_BYTES:
                raise MtkError(f"{path} inflates to {total} bytes; at most {MAX_DATA_BYTES} are read")
            arrays = {}
            for m in members:
                if not m.filename.endswith(".npy"):
                    raise MtkError(f"{path}: member '{m.filename}' is not an .npy array")
                with archive.open(m) as f:
                    arrays[m.filename[:-4]] = _read_array(f, m.file_size, f"{path}:{m.filename}")
            return arrays
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, ValueError, NotImplementedError) as err:
        raise MtkError(f"cannot read {path} as a numpy .npz archive ({err})") from None


def require_finite(array: np.ndarray, name: str) -> None:
    if np.issubdtype(array.dtype, np.floating) and not np.isfinite(array).all():
        bad = int((~np.isfinite(array)).sum())
        raise MtkError(f"{name}: {bad} of {array.size} values are NaN or infinite")
