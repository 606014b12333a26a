"""Data files: .npy/.npz/PNG read with limits, by content not by name, finite
values, dtypes and keys checked with the expected values in the message; exit 2, never a traceback."""

from __future__ import annotations

import io
import zipfile

import numpy as np
import pytest
from PIL import Image

from mtk import datafile
from mtk.cli import main
from mtk.errors import MtkError
from mtk.samples import load_samples
from mtk.quantize import load_dataset

from checkout import REPO

MODELS = REPO / "models"
DIGITS_INT8 = MODELS / "digits_cnn_int8.tflite"    # one int8 input (1, 8, 8, 1)
GOOD = np.zeros((2, 8, 8, 1), np.float32)


def npy_bytes(array: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, array)
    return buf.getvalue()


def npy_header(shape: tuple[int, ...], dtype: str = "<f4") -> bytes:
    """An .npy header claiming `shape` with no data after it."""
    header = repr({"descr": dtype, "fortran_order": False, "shape": shape}).encode()
    header += b" " * (63 - (len(header) + 10) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header


def zip_bytes(members: dict[str, bytes], compression=zipfile.ZIP_DEFLATED) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression) as z:
        for name, data in members.items():
            z.writestr(name, data)
    return buf.getvalue()


GOOD_NPZ = zip_bytes({"x.npy": npy_bytes(GOOD)})
NOISE = np.random.default_rng(0).normal(size=(50, 8, 8, 1)).astype(np.float32)


def corrupt_member(archive: bytes, at: int = 4, flip: int = 0xFF) -> bytes:
    """`archive` with byte `at` of its first member's compressed data flipped."""
    out = bytearray(archive)
    start = 30 + int.from_bytes(out[26:28], "little") + int.from_bytes(out[28:30], "little")
    out[start + at] ^= flip
    return bytes(out)


def encrypted(archive: bytes) -> bytes:
    """`archive` with its first member's 'encrypted' flag set (central directory and local header)."""
    out = bytearray(archive)
    out[6] |= 1
    out[out.rfind(b"PK\x01\x02") + 8] |= 1
    return bytes(out)

BAD_FILES = {
    "truncated npz": ("d.npz", GOOD_NPZ[: len(GOOD_NPZ) // 2], "cannot read"),
    "npy named npz": ("d.npz", npy_bytes(GOOD), "it is an .npy array, not a numpy .npz archive"),
    "zip named npy": ("d.npy", GOOD_NPZ, "it is a zip archive (an .npz?), not a numpy .npy file"),
    "member not npy": ("d.npz", zip_bytes({"x.txt": b"1 2 3"}), "member 'x.txt' is not an .npy array"),
    "header claims 10^12 elements": ("d.npy", npy_header((10**6, 10**6)), "declares shape [1000000, 1000000]"),
    "member header claims more than its size": ("d.npz", zip_bytes({"x.npy": npy_header((10**9,))}),
                                                 "declares shape [1000000000]"),
    "truncated npy data": ("d.npy", npy_bytes(GOOD)[:-10], "truncated"),
    "object array": ("d.npy", npy_header((2,), "|O"), "expected integer or float"),
    "corrupt deflate member": ("d.npz", corrupt_member(zip_bytes({"x.npy": npy_bytes(NOISE)}), at=0),
                               "while decompressing data"),
    "corrupt lzma member": ("d.npz", corrupt_member(zip_bytes({"x.npy": npy_bytes(NOISE)}, zipfile.ZIP_LZMA), at=40),
                            "Corrupt input data"),
    "encrypted member": ("d.npz", encrypted(GOOD_NPZ), "member 'x.npy' is encrypted"),
    "header shape (-1, -1)": ("d.npy", npy_header((-1, -1)) + bytes(8), "declares the shape (-1, -1)"),
    "header shape (0, 10^30)": ("d.npz", zip_bytes({"x.npy": npy_header((0, 10**30))}), "declares the shape (0, 1000"),
    "header shape of bools": ("d.npy", npy_header((True, 8, 8, True)) + bytes(256), "declares the shape (True, 8"),
    "header of 200 braces": ("d.npy", b"\x93NUMPY\x01\x00" + (256).to_bytes(2, "little") + b"{" * 255 + b"\n",
                             "not a valid .npy array"),
    "float64 1e300": ("d.npy", npy_bytes(np.full((1, 8, 8, 1), 1e300)), "beyond float32's range"),
}


@pytest.mark.parametrize("case", sorted(BAD_FILES))
@pytest.mark.parametrize("reader", ["samples", "calibration"])
def test_bad_data_file_is_one_clear_error(case, reader, tmp_path):
    name, content, message = BAD_FILES[case]
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(MtkError) as err:
        if reader == "samples":
            load_samples(path, DIGITS_INT8)
        else:
            load_dataset(path, (1, 8, 8, 1))
    assert message in str(err.value) and err.value.exit_code == 2


def test_zip_bomb_is_refused_before_it_is_inflated(tmp_path, monkeypatch):
    """64 MB of zeros deflate to ~64 KB: with a 16 MB limit the declared size refuses it unread."""
    monkeypatch.setattr(datafile, "MAX_DATA_BYTES", 16 << 20)
    bomb = tmp_path / "bomb.npz"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as z, z.open("x.npy", "w", force_zip64=True) as f:
        f.write(npy_header((16 << 20,), "<f4"))
        chunk = bytes(1 << 20)
        for _ in range(64):
            f.write(chunk)
    assert bomb.stat().st_size < 1 << 20
    with pytest.raises(MtkError, match="inflates to 67108"):
        load_samples(bomb, DIGITS_INT8)


def test_image_decompression_bomb_in_a_calibration_folder(tmp_path):
    folder = tmp_path / "calib"
    folder.mkdir()
    Image.new("1", (5000, 5000)).save(folder / "big.png")   # 25 M pixels in a few KB
    with pytest.raises(MtkError, match=r"5000x5000 pixels; at most 16777216"):
        load_dataset(folder, (1, 8, 8, 1))


@pytest.mark.parametrize("arrays, message", [
    ({"x": np.full((1, 8, 8, 1), np.nan, np.float32)}, "64 of 64 values are NaN or infinite"),
    ({"x": np.full((1, 8, 8, 1), np.inf, np.float32)}, "NaN or infinite"),
    ({"x": np.zeros((1, 8, 8, 1), np.int32)}, "give int8 values (already quantized) or float values"),
    ({"samples": GOOD}, "the model's input is read from 'x' or"),
    ({"y": np.zeros(2, np.int64)}, "holds arrays ['y']"),
])
def test_run_samples_are_checked(arrays, message, tmp_path):
    path = tmp_path / "d.npz"
    np.savez(path, **arrays)
    with pytest.raises(MtkError) as err:
        load_samples(path, DIGITS_INT8)
    assert message in str(err.value)


def test_int32_samples_name_the_expected_dtype_and_quantization(tmp_path):
    np.save(tmp_path / "d.npy", np.zeros((1, 8, 8, 1), np.int32))
    with pytest.raises(MtkError, match=r"scale [0-9.e-]+, zero point -?\d+\); the samples are int32"):
        load_samples(tmp_path / "d.npy", DIGITS_INT8)


def test_positional_npz_and_good_files_still_load(tmp_path):
    np.savez(tmp_path / "p.npz", GOOD)
    assert len(load_samples(tmp_path / "p.npz", DIGITS_INT8)) == 2
    (tmp_path / "g.npz").write_bytes(GOOD_NPZ)
    assert len(load_samples(tmp_path / "g.npz", DIGITS_INT8)) == 2
    assert len(load_dataset(tmp_path / "g.npz", (1, 8, 8, 1))) == 2


def test_cli_exits_2_on_a_truncated_npz_before_building(tmp_path, capsys):
    data = tmp_path / "d.npz"
    data.write_bytes(GOOD_NPZ[:100])
    code = main(["run", str(DIGITS_INT8), "--input", str(data), "--build-dir", str(tmp_path / "build")])
    err = capsys.readouterr().err
    assert code == 2 and "cannot read" in err and "Traceback" not in err


def test_a_member_of_the_wrong_shape_is_refused_before_it_is_inflated(tmp_path, monkeypatch):
    """An honest 4 MB member that is not the model's input shape: refused from its header, having
    inflated a few KB (the whole member would be read before)."""
    path = tmp_path / "d.npz"
    np.savez_compressed(path, x=np.zeros((1 << 20,), np.float32), y=np.zeros(3, np.int64))
    inflated = []
    read = zipfile.ZipExtFile.read
    monkeypatch.setattr(zipfile.ZipExtFile, "read", lambda self, n=-1: inflated.append(len(b := read(self, n))) or b)
    for load in (lambda: load_samples(path, DIGITS_INT8), lambda: load_dataset(path, (1, 8, 8, 1))):
        inflated.clear()
        with pytest.raises(MtkError, match=r"shape \[1048576\], which does not fit"):
            load()
        assert sum(inflated) < 1 << 16, sum(inflated)


def test_nan_one_hot_labels_are_refused_not_class_0(tmp_path):
    path = tmp_path / "d.npz"
    np.savez(path, x=GOOD, y=np.array([[np.nan, 1.0], [0.0, np.nan]]))
    with pytest.raises(MtkError, match="labels `y`: 2 of 4 values are NaN"):
        load_dataset(path, (1, 8, 8, 1))
    from mtk.evaluation import load_labels
    with pytest.raises(MtkError, match="labels `y`: 2 of 4 values are NaN"):
        load_labels(path)


def test_a_data_path_that_is_not_a_regular_file_is_refused(tmp_path):
    (tmp_path / "d.npy").symlink_to("/dev/zero")
    with pytest.raises(MtkError, match="not a regular file"):
        load_samples(tmp_path / "d.npy", DIGITS_INT8)


def test_fuzzed_data_files_fail_only_as_mtk_errors(tmp_path):
    """200 seeded mutants of .npy/.npz files (headers, values, zip containers: tests/data_mutator.py)
    through the three readers: each is read or refused with an MtkError; nothing else escapes."""
    import random
    from data_mutator import mutate_data
    from mtk.evaluation import load_labels
    outcomes = {"read": 0, "refused": 0}
    for case in range(200):
        _, name, data = mutate_data((8, 8, 1), random.Random(f"test:{case}"))
        path = tmp_path / name
        path.write_bytes(data)
        for read in (lambda: load_samples(path, DIGITS_INT8), lambda: load_dataset(path, (1, 8, 8, 1)),
                     lambda: load_labels(path)):
            try:
                read()
                outcomes["read"] += 1
            except MtkError:
                outcomes["refused"] += 1
    assert outcomes["refused"] > 200 and outcomes["read"] > 50, outcomes
