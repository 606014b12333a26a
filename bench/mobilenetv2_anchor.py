"""Plumerai's showcase model against mtk: MobileNetV2, alpha 0.3, 80×80×3 input, 1000 classes, int8, on a Cortex-M7.

    python bench/mobilenetv2_anchor.py --tf-python /path/to/tf-venv/bin/python
    python bench/mobilenetv2_anchor.py --tf-python ... --board nucleo_f746zg --work /tmp/mnv2 --json out.json

Needs TensorFlow (`pip install tensorflow-cpu` in a venv of its own: --tf-python is its interpreter; mtk's own
environment need not have it). That interpreter builds `tf.keras.applications.MobileNetV2(alpha=0.3,
input_shape=(80, 80, 3), weights=None, classes=1000)` (random initial weights: nothing is downloaded) and saves
it as a float .tflite, with random calibration inputs in MobileNetV2's [-1, 1] range. Then `mtk quantize` makes
it int8 and `mtk bench --emulate` runs it for the board (default stm32f746g_disco, the STM32F746 at 216 MHz
Plumerai measured on) on the QEMU machine with its core (mps2/an500, Cortex-M7): instructions per inference
(QEMU -icount, exact), the cycle model's estimated cycles at the board's clock and flash timing, arena, RAM
(arena + stack + the firmware's data) and flash, beside Plumerai's published figures
(https://plumerai.com/benchmark: 77 ms at 216 MHz = 16.6 M cycles, 80 KiB RAM) and the target of ≤ 11.6 M
cycles, ≤ 64 KiB RAM.
Random weights give the same layer shapes and hence the same work as trained ones; only the requantization
constants differ.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ALPHA, SIDE, CLASSES = 0.3, 80, 1000
CALIB_SAMPLES = 16
PLUMERAI = {"cycles": 16.6e6, "ram_kib": 80}
TARGET = {"cycles": 11.6e6, "ram_kib": 64}


def make_float_model(out: Path, calib: Path, seed: int) -> None:
    """The float .tflite and its calibration inputs (run by the TensorFlow interpreter)."""
    import numpy as np
    import tensorflow as tf

    tf.keras.utils.set_random_seed(seed)
    model = tf.keras.applications.MobileNetV2(alpha=ALPHA, input_shape=(SIDE, SIDE, 3), weights=None,
                                              classes=CLASSES)
    rng = np.random.default_rng(seed)
    for layer in model.layers:   # trained-like batch-norm statistics: Keras' defaults leave channels dead
        if isinstance(layer, tf.keras.layers.BatchNormalization):
            gamma, beta, mean, var = layer.get_weights()
            layer.set_weights([gamma, rng.uniform(0, 0.5, beta.shape), rng.normal(0, 0.1, mean.shape),
                               rng.uniform(0.5, 1.5, var.shape)])
    out.write_bytes(tf.lite.TFLiteConverter.from_keras_model(model).convert())
    np.save(calib, rng.uniform(-1, 1, (CALIB_SAMPLES, SIDE, SIDE, 3)).astype(np.float32))


def mtk(*args: str) -> str:
    return subprocess.run([sys.executable, "-m", "mtk", *args], check=True, stdout=subprocess.PIPE, text=True).stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tf-python", type=Path, help="a Python interpreter with TensorFlow (default: this one)")
    parser.add_argument("--board", default="stm32f746g_disco",
                        help="physical board to estimate, emulated in QEMU (default stm32f746g_disco)")
    parser.add_argument("--work", type=Path, help="keep the models here (default: a temporary folder)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the weights and calibration data")
    parser.add_argument("--max-ram", type=int, metavar="BYTES", help="mtk bench's arena cap (a tiled plan below it)")
    parser.add_argument("--json", type=Path, help="write the figures to this file")
    parser.add_argument("--float-only", type=Path, metavar="DIR", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.float_only:
        make_float_model(args.float_only / "mobilenetv2_float.tflite", args.float_only / "calib.npy", args.seed)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        work = args.work or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        tf_python = str(args.tf_python or sys.executable)
        try:
            made = subprocess.run([tf_python, __file__, "--float-only", str(work), "--seed", str(args.seed)],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                  env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"})
        except OSError as e:
            print(f"mobilenetv2_anchor.py: cannot run {tf_python}: {e.strerror}", file=sys.stderr)
            return 2
        if made.returncode:
            sys.stderr.write(made.stderr)
            print(f"mobilenetv2_anchor.py: building the float model with {tf_python} failed (TensorFlow installed?)",
                  file=sys.stderr)
            return 1
        model = work / "mobilenetv2_int8.tflite"
        mtk("quantize", "-q", str(work / "mobilenetv2_float.tflite"), "--calib", str(work / "calib.npy"),
            "-o", str(model), "--force")
        cap = ["--max-ram", str(args.max_ram)] if args.max_ram else []
        row = json.loads(mtk("bench", "-q", str(model), "--board", args.board, "--emulate", "--json", *cap))[0]
    cycles = row["estimated_cycles"]
    figures = {"board": cycles["board"], "emulated_on": row["board"], "cpu": row["cpu"], "macs": row["macs"],
               "instructions": row["per_inference"]["median"], "estimated_cycles": cycles["median"],
               "arena_bytes": row["arena_bytes"], "ram_bytes": row["ram_bytes"], "flash_bytes": row["flash_bytes"]}
    ram_kib = figures["ram_bytes"] / 1024
    print(f"MobileNetV2 alpha {ALPHA} {SIDE}x{SIDE}x3, {CLASSES} classes, int8, for {figures['board']} "
          f"({figures['cpu']}, emulated on {figures['emulated_on']}): {figures['macs']:,} MACs")
    print(f"  estimated cycles per inference {figures['estimated_cycles']:,} "
          f"({figures['estimated_cycles'] / PLUMERAI['cycles']:.2f}x Plumerai's {PLUMERAI['cycles'] / 1e6:.1f} M, "
          f"target <= {TARGET['cycles'] / 1e6:.1f} M); instructions {figures['instructions']:,}")
    print(f"  arena {figures['arena_bytes']:,} B, RAM {figures['ram_bytes']:,} B = {ram_kib:.1f} KiB "
          f"({ram_kib / PLUMERAI['ram_kib']:.2f}x Plumerai's {PLUMERAI['ram_kib']} KiB, "
          f"target <= {TARGET['ram_kib']} KiB), flash {figures['flash_bytes']:,} B")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
