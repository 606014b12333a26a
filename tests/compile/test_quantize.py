"""mtk quantize on real models: the shipped digits CNN, a sine regressor, a model with an op left in float."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import tflite_micro

from mtk.cli import main
from mtk.errors import ModelError, MtkError
from mtk.fsutil import umask
from mtk.paths import MODELS
from mtk.samples import load_samples
from mtk.quantize import quantize_model
from mtk.reader import read_model
from mtk.reference import run_reference_batch
from mtk.tflite_builder import ModelBuilder

DIGITS_FLOAT = MODELS / "digits_cnn_float.tflite"
DIGITS_INT8 = MODELS / "digits_cnn_int8.tflite"
DIGITS_CALIB = MODELS / "digits_calib.npz"
DIGITS_TEST = MODELS / "digits_test.npz"
SINE_FLOAT = Path(tflite_micro.__file__).parent / "python" / "tflite_micro" / "sine_float.tflite"


def quantize_input(model: Path, x: np.ndarray) -> np.ndarray:
    """Float samples as the int8 model's input tensor values."""
    graph = read_model(model)
    quant = graph.tensors[graph.inputs[0]].quant
    return np.clip(np.round(x / quant.s) + quant.zp, -128, 127).astype(np.int8)


def dequantize_output(model: Path, q: np.ndarray) -> np.ndarray:
    graph = read_model(model)
    quant = graph.tensors[graph.outputs[0]].quant
    return (q.astype(np.float64) - quant.zp) * quant.s


@pytest.fixture(scope="module")
def digits_report(tmp_path_factory: pytest.TempPathFactory):
    out = tmp_path_factory.mktemp("digits") / "digits_int8.tflite"
    return quantize_model(DIGITS_FLOAT, DIGITS_CALIB, out, eval_data=DIGITS_TEST)


def test_shipped_model_keeps_accuracy_within_one_point(digits_report) -> None:
    scores = digits_report.labels
    assert scores.float_accuracy > 0.95
    assert abs(scores.float_accuracy - scores.int8_accuracy) <= 0.01
    assert scores.agreement >= 0.98
    assert digits_report.float_ops == []
    (output,) = digits_report.outputs
    assert output.snr_db > 25 and output.cosine > 0.999


def test_committed_int8_model_is_what_mtk_quantize_writes(digits_report) -> None:
    assert digits_report.int8_model.read_bytes() == DIGITS_INT8.read_bytes(), \
        "models/digits_cnn_int8.tflite is stale: rerun python models/make_examples.py"


def test_quantized_model_runs_in_tflite_micro(digits_report) -> None:
    with np.load(DIGITS_TEST) as data:
        x, y = data["x"], data["y"]
    model = digits_report.int8_model
    graph = read_model(model)
    assert [graph.tensors[i].dtype for i in graph.inputs + graph.outputs] == ["int8", "int8"]
    assert all(t.dtype != "float32" for t in graph.tensors)
    outputs = run_reference_batch(model, [[sample[None]] for sample in quantize_input(model, x)])
    predictions = np.array([out[0].reshape(-1).argmax() for out in outputs])
    assert abs(np.mean(predictions == y) - digits_report.labels.int8_accuracy) < 1e-9


def test_sine_model_within_005_rmse_of_float(tmp_path: Path) -> None:
    calib = tmp_path / "calib.npy"
    np.save(calib, np.random.default_rng(0).uniform(0, 2 * np.pi, (500, 1)).astype(np.float32))
    out = tmp_path / "sine_int8.tflite"
    assert main(["quantize", str(SINE_FLOAT), "--calib", str(calib), "-o", str(out), "-q"]) == 0
    grid = np.linspace(0, 2 * np.pi, 400, dtype=np.float32)[:, None]
    float_out = np.array([o[0] for o in run_reference_batch(SINE_FLOAT, [[v[None]] for v in grid])]).reshape(-1)
    int8_raw = np.array([o[0] for o in run_reference_batch(out, [[v[None]] for v in quantize_input(out, grid)])])
    rmse = float(np.sqrt(np.mean((dequantize_output(out, int8_raw).reshape(-1) - float_out) ** 2)))
    assert rmse < 0.05


def leaky_relu_model(path: Path) -> Path:
    """FC -> LEAKY_RELU -> FC: ai-edge-quantizer cannot quantize LEAKY_RELU and leaves it in float."""
    rng = np.random.default_rng(1)
    b = ModelBuilder(description="leaky relu")
    x, hidden, leaky, y = (b.tensor(n, s, "float32") for n, s in
                           [("input", (1, 4)), ("hidden", (1, 8)), ("leaky", (1, 8)), ("output", (1, 3))])
    b.op("FULLY_CONNECTED", [x, b.const("w1", rng.standard_normal((8, 4)).astype(np.float32)),
                             b.const("b1", np.zeros(8, np.float32))], [hidden])
    b.op("LEAKY_RELU", [hidden], [leaky], alpha=0.1)
    b.op("FULLY_CONNECTED", [leaky, b.const("w2", rng.standard_normal((3, 8)).astype(np.float32)),
                             b.const("b2", np.zeros(3, np.float32))], [y])
    b.inputs([x])
    b.outputs([y])
    return b.save(path)


def test_op_left_in_float_is_named_and_fails(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    model = leaky_relu_model(tmp_path / "leaky.tflite")
    calib = tmp_path / "calib.npy"
    np.save(calib, np.random.default_rng(2).standard_normal((32, 4)).astype(np.float32))
    out = tmp_path / "leaky_int8.tflite"
    assert main(["quantize", str(model), "--calib", str(calib), "-o", str(out)]) == ModelError.exit_code
    err = capsys.readouterr().err
    assert "#1 LEAKY_RELU" in err and "--allow-float" in err and "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["calib.npy", "leaky.tflite"]

    assert main(["quantize", str(model), "--calib", str(calib), "-o", str(out), "--allow-float", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["float_ops"] == ["#1 LEAKY_RELU (output 'leaky')"]
    assert out.exists()


def test_float_io_and_percentile(tmp_path: Path) -> None:
    out = tmp_path / "digits_float_io.tflite"
    report = quantize_model(DIGITS_FLOAT, DIGITS_CALIB, out, eval_data=DIGITS_TEST, float_io=True,
                            calibration="percentile", percentile=99.9)
    graph = read_model(out)
    assert [graph.tensors[i].dtype for i in graph.inputs + graph.outputs] == ["float32", "float32"]
    assert report.float_ops == [] and report.calibration == "percentile 99.9"
    assert abs(report.labels.float_accuracy - report.labels.int8_accuracy) <= 0.01
    minmax = read_model(DIGITS_INT8)
    scales = {t.name: t.quant.s for t in graph.tensors if t.quant is not None and not t.is_constant}
    # Clipping narrows at least one activation range (the ReLU outputs have long tails).
    assert any(scales[t.name] < t.quant.s * 0.99 for t in minmax.tensors
               if t.quant is not None and not t.is_constant and t.name in scales)


def test_default_output_path_and_text_report(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    model = tmp_path / "digits_float.tflite"
    model.write_bytes(DIGITS_FLOAT.read_bytes())
    assert main(["quantize", str(model), "--calib", str(DIGITS_CALIB), "--eval", str(DIGITS_TEST)]) == 0
    written = tmp_path / "digits_int8.tflite"
    assert written.stat().st_mode & 0o777 == 0o666 & ~umask()   # not mkstemp's 0600
    text = capsys.readouterr().out
    assert "probabilities" in text and "accuracy: float" in text
    before = written.read_bytes()   # a second run never replaces it without -o or --force
    assert main(["quantize", str(model), "--calib", str(DIGITS_CALIB)]) == MtkError.exit_code
    assert f"{written} exists" in capsys.readouterr().err and written.read_bytes() == before


def test_16x8_keeps_accuracy_and_is_named_so(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """--activations int16: int16 activations and I/O (symmetric), int8 weights, int64 biases; the same report."""
    model = tmp_path / "digits_float.tflite"
    model.write_bytes(DIGITS_FLOAT.read_bytes())
    assert main(["quantize", str(model), "--calib", str(DIGITS_CALIB), "--eval", str(DIGITS_TEST),
                 "--activations", "int16", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    out = tmp_path / "digits_16x8.tflite"
    assert report["activations"] == "int16" and report["int8_model"] == str(out) and report["float_ops"] == []
    assert report["labels"]["agreement"] >= 0.99 and report["outputs"][0]["snr_db"] > 35   # int8: ~28 dB
    graph = read_model(out)
    activations = [graph.tensors[i] for op in graph.ops for i in [op.inputs[0], *op.outputs]]
    assert {(t.dtype, t.quant.zp) for t in activations} == {("int16", 0)}
    weighted = [graph.input_tensors(op) for op in graph.ops if op.type in ("CONV_2D", "FULLY_CONNECTED")]
    assert {(w.dtype, b.dtype) for _, w, b in weighted} == {("int8", "int64")}


def test_bad_activations_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(MtkError, match="unknown activations 'int4'"):
        quantize_model(DIGITS_FLOAT, DIGITS_CALIB, tmp_path / "x.tflite", activations="int4")
    with pytest.raises(SystemExit) as exit_info:
        main(["quantize", str(DIGITS_FLOAT), "--calib", str(DIGITS_CALIB), "--activations", "int4"])
    assert exit_info.value.code == 2 and "invalid choice: 'int4'" in capsys.readouterr().err
    assert not (tmp_path / "x.tflite").exists()


@pytest.fixture(scope="module")
def digits_16x8(tmp_path_factory: pytest.TempPathFactory):
    out = tmp_path_factory.mktemp("digits16") / "digits_16x8.tflite"
    return out, quantize_model(DIGITS_FLOAT, DIGITS_CALIB, out, eval_data=DIGITS_TEST, activations="int16")


@pytest.mark.slow
def test_16x8_model_compiles_bit_exact(digits_16x8) -> None:
    """The 16x8 digits CNN (CONV_2D, MAX_POOL_2D, RESHAPE, FULLY_CONNECTED, SOFTMAX on int16) compiled by
    mtk: bit-exact with tflite-micro on the host, and as accurate as the quantizer's report says."""
    from harness import assert_bit_exact
    out, report = digits_16x8
    samples = load_samples(DIGITS_TEST, out)[:40]
    with np.load(DIGITS_TEST) as data:
        y = data["y"]
    assert_bit_exact(out.read_bytes(), inputs=samples)
    predictions = np.array([o[0].reshape(-1).argmax() for o in run_reference_batch(out, samples)])
    assert np.mean(predictions == y[:40]) >= report.labels.int8_accuracy - 0.05


def test_float_samples_are_quantized_for_an_int16_input(tmp_path: Path) -> None:
    b = ModelBuilder(description="int16 input")
    x = b.tensor("x", (1, 4), "int16", scale=0.001, zero_point=0)
    y = b.tensor("y", (1, 4), "int16", scale=0.001, zero_point=0)
    b.op("RELU", [x], [y])
    b.inputs([x])
    b.outputs([y])
    model = b.save(tmp_path / "m.tflite")
    np.save(tmp_path / "f.npy", np.float32([[0.5, -0.0014, 40.0, -40.0]]))
    (sample,) = load_samples(tmp_path / "f.npy", model)
    assert sample[0].dtype == np.int16 and sample[0].tolist() == [[500, -1, 32767, -32768]]
    np.save(tmp_path / "i.npy", np.int32([[1, 2, 3, 4]]))
    with pytest.raises(MtkError, match="input x is int16: give int16 values"):
        load_samples(tmp_path / "i.npy", model)


@pytest.mark.slow
@pytest.mark.parametrize("kept", [False, True])
def test_a_model_quantized_on_the_way_says_whether_it_is_kept(tmp_path, caplog, kept):
    """`mtk run model_float.tflite --calib`: the int8 model goes to a temporary folder, and the messages say so
    (its path is not printed); with --build-dir it stays there, and its path is."""
    import logging

    from mtk.pipeline import int8_model
    from mtk.reader import read_model

    caplog.set_level(logging.INFO, logger="mtk")
    out = int8_model(read_model(DIGITS_FLOAT), str(DIGITS_CALIB), tmp_path, kept=kept).source
    assert out == tmp_path / "digits_cnn_int8.tflite" and out.is_file()
    if kept:
        assert f"into {out}" in caplog.text and f"{out}: " in caplog.text
    else:
        assert "into a temporary digits_cnn_int8.tflite, removed at exit (`mtk quantize" in caplog.text
        assert "digits_cnn_int8.tflite (temporary): " in caplog.text and str(out) not in caplog.text
