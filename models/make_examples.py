"""Train mtk's example model and write it, its data and its int8 version into models/.

    python models/make_examples.py

Needs numpy and scikit-learn only (no training framework): a small CNN on scikit-learn's bundled
8x8 digits is trained with a hand-written numpy loop (~20 s), written as a float .tflite with
mtk.tflite_builder, then quantized with mtk.quantize exactly as `mtk quantize` does.
Outputs are deterministic for a given numpy/scikit-learn version.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

from mtk.quantize import quantize_model
from mtk.tflite_builder import ModelBuilder

MODELS = Path(__file__).resolve().parent
FLOAT_MODEL = MODELS / "digits_cnn_float.tflite"
INT8_MODEL = MODELS / "digits_cnn_int8.tflite"
CALIB_DATA = MODELS / "digits_calib.npz"
TEST_DATA = MODELS / "digits_test.npz"
TEST_SIZE = 360
CALIB_SIZE = 200
SEED = 0


@dataclass
class DigitsSplit:
    x_train: np.ndarray   # (N, 8, 8, 1) float32 in [0, 1]
    y_train: np.ndarray   # (N,) int64
    x_test: np.ndarray
    y_test: np.ndarray
    x_calib: np.ndarray   # drawn from the training images


def load_split() -> DigitsSplit:
    digits = load_digits()
    x = (digits.images / 16.0).astype(np.float32)[..., None]
    x_train, x_test, y_train, y_test = train_test_split(
        x, digits.target, test_size=TEST_SIZE, stratify=digits.target, random_state=SEED)
    pick = np.random.default_rng(SEED).choice(len(x_train), CALIB_SIZE, replace=False)
    return DigitsSplit(x_train, y_train, x_test, y_test, x_train[np.sort(pick)])


# --- a tiny NHWC CNN in numpy: conv3x3(8) relu, maxpool2, conv3x3(16) relu, fc(32) relu, fc(10) ---

def patches_3x3(x: np.ndarray) -> np.ndarray:
    """(N, H, W, C) -> (N, H, W, 9*C): the SAME-padded 3x3 neighbourhood of every pixel, (kh, kw, c) order."""
    n, h, w, c = x.shape
    padded = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
    return np.concatenate([padded[:, i:i + h, j:j + w, :] for i in range(3) for j in range(3)], axis=3)


def patches_3x3_backward(grad: np.ndarray, channels: int) -> np.ndarray:
    """Adjoint of patches_3x3: sum each patch gradient back onto the pixels it came from."""
    n, h, w, _ = grad.shape
    padded = np.zeros((n, h + 2, w + 2, channels), grad.dtype)
    for k, (i, j) in enumerate((i, j) for i in range(3) for j in range(3)):
        padded[:, i:i + h, j:j + w, :] += grad[..., k * channels:(k + 1) * channels]
    return padded[:, 1:-1, 1:-1, :]


def init_params(rng: np.random.Generator) -> dict[str, np.ndarray]:
    def he(fan_in: int, shape: tuple[int, ...]) -> np.ndarray:
        return (rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float32)
    # Conv kernels as (9*C_in, C_out) matrices; TFLite layouts are made when writing the model.
    return {"conv1_w": he(9, (9, 8)), "conv1_b": np.zeros(8, np.float32),
            "conv2_w": he(72, (72, 16)), "conv2_b": np.zeros(16, np.float32),
            "fc1_w": he(256, (256, 32)), "fc1_b": np.zeros(32, np.float32),
            "fc2_w": he(32, (32, 10)), "fc2_b": np.zeros(10, np.float32)}


def forward(p: dict[str, np.ndarray], x: np.ndarray) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Logits and the intermediates backward() needs."""
    n = len(x)
    cols1 = patches_3x3(x)
    a1 = np.maximum(cols1 @ p["conv1_w"] + p["conv1_b"], 0)                      # (N, 8, 8, 8)
    blocks = a1.reshape(n, 4, 2, 4, 2, 8)
    pooled = blocks.max(axis=(2, 4))                                              # (N, 4, 4, 8)
    cols2 = patches_3x3(pooled)
    a2 = np.maximum(cols2 @ p["conv2_w"] + p["conv2_b"], 0)                       # (N, 4, 4, 16)
    flat = a2.reshape(n, 256)
    h = np.maximum(flat @ p["fc1_w"] + p["fc1_b"], 0)
    logits = h @ p["fc2_w"] + p["fc2_b"]
    return logits, {"cols1": cols1, "a1": a1, "blocks": blocks, "pooled": pooled, "cols2": cols2,
                    "a2": a2, "flat": flat, "h": h}


def backward(p: dict[str, np.ndarray], cache: dict[str, np.ndarray], dlogits: np.ndarray) -> dict[str, np.ndarray]:
    n = len(dlogits)
    g = {"fc2_w": cache["h"].T @ dlogits, "fc2_b": dlogits.sum(0)}
    dh = (dlogits @ p["fc2_w"].T) * (cache["h"] > 0)
    g["fc1_w"], g["fc1_b"] = cache["flat"].T @ dh, dh.sum(0)
    da2 = (dh @ p["fc1_w"].T).reshape(cache["a2"].shape) * (cache["a2"] > 0)
    g["conv2_w"] = cache["cols2"].reshape(-1, 72).T @ da2.reshape(-1, 16)
    g["conv2_b"] = da2.sum((0, 1, 2))
    dpooled = patches_3x3_backward(da2 @ p["conv2_w"].T, 8)
    is_max = cache["blocks"] == cache["pooled"][:, :, None, :, None, :]
    da1 = (is_max * dpooled[:, :, None, :, None, :]).reshape(cache["a1"].shape) * (cache["a1"] > 0)
    g["conv1_w"] = cache["cols1"].reshape(-1, 9).T @ da1.reshape(-1, 8)
    g["conv1_b"] = da1.sum((0, 1, 2))
    return {k: v / n for k, v in g.items()}


def train(x: np.ndarray, y: np.ndarray, epochs: int = 40, batch: int = 32, lr: float = 3e-3) -> dict[str, np.ndarray]:
    """Adam on softmax cross-entropy."""
    rng = np.random.default_rng(SEED)
    p = init_params(rng)
    m = {k: np.zeros_like(v) for k, v in p.items()}
    v = {k: np.zeros_like(w) for k, w in p.items()}
    step = 0
    for _ in range(epochs):
        order = rng.permutation(len(x))
        for start in range(0, len(x), batch):
            idx = order[start:start + batch]
            logits, cache = forward(p, x[idx])
            probs = np.exp(logits - logits.max(1, keepdims=True))
            probs /= probs.sum(1, keepdims=True)
            probs[np.arange(len(idx)), y[idx]] -= 1
            grads = backward(p, cache, probs)
            step += 1
            for k in p:
                m[k] = 0.9 * m[k] + 0.1 * grads[k]
                v[k] = 0.999 * v[k] + 0.001 * grads[k] ** 2
                m_hat, v_hat = m[k] / (1 - 0.9 ** step), v[k] / (1 - 0.999 ** step)
                p[k] -= (lr * m_hat / (np.sqrt(v_hat) + 1e-8)).astype(np.float32)
    return p


def accuracy(p: dict[str, np.ndarray], x: np.ndarray, y: np.ndarray) -> float:
    return float(np.mean(forward(p, x)[0].argmax(1) == y))


def build_tflite(p: dict[str, np.ndarray]) -> bytes:
    """The trained CNN as a float .tflite: CONV_2D, MAX_POOL_2D, CONV_2D, RESHAPE, FC, FC, SOFTMAX."""
    b = ModelBuilder(description="mtk example: digits CNN (scikit-learn 8x8 digits), float32")
    x = b.tensor("input", (1, 8, 8, 1), "float32")

    def conv(name: str, source: int, weights: np.ndarray, bias: np.ndarray, out_shape: tuple[int, ...]) -> int:
        c_in, c_out = weights.shape[0] // 9, weights.shape[1]
        kernel = weights.reshape(3, 3, c_in, c_out).transpose(3, 0, 1, 2)   # TFLite: (out, kh, kw, in)
        y = b.tensor(name, out_shape, "float32")
        b.op("CONV_2D", [source, b.const(f"{name}/weights", np.ascontiguousarray(kernel)), b.const(f"{name}/bias", bias)],
             [y], padding="SAME", stride_w=1, stride_h=1, fused_activation_function="RELU")
        return y

    def dense(name: str, source: int, weights: np.ndarray, bias: np.ndarray, activation: str) -> int:
        y = b.tensor(name, (1, weights.shape[1]), "float32")
        b.op("FULLY_CONNECTED", [source, b.const(f"{name}/weights", np.ascontiguousarray(weights.T)),
                                 b.const(f"{name}/bias", bias)],
             [y], fused_activation_function=activation)
        return y

    conv1 = conv("conv1", x, p["conv1_w"], p["conv1_b"], (1, 8, 8, 8))
    pool = b.tensor("pool", (1, 4, 4, 8), "float32")
    b.op("MAX_POOL_2D", [conv1], [pool], padding="VALID", stride_w=2, stride_h=2, filter_width=2, filter_height=2)
    conv2 = conv("conv2", pool, p["conv2_w"], p["conv2_b"], (1, 4, 4, 16))
    flat = b.tensor("flatten", (1, 256), "float32")
    b.op("RESHAPE", [conv2, b.const("flatten/shape", np.array([1, 256], np.int32))], [flat], new_shape=[1, 256])
    fc1 = dense("fc1", flat, p["fc1_w"], p["fc1_b"], "RELU")
    logits = dense("logits", fc1, p["fc2_w"], p["fc2_b"], "NONE")
    probs = b.tensor("probabilities", (1, 10), "float32")
    b.op("SOFTMAX", [logits], [probs], beta=1.0)
    b.inputs([x])
    b.outputs([probs])
    return b.build()


def main() -> None:
    split = load_split()
    params = train(split.x_train, split.y_train)
    print(f"digits CNN: {sum(v.size for v in params.values())} parameters, "
          f"float accuracy {accuracy(params, split.x_test, split.y_test):.4f} on {len(split.y_test)} held-out images")
    FLOAT_MODEL.write_bytes(build_tflite(params))
    np.savez_compressed(CALIB_DATA, x=split.x_calib)
    np.savez_compressed(TEST_DATA, x=split.x_test, y=split.y_test)
    report = quantize_model(FLOAT_MODEL, CALIB_DATA, INT8_MODEL, eval_data=TEST_DATA)
    print(f"int8 (mtk quantize): accuracy {report.labels.int8_accuracy:.4f}, float .tflite {report.labels.float_accuracy:.4f}, "
          f"agreement {report.labels.agreement:.4f}")
    for path in (FLOAT_MODEL, INT8_MODEL, CALIB_DATA, TEST_DATA):
        print(f"  {path.relative_to(MODELS.parent)}: {path.stat().st_size} bytes")


if __name__ == "__main__":
    main()
