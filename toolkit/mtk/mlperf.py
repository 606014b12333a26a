"""MLPerf Tiny: the four benchmarks as their reference submissions run them, so that mtk firmware
is a DUT that the stock host runner scores as it scores a reference.

Facts from mlcommons/tiny: `benchmark/reference_submissions/<benchmark>/submitter_implemented.cpp`
(th_load_tensor: how the `db` bytes become the model input; th_results: the `m-results-[...]`
format), their `api/submitter_implemented.h` (MAX_DB_INPUT_SIZE, TH_MODEL_VERSION) and the runner's
`devices_*.yaml` (the DUT's baud rate per mode on silicon). The firmware side is mtk_benchmark_t
in firmware/mtk_model.h.
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .errors import ModelError

if TYPE_CHECKING:
    import numpy as np

    from .compiled import CompiledModel, IOTensor

AUTO = "auto"   # --mlperf-tiny without an id: the benchmark whose reference model has the model's I/O
MODES = ("performance", "accuracy", "energy")
# enum mtk_wire and enum mtk_results_format (firmware/mtk_model.h)
WIRE_CODES = {"int8": 0, "uint8-128": 1, "float32": 2}
RESULTS_CODES = {"truncated": 0, "fixed3": 1, "mse": 2}
BAUD_KWS_IC_VWW = {"performance": 115200, "accuracy": 115200, "energy": 9600}   # devices_kws_ic_vww.yaml
BAUD_AD = {"performance": 921600, "accuracy": 921600, "energy": 9600}            # devices_ad.yaml


@dataclass(frozen=True)
class Benchmark:
    id: str                        # EEMBC model id (TH_MODEL_VERSION), what `profile%` names
    title: str
    input_shape: tuple[int, ...]   # the reference model's int8 input, without the batch dimension
    output_count: int              # elements of its int8 output
    wire: str                      # what the runner sends: "int8" as is, "uint8-128" pixels, "float32" features
    db_capacity: int               # MAX_DB_INPUT_SIZE of the reference submission
    results_format: str            # "truncated" (0.%d%d%d), "fixed3" (%0.3f), "mse" (one %0.3f score)
    results_commas: int            # values followed by ',' (vww01's reference prints a trailing one)
    baud: dict[str, int]           # on silicon, per runner mode

    @property
    def input_count(self) -> int:
        return math.prod(self.input_shape)

    @property
    def wire_bytes(self) -> int:
        """One input as the runner sends it."""
        return self.input_count * (4 if self.wire == "float32" else 1)

    def matches(self, compiled: CompiledModel) -> bool:
        """True if the model has the reference model's I/O: one int8 input of its shape, int8 outputs."""
        if len(compiled.inputs) != 1 or not compiled.outputs:
            return False
        x, y = compiled.inputs[0], compiled.outputs[0]
        return (x.dtype == "int8" and tuple(d for d in x.shape if d != 1) == tuple(d for d in self.input_shape if d != 1)
                and y.dtype == "int8" and y.bytes == self.output_count)

    def encode(self, sample: np.ndarray, tensor: IOTensor) -> bytes:
        """An int8 input sample as the runner would send it: the bytes whose conversion on the
        target (the reference's th_load_tensor) gives `sample` back."""
        import numpy as np   # here: the command line reads BENCHMARKS without numpy

        q = np.asarray(sample, dtype=np.int8).reshape(-1)
        if self.wire == "uint8-128":
            return (q.view(np.uint8) ^ 0x80).tobytes()
        if self.wire == "float32":
            return ((q.astype(np.float32) - np.float32(tensor.zero_point or 0)) * np.float32(tensor.scale)).tobytes()
        return q.tobytes()

    def describe(self) -> str:
        return f"{self.id}: {'x'.join(map(str, self.input_shape))} int8 -> {self.output_count}"

    def glue_fields(self, compiled: CompiledModel) -> dict[str, Any]:
        """The firmware's mtk_benchmark_t for `compiled` (model_glue.c.j2)."""
        x, y = compiled.inputs[0], compiled.outputs[0]
        return {"id": self.id, "db_capacity": self.db_capacity, "wire_bytes": self.wire_bytes,
                "wire": WIRE_CODES[self.wire], "results_format": RESULTS_CODES[self.results_format],
                "results_commas": self.results_commas,
                "input_scale": c_float(x.scale or 1.0), "input_zero_point": x.zero_point or 0,
                "output_scale": c_float(y.scale or 1.0), "output_zero_point": y.zero_point or 0}


def c_float(value: float) -> str:
    """A float32 value as an exact C literal."""
    return struct.unpack("<f", struct.pack("<f", value))[0].hex() + "f"


BENCHMARKS: dict[str, Benchmark] = {b.id: b for b in (
    Benchmark("kws01", "keyword spotting", (49, 10, 1), 12, "int8", 49 * 10 * 1, "truncated", 11, BAUD_KWS_IC_VWW),
    Benchmark("vww01", "visual wake words", (96, 96, 3), 2, "uint8-128", 96 * 96 * 3, "fixed3", 2, BAUD_KWS_IC_VWW),
    Benchmark("ic01", "image classification", (32, 32, 3), 10, "uint8-128", 32 * 32 * 3, "fixed3", 9, BAUD_KWS_IC_VWW),
    Benchmark("ad01", "anomaly detection", (640,), 640, "float32", 5 * 128 * 4 * 2, "mse", 0, BAUD_AD),
)}


def detect(compiled: CompiledModel) -> Benchmark | None:
    return next((b for b in BENCHMARKS.values() if b.matches(compiled)), None)


def resolve(choice: str | None, compiled: CompiledModel) -> Benchmark | None:
    """The benchmark `--mlperf-tiny` names (AUTO: detected from the model's I/O), checked against
    the model; None without the option."""
    if choice is None:
        return None
    if choice == AUTO:
        found = detect(compiled)
        if found is None:
            raise ModelError(f"--mlperf-tiny: {compiled.name}'s I/O matches none of the reference models "
                             f"({describe_all()})", hint="name the benchmark: --mlperf-tiny ID")
        return found
    benchmark = BENCHMARKS.get(choice)
    if benchmark is None:
        raise ModelError(f"--mlperf-tiny {choice}: not an MLPerf Tiny benchmark", hint=f"one of {', '.join(BENCHMARKS)}")
    if not benchmark.matches(compiled):
        raise ModelError(f"--mlperf-tiny {choice}: {compiled.name}'s I/O is not the reference model's "
                         f"({benchmark.describe()}: one int8 input, an int8 first output)")
    return benchmark


def describe_all() -> str:
    return "; ".join(b.describe() for b in BENCHMARKS.values())
