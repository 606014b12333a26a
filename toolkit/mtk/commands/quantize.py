"""`mtk quantize`: float .tflite -> full-integer int8 (or 16x8) .tflite, with a float-vs-quantized report."""

from __future__ import annotations

import argparse
import json

from ..argtypes import finite
from ..errors import MtkError
from ..quantize.methods import ACTIVATIONS, CALIBRATION_METHODS, DEFAULT_PERCENTILE

NAME = "quantize"
HELP = "quantize a float .tflite to full-integer int8 (or 16x8) with calibration data"
DESCRIPTION = """\
Post-training full-integer quantization with ai-edge-quantizer: per-channel int8 weights, int32 bias,
int8 activations, int8 model input/output (--float-io keeps float I/O). --activations int16 makes a
16x8 model instead (ai-edge-quantizer's static_wi8_ai16: int16 symmetric activations and I/O, int64
bias; common for audio). Activation ranges are the global min/max over the calibration data (or
percentile-clipped). Fails if an op was left in float.

data (--calib, --eval): an .npy (samples shaped [N, ...input shape]), an .npz (`x`, and class
labels `y` for accuracy), a folder of .npy files, or a folder of png/jpg images (resized to the
model input, greyscale or RGB as it needs). --mean/--scale normalise every sample: (x - mean) / scale.

examples:
  mtk quantize models/digits_cnn_float.tflite --calib models/digits_calib.npz --eval models/digits_test.npz
  mtk quantize model_float.tflite --calib images/ --mean 127.5 --scale 127.5 -o model_int8.tflite
  mtk quantize speech_float.tflite --calib frames.npy --activations int16     # -> speech_16x8.tflite
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("model", help="float .tflite model (with a SignatureDef)")
    parser.add_argument("--calib", required=True, metavar="DATA", help="calibration data (see above)")
    parser.add_argument("-o", "--output", metavar="PATH",
                        help="model to write (default: beside the model, _float -> _int8 or _16x8, refused if it "
                             "exists unless --force)")
    parser.add_argument("--force", action="store_true", help="replace the default output if it exists")
    parser.add_argument("--eval", metavar="DATA", help="data to compare the float and quantized models on (default: the calibration data)")
    parser.add_argument("--activations", choices=ACTIVATIONS, default="int8",
                        help="activation type: int8 (default), or int16 for a 16x8 model")
    parser.add_argument("--float-io", action="store_true", help="keep float model input/output (QUANTIZE/DEQUANTIZE at the edges)")
    parser.add_argument("--allow-float", action="store_true", help="keep ops the quantizer leaves in float instead of failing")
    parser.add_argument("--calib-method", choices=CALIBRATION_METHODS, default="minmax",
                        help="activation ranges: global min/max (default) or percentile-clipped")
    parser.add_argument("--percentile", type=float, metavar="P",
                        help=f"with --calib-method percentile: clip ranges to the [100-P, P] percentiles (default {DEFAULT_PERCENTILE})")
    parser.add_argument("--mean", type=finite("mean"), default=0.0, metavar="M", help="subtracted from every sample (default 0)")
    parser.add_argument("--scale", type=finite("scale"), default=1.0, metavar="S", help="every sample is divided by it (default 1)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON on stdout")


def run(args: argparse.Namespace) -> int:
    from ..quantize import format_report, quantize_model

    if args.percentile is not None and args.calib_method != "percentile":
        raise MtkError("--percentile needs --calib-method percentile")
    report = quantize_model(
        args.model, args.calib, args.output, eval_data=args.eval, activations=args.activations,
        float_io=args.float_io, allow_float=args.allow_float, calibration=args.calib_method,
        percentile=DEFAULT_PERCENTILE if args.percentile is None else args.percentile, mean=args.mean, scale=args.scale,
        force=args.force)
    print(json.dumps(report.to_dict(), indent=2) if args.json else format_report(report))
    return 0
