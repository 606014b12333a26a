"""mtk from Python: compile the shipped digits CNN to a C library, run it in QEMU on the default
board (mps2/an386, a Cortex-M4F) over the labelled test digits, and print what came back.

    .venv/bin/python models/python_api_example.py [OUTPUT_FOLDER]
"""

from __future__ import annotations

import logging
import sys
import tempfile
from pathlib import Path

import numpy as np

import mtk

HERE = Path(__file__).resolve().parent
MODEL = HERE / "digits_cnn_int8.tflite"
TEST_DATA = HERE / "digits_test.npz"


def main(output: Path) -> None:
    logging.basicConfig(level=logging.INFO, format="%(message)s")   # mtk's progress, on stderr

    library = mtk.compile(MODEL, output, board="mps2/an386", force=True)
    print(f"C library in {library.path}: arena {library.memory.arena_bytes:,} B, "
          f"constants {library.memory.constant_bytes:,} B, {library.macs:,} MACs")

    result = mtk.run(MODEL, board="mps2/an386", inputs=TEST_DATA, runs=5)
    predicted = np.array([np.argmax(sample[0]) for sample in result.outputs])
    with np.load(TEST_DATA) as data:
        labels = data["y"]
    print(f"{result.per_inference.median:,} {result.unit} per inference on {result.board.name}, "
          f"flash {result.sizes.flash_bytes:,} B, RAM {result.sizes.ram_bytes:,} B")
    print(f"top-1 accuracy on the target: {np.mean(predicted == labels):.3f} ({len(labels)} test digits)")


if __name__ == "__main__":
    if len(sys.argv) > 1:
        main(Path(sys.argv[1]))
    else:
        with tempfile.TemporaryDirectory() as tmp:
            main(Path(tmp) / "digits")
