"""What a run is asked to do: the board, the firmware's options, the runner's, the limits."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .argtypes import MAX_TIMED_RUNS
from .boards import Board
from .budget import DEFAULT_MAX_RECOMPUTE
from .errors import MtkError

if TYPE_CHECKING:
    from .tuning import Tuning


@dataclass(frozen=True)
class RunOptions:
    board: Board
    platform: str = "baremetal"
    runs: int = 10              # inferences timed for min/median/max
    profile: bool = False       # per-layer counts (a profiling build)
    calib: str | None = None    # calibration data: quantize a float model on the way
    build_dir: Path | None = None
    random_samples: int = 1     # inputs made up when the user gives none
    tuning: Tuning | None = None   # per-layer variants (`mtk tune`); None: the defaults
    mlperf_tiny: str | None = None  # an MLPerf Tiny benchmark id, or mlperf.AUTO: a conforming DUT
    runner_options: dict[str, Any] = field(default_factory=dict)
    semihosting: bool = True    # QEMU runs exit through semihosting; a board (or its stand-in) resets
    timeout: float | None = None   # seconds for each whole answer of the target (--timeout); None: the defaults
    max_ram: int | None = None     # the most arena (--max-ram); None: what the board's RAM leaves
    max_recompute: float = DEFAULT_MAX_RECOMPUTE   # extra MACs tiling may add (--max-recompute)
    emulate: Board | None = None   # a physical board whose code `board` (its core's QEMU board) runs: its estimate
    cache: bool = True             # reuse a bare-metal firmware built before from the same inputs (buildcache.py)
    weights_in_ram: bool = False   # the constants copied from flash into RAM at startup (--weights-in-ram)


def check_runs(runs: int) -> None:
    if not 1 <= runs <= MAX_TIMED_RUNS:
        raise MtkError(f"-n {runs}: the firmware times 1 to {MAX_TIMED_RUNS} inferences at a time")
