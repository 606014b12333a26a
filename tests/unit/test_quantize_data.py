"""Calibration/evaluation data for mtk quantize: every source kind, and every bad-data case as a clear error."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import numpy as np
import pytest
from PIL import Image

from mtk.cli import main
from mtk.errors import MtkError
from mtk.paths import MODELS
from mtk.quantize import Normalization, load_dataset

DIGITS_FLOAT = MODELS / "digits_cnn_float.tflite"
DIGITS_INPUT = (1, 8, 8, 1)
GOOD = np.random.default_rng(0).uniform(0, 1, (16, 8, 8, 1)).astype(np.float32)


def save_npy(array: np.ndarray) -> Callable[[Path], Path]:
    def make(folder: Path) -> Path:
        np.save(folder / "data.npy", array)
        return folder / "data.npy"
    return make


def save_npz(**arrays: np.ndarray) -> Callable[[Path], Path]:
    def make(folder: Path) -> Path:
        np.savez(folder / "data.npz", **arrays)
        return folder / "data.npz"
    return make


def write_file(name: str, content: bytes) -> Callable[[Path], Path]:
    def make(folder: Path) -> Path:
        (folder / name).write_bytes(content)
        return folder / name
    return make


def folder_of(*files: tuple[str, bytes]) -> Callable[[Path], Path]:
    def make(folder: Path) -> Path:
        (folder / "set").mkdir()
        for name, content in files:
            (folder / "set" / name).write_bytes(content)
        return folder / "set"
    return make


def with_nan() -> np.ndarray:
    x = GOOD.copy()
    x[3, 2, 2, 0] = np.nan
    return x


BAD_DATA = {
    "wrong shape": (save_npy(np.zeros((4, 7, 7), np.float32)), "does not fit the model input"),
    "NaN": (save_npy(with_nan()), "NaN or infinite"),
    "inf": (save_npz(x=np.where(GOOD > 0.9, np.inf, GOOD)), "NaN or infinite"),
    "empty array": (save_npy(np.zeros((0, 8, 8, 1), np.float32)), "no samples"),
    "strings": (save_npy(np.array(["a", "b"])), "expected integer or float"),
    "corrupt npy": (write_file("data.npy", b"\x93NUMPY garbage"), "cannot read"),
    "corrupt npz": (write_file("data.npz", b"PK not a zip"), "cannot read"),
    "unknown suffix": (write_file("data.csv", b"1,2,3"), "unknown kind of file"),
    "missing file": (lambda folder: folder / "nothing.npy", "does not exist"),
    "npz without x": (save_npz(a=GOOD, b=GOOD), "no `x`"),
    "labels length": (save_npz(x=GOOD, y=np.arange(5)), "5 labels"),
    "float labels": (save_npz(x=GOOD, y=np.zeros(16, np.float32)), "integer class indices"),
    "labels out of range": (save_npz(x=GOOD, y=np.full(16, 12)), "10 classes"),
    "empty folder": (folder_of(), "no .npy files and no images"),
    "mixed folder": (folder_of(("a.npy", b""), ("b.png", b"")), "mixes .npy files and images"),
    "corrupt image": (folder_of(("a.png", b"not a png")), "cannot read image"),
}


EVAL_ONLY = {"labels out of range"}   # labels are scored on the evaluation set only


@pytest.mark.parametrize("role, case", [(role, case) for role in ("--calib", "--eval") for case in BAD_DATA
                                        if role == "--eval" or case not in EVAL_ONLY])
def test_bad_data_is_a_clear_error(role: str, case: str, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    make, message = BAD_DATA[case]
    data = make(tmp_path)
    (tmp_path / "good").mkdir()
    good = save_npy(GOOD)(tmp_path / "good")
    calib, evaluation = (data, good) if role == "--calib" else (good, data)
    out = tmp_path / "out" / "model_int8.tflite"
    code = main(["quantize", str(DIGITS_FLOAT), "--calib", str(calib), "--eval", str(evaluation), "-o", str(out)])
    err = capsys.readouterr().err
    assert code == MtkError.exit_code
    assert message in err and "Traceback" not in err
    assert not out.parent.exists() or not any(out.parent.iterdir())


@pytest.mark.parametrize("argv, message", [
    (["--scale", "0"], "scale non-zero"),
    (["--percentile", "99"], "--percentile needs --calib-method percentile"),
    (["--calib-method", "percentile", "--percentile", "20"], "outside (50, 100]"),
])
def test_bad_arguments_are_clear_errors(argv: list[str], message: str, tmp_path: Path,
                                        capsys: pytest.CaptureFixture) -> None:
    calib = save_npy(GOOD)(tmp_path)
    out = tmp_path / "model_int8.tflite"
    assert main(["quantize", str(DIGITS_FLOAT), "--calib", str(calib), "-o", str(out), *argv]) == MtkError.exit_code
    assert message in capsys.readouterr().err
    assert not out.exists()


def test_already_quantized_model_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    calib = save_npy(GOOD)(tmp_path)
    assert main(["quantize", str(MODELS / "digits_cnn_int8.tflite"), "--calib", str(calib),
                 "-o", str(tmp_path / "again.tflite")]) == MtkError.exit_code
    assert "already quantized" in capsys.readouterr().err


def test_layouts_and_single_samples(tmp_path: Path) -> None:
    assert load_dataset(GOOD[:, :, :, 0], DIGITS_INPUT).x.shape == (16, 8, 8, 1)   # channel axis left out
    assert load_dataset(GOOD[0], DIGITS_INPUT).x.shape == (1, 8, 8, 1)             # one sample, no batch axis
    assert load_dataset(np.arange(5), (1, 1)).x.shape == (5, 1)                     # scalar-input model
    np.save(tmp_path / "a.npy", GOOD[0, :, :, 0])
    np.save(tmp_path / "b.npy", GOOD[1:4])
    folder = load_dataset(tmp_path, DIGITS_INPUT)
    assert folder.x.shape == (4, 8, 8, 1) and folder.y is None
    np.testing.assert_array_equal(folder.x, GOOD[:4])


def test_npz_labels_and_normalization(tmp_path: Path) -> None:
    one_hot = np.eye(10, dtype=np.float32)[np.arange(16) % 10]
    levels = (GOOD * 16).astype(np.uint8)
    np.savez(tmp_path / "d.npz", x=levels, y=one_hot)
    data = load_dataset(tmp_path / "d.npz", DIGITS_INPUT, Normalization(mean=8, scale=8))
    np.testing.assert_array_equal(data.y, np.arange(16) % 10)
    np.testing.assert_allclose(data.x, (levels.astype(np.float32) - 8) / 8)


def test_images_are_resized_to_the_input_in_grey_or_rgb(tmp_path: Path) -> None:
    pixels = np.zeros((32, 24, 3), np.uint8)
    pixels[:, :12] = (255, 255, 255)                 # left half white, right half black
    for name in ("b.png", "a.jpg"):
        Image.fromarray(pixels).save(tmp_path / name)
    grey = load_dataset(tmp_path, DIGITS_INPUT, Normalization(mean=127.5, scale=127.5)).x
    assert grey.shape == (2, 8, 8, 1)
    assert grey[:, :, :3].min() > 0.9 and grey[:, :, 5:].max() < -0.9
    rgb = load_dataset(tmp_path, (1, 4, 6, 3)).x
    assert rgb.shape == (2, 4, 6, 3) and rgb[:, :, 0].min() > 240
    with pytest.raises(MtkError, match="images need a model input"):
        load_dataset(tmp_path, (1, 10))


def test_a_quantized_model_tflite_cannot_prepare_is_one_line_of_bad_input():
    """Scales from a calibration that TFLite's own Prepare refuses (a RELU6 bound past int32) are bad input,
    not an internal error."""
    from mtk.errors import ModelError
    from mtk.quantize.litert import reference_interpreter
    from mtk.tflite_builder import ModelBuilder

    b = ModelBuilder(description="relu6 past int32")
    x = b.tensor("x", (1, 4), "int8", scale=0.1, zero_point=0)
    y = b.tensor("y", (1, 3), "int8", scale=1e-12, zero_point=0)
    w = b.const("w", np.ones((3, 4), np.int8), scale=0.1, zero_point=0)
    b.op("FULLY_CONNECTED", [x, w, None], [y], fused_activation_function="RELU6")
    b.inputs([x])
    b.outputs([y])
    with pytest.raises(ModelError, match=r"TFLite cannot prepare the quantized model: .*FULLY_CONNECTED"):
        reference_interpreter(b.build(), "the quantized model")


def test_a_float_model_with_integer_input_is_not_called_quantized(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture) -> None:
    """An audio front end takes int16 samples and computes in float: not "already quantized"."""
    from mtk.tflite_builder import ModelBuilder

    b = ModelBuilder(description="int16 in, float inside")
    x = b.tensor("samples", (1, 4), "int16")
    f = b.tensor("as_float", (1, 4), "float32")
    y = b.tensor("doubled", (1, 4), "float32")
    b.op("CAST", [x], [f])
    b.op("ADD", [f, f], [y])
    b.inputs([x])
    b.outputs([y])
    model = tmp_path / "front_end.tflite"
    model.write_bytes(b.build())
    calib = save_npy(GOOD)(tmp_path)
    assert main(["quantize", str(model), "--calib", str(calib), "-o", str(tmp_path / "q.tflite")]) \
        == MtkError.exit_code
    err = capsys.readouterr().err
    assert "takes int16 input: mtk quantize calibrates float inputs only (2 ops compute in float, the first #0 CAST)" \
        in err
    assert "already quantized" not in err and "Traceback" not in err
