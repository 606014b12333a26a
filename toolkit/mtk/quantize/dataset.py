"""Calibration and evaluation data: .npy, .npz, a folder of .npy files or a folder of images.

Every source becomes a float32 batch shaped (N, *sample_shape) for the model's input, checked
before anything runs; every problem is an MtkError naming the file.
"""

from __future__ import annotations

import struct
import warnings
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image, UnidentifiedImageError

from ..datafile import HeaderCheck, Npz, read_npy, require_finite
from ..errors import MtkError

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp")
MAX_IMAGE_PIXELS = 4096 * 4096   # calibration images are resized to a microcontroller model's input


@dataclass(frozen=True)
class Normalization:
    """x -> (x - mean) / scale, applied to every sample after loading."""

    mean: float = 0.0
    scale: float = 1.0

    def __post_init__(self) -> None:
        if not np.isfinite(self.mean) or not np.isfinite(self.scale) or self.scale == 0:
            raise MtkError(f"--mean {self.mean} / --scale {self.scale}: both must be finite and the scale non-zero")


@dataclass
class Dataset:
    x: np.ndarray            # float32, (N, *sample_shape)
    y: np.ndarray | None     # int64 class labels, (N,), from an .npz `y`
    source: str

    def __len__(self) -> int:
        return len(self.x)


def load_dataset(source: str | Path | np.ndarray, input_shape: tuple[int, ...],
                 normalization: Normalization = Normalization()) -> Dataset:
    """Load `source` for a model whose input tensor has shape `input_shape` (batch dimension 1)."""
    sample_shape = input_shape[1:]
    if isinstance(source, np.ndarray):
        name, x, y = "array", as_batch(source, sample_shape, "array"), None
    else:
        path = Path(source)
        name = str(path)
        if path.is_dir():
            x, y = _load_folder(path, input_shape), None
        elif not path.exists():
            raise MtkError(f"data {path} does not exist")
        elif path.suffix == ".npz":
            x, y = _load_npz(path, sample_shape)
        elif path.suffix == ".npy":
            x, y = as_batch(read_npy(path, batch_check(sample_shape, name)), sample_shape, name), None
        else:
            raise MtkError(f"data {path}: unknown kind of file",
                           hint="give an .npy or .npz file, or a folder of .npy files or of images")
    x = (x - np.float32(normalization.mean)) / np.float32(normalization.scale)
    _check_values(x, name)
    if y is not None and len(y) != len(x):
        raise MtkError(f"{name}: {len(y)} labels `y` for {len(x)} samples `x`")
    return Dataset(x.astype(np.float32), y, name)


def _load_npz(path: Path, sample_shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray | None]:
    """`x` (or the one array besides `y`) and the labels `y`, their headers checked before they are read."""
    with Npz(path) as npz:
        samples = [k for k in npz.headers if k != "y"]
        if "x" not in npz.headers and len(samples) != 1:
            raise MtkError(f"{path} holds arrays {sorted(npz.headers)} but no `x`",
                           hint="store the samples as `x` (and class labels as `y`)")
        key = "x" if "x" in npz.headers else samples[0]
        count = batch_shape(npz.headers[key][0], sample_shape, str(path))[0]
        if "y" in npz.headers:
            check_label_header(*npz.headers["y"], count, str(path))
        x = npz.read(key)
        labels = npz.read("y") if "y" in npz.headers else None
    return as_batch(x, sample_shape, str(path)), None if labels is None else as_labels(labels, str(path))


def _load_folder(folder: Path, input_shape: tuple[int, ...]) -> np.ndarray:
    files = sorted(p for p in folder.iterdir() if p.is_file() and not p.name.startswith("."))
    arrays = [p for p in files if p.suffix == ".npy"]
    images = [p for p in files if p.suffix.lower() in IMAGE_SUFFIXES]
    if arrays and images:
        raise MtkError(f"folder {folder} mixes .npy files and images", hint="keep one kind of sample per folder")
    if not arrays and not images:
        raise MtkError(f"folder {folder} holds no .npy files and no images ({', '.join(IMAGE_SUFFIXES)})")
    if arrays:
        return np.concatenate([as_batch(read_npy(p, batch_check(input_shape[1:], str(p))), input_shape[1:], str(p))
                               for p in arrays])
    return np.stack([_read_image(p, input_shape) for p in images])


def _read_image(path: Path, input_shape: tuple[int, ...]) -> np.ndarray:
    """An image resized to the model's (H, W), greyscale or RGB as its channel count says, values 0..255."""
    if len(input_shape) != 4 or input_shape[3] not in (1, 3):
        raise MtkError(f"images need a model input shaped (1, H, W, 1 or 3); this model's is {list(input_shape)}")
    _, height, width, channels = input_shape
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(path) as image:   # reads the header only: the size is known before the pixels
                if image.width * image.height > MAX_IMAGE_PIXELS:
                    raise MtkError(f"image {path} is {image.width}x{image.height} pixels; "
                                   f"at most {MAX_IMAGE_PIXELS} are read")
                pixels = image.convert("L" if channels == 1 else "RGB").resize((width, height), Image.BILINEAR)
    except (OSError, UnidentifiedImageError, ValueError, SyntaxError, EOFError, struct.error, zlib.error,
            Image.DecompressionBombError, Image.DecompressionBombWarning) as err:   # what Pillow raises on corrupt files
        raise MtkError(f"cannot read image {path} ({err})") from None
    return np.asarray(pixels, dtype=np.float32).reshape(height, width, channels)


def _squeezed(shape: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(d for d in shape if d != 1)


def batch_shape(shape: tuple[int, ...], sample_shape: tuple[int, ...], name: str) -> tuple[int, ...]:
    """(N, *sample_shape) for an array of `shape`: a batch or a single sample; axes of size 1 may be
    missing or extra."""
    if len(shape) >= 1 and _squeezed(shape[1:]) == _squeezed(sample_shape):
        batch = (shape[0],) + sample_shape
    elif _squeezed(shape) == _squeezed(sample_shape):
        batch = (1,) + sample_shape
    else:
        raise MtkError(f"{name} has shape {list(shape)}, which does not fit the model input: "
                       f"expected [N, {', '.join(map(str, sample_shape))}]")
    if batch[0] == 0:
        raise MtkError(f"{name} holds no samples")
    return batch


def batch_check(sample_shape: tuple[int, ...], name: str) -> HeaderCheck:
    """A header check (datafile.read_npy) refusing an array batch_shape refuses, before its data is read."""
    def check(shape: tuple[int, ...], dtype: np.dtype) -> None:
        batch_shape(shape, sample_shape, name)
    return check


def as_batch(array: np.ndarray, sample_shape: tuple[int, ...], name: str) -> np.ndarray:
    """The float32 batch (N, *sample_shape) of batch_shape; float values must be finite and within float32."""
    if not (np.issubdtype(array.dtype, np.integer) or np.issubdtype(array.dtype, np.floating)):
        raise MtkError(f"{name} holds {array.dtype} values; expected integer or float numbers")
    require_finite(array, name)
    return array.reshape(batch_shape(array.shape, sample_shape, name)).astype(np.float32)


def check_label_header(shape: tuple[int, ...], dtype: np.dtype, samples: int | None, name: str) -> None:
    """Labels `y` are integer class indices [N] or one-hot rows [N, classes], N the samples' count if known."""
    one_hot = len(shape) == 2 and shape[1] > 1
    if not (one_hot or (len(shape) == 1 and np.issubdtype(dtype, np.integer))):
        raise MtkError(f"{name}: labels `y` must be integer class indices shaped [N] or one-hot [N, classes]; "
                       f"got {dtype} shaped {list(shape)}")
    if samples is not None and shape[0] != samples:
        raise MtkError(f"{name}: {shape[0]} labels `y` for {samples} samples `x`")


def as_labels(labels: np.ndarray, name: str) -> np.ndarray:
    """Class indices from integer labels (N,) or one-hot rows (N, classes); NaN rows are refused, not class 0."""
    check_label_header(labels.shape, labels.dtype, None, name)
    if labels.ndim == 2:
        require_finite(labels, f"{name}: labels `y`")
        return labels.argmax(axis=1).astype(np.int64)
    return labels.astype(np.int64)


def _check_values(x: np.ndarray, name: str) -> None:
    bad = ~np.isfinite(x.reshape(len(x), -1)).all(axis=1)
    if bad.any():
        raise MtkError(f"{name}: {int(bad.sum())} of {len(x)} samples hold NaN or infinite values "
                       f"(first: sample {int(np.argmax(bad))})")
