"""Seeded mutations of numpy data files (.npy, .npz) for fuzzing mtk's data readers.

    mutate_data(sample_shape, rng) -> (kind, file name, bytes)

A valid file for a model input of `sample_shape` (an .npy batch, or an .npz with `x` and labels `y`)
is written and then mutated in one of three places: the .npy header (shape, dtype, order, version,
header length), the values (NaN, inf, float64 beyond float32, NaN one-hot labels, label shapes), or
the zip container (compression method, corrupt compressed bytes, flag bits such as 'encrypted',
declared sizes and CRCs, member names and counts).
"""

from __future__ import annotations

import io
import random
import zipfile

import numpy as np

HEADER_SHAPES = ((-1, -1), (0, 10**30), (2**63, 0), (True, 8), (1.5, 2), (10**6, 10**6), (), (0,), (2**31,),
                 (1, -1))
HEADER_DESCRS = ("<f8", "<f2", "|O", ">i4", "|S10", "<c8", "|b1", "<u8", "[('a', '<f4')]", "<M8[s]")
COMPRESSIONS = (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_LZMA, zipfile.ZIP_BZIP2)
FLAG_BITS = (0x1, 0x8, 0x40, 0x800, 0x2000)
LOCAL_HEADER, CENTRAL_HEADER = b"PK\x03\x04", b"PK\x01\x02"


def npy(array: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, array)
    return buf.getvalue()


def npy_with_header(header: str, data: bytes, version: tuple[int, int] = (1, 0)) -> bytes:
    """An .npy stream whose header dict is the text `header` (padded as numpy pads it)."""
    raw = header.encode("latin1")
    size_bytes = 2 if version == (1, 0) else 4
    raw += b" " * (63 - (len(raw) + 6 + 2 + size_bytes) % 64) + b"\n"
    return b"\x93NUMPY" + bytes(version) + len(raw).to_bytes(size_bytes, "little") + raw + data


def zipped(members: dict[str, bytes], compression: int) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression) as z:
        for name, data in members.items():
            z.writestr(name, data)
    return buf.getvalue()


def _samples(sample_shape: tuple[int, ...], rng: random.Random) -> np.ndarray:
    n = rng.choice([1, 2, 5])
    return np.random.default_rng(rng.randrange(2**32)).normal(size=(n, *sample_shape)).astype(np.float32)


def mutate_header(sample_shape, rng) -> bytes:
    x = _samples(sample_shape, rng)
    shape = rng.choice(HEADER_SHAPES) if rng.random() < 0.6 else tuple(x.shape)
    descr = rng.choice(HEADER_DESCRS) if rng.random() < 0.4 else "<f4"
    fortran = rng.choice(["False", "True", "'yes'", "None"]) if rng.random() < 0.2 else "False"
    header = rng.choice([
        f"{{'descr': {descr!r}, 'fortran_order': {fortran}, 'shape': {shape!r}, }}",
        f"{{'descr': {descr!r}, 'shape': {shape!r}}}",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2), 'extra': __import__('os')}",
        "[1, 2, 3]",
        "{" * 200,
    ]) if rng.random() < 0.3 else f"{{'descr': {descr!r}, 'fortran_order': {fortran}, 'shape': {shape!r}, }}"
    data = x.tobytes()
    data = data[: rng.randrange(len(data) + 1)] if rng.random() < 0.3 else data
    return npy_with_header(header, data, rng.choice([(1, 0), (1, 0), (2, 0), (3, 0), (9, 9)]))


def mutate_values(sample_shape, rng) -> tuple[np.ndarray, np.ndarray | None]:
    """x (and labels y) with values the readers must refuse or take as they are."""
    with np.errstate(invalid="ignore", over="ignore"):   # negative floats to uint8 wrap, as meant
        x = _samples(sample_shape, rng).astype(rng.choice([np.float32, np.float64, np.int8, np.int32, np.int64,
                                                           np.uint8]))
    choice = rng.randrange(6)
    if choice == 0 and x.dtype.kind == "f":
        with np.errstate(over="ignore"):   # 1e300 into float32 is inf
            x.reshape(-1)[rng.randrange(x.size)] = rng.choice([np.nan, np.inf, -np.inf, 1e300, -1e39, 3.4e38])
    elif choice == 1 and x.dtype.kind == "i":
        x.reshape(-1)[rng.randrange(x.size)] = np.iinfo(x.dtype).max
    n = len(x)
    y = rng.choice([
        None, np.arange(n), np.eye(n, 3)[:, ::-1].copy(), np.full((n, 3), np.nan), np.zeros((n + 1,), np.int64),
        np.zeros((n, 1)), np.zeros((n, 2, 2)), np.array([-1] * n), np.array([2**62] * n), np.zeros(n, np.float32),
    ])
    return x, y


def mutate_zip(members: dict[str, bytes], rng) -> bytes:
    data = bytearray(zipped(members, rng.choice(COMPRESSIONS)))
    local = data.find(LOCAL_HEADER)
    central = data.rfind(CENTRAL_HEADER)
    choice = rng.randrange(6)
    if choice == 0:                                           # compression method: another, or unknown
        method = rng.choice([0, 8, 12, 14, 99, 0xFFFF]).to_bytes(2, "little")
        data[local + 8: local + 10] = method
        data[central + 10: central + 12] = method
    elif choice == 1:                                         # corrupt compressed bytes
        start = local + 30 + int.from_bytes(data[local + 26: local + 28], "little") \
            + int.from_bytes(data[local + 28: local + 30], "little")
        for _ in range(rng.choice([1, 4, 32])):
            data[min(start + rng.randrange(200), len(data) - 1)] ^= 1 << rng.randrange(8)
    elif choice == 2:                                         # flag bits (encrypted, data descriptor, ...)
        bit = rng.choice(FLAG_BITS)
        data[local + 6] |= bit & 0xFF
        data[local + 7] |= bit >> 8
        data[central + 8] |= bit & 0xFF
        data[central + 9] |= bit >> 8
    elif choice == 3:                                         # declared sizes and CRC
        field = rng.choice([(16, 4), (20, 4), (24, 4)])       # CRC, compressed, uncompressed (central)
        value = rng.choice([0, 1, 2**31, 2**32 - 1, rng.randrange(2**32)])
        data[central + field[0]: central + field[0] + field[1]] = value.to_bytes(4, "little")
    elif choice == 4:                                         # truncated anywhere
        data = data[: rng.randrange(len(data))]
    else:                                                     # a byte flipped anywhere
        data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
    return bytes(data)


def mutate_data(sample_shape: tuple[int, ...], rng: random.Random) -> tuple[str, str, bytes]:
    """(kind, file name, bytes): one mutant data file for a model input of `sample_shape`."""
    roll = rng.random()
    if roll < 0.25:
        return "npy header", "d.npy", mutate_header(sample_shape, rng)
    if roll < 0.4:
        x, _ = mutate_values(sample_shape, rng)
        return "npy values", "d.npy", npy(x)
    x, y = mutate_values(sample_shape, rng)
    members = {"x.npy": npy(x) if rng.random() < 0.8 else mutate_header(sample_shape, rng)}
    if y is not None:
        members["y.npy"] = npy(y)
    names = rng.random()
    if names < 0.05:
        members = {"../x.npy": members["x.npy"]}
    elif names < 0.1:
        members = {f"m{k}.npy": npy(np.zeros(1)) for k in range(rng.choice([3, 300]))}
    elif names < 0.15:
        members["x"] = b"not an array"
    if roll < 0.6:
        return "npz values", "d.npz", zipped(members, rng.choice(COMPRESSIONS))
    return "npz container", "d.npz", mutate_zip(members, rng)
