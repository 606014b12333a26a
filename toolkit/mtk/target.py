"""Cortex-M CPUs: the features kernels and build flags depend on."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from .errors import MtkError


@dataclass(frozen=True)
class Costs:
    """A core's instruction costs, rough, for choices the compiler makes before anything runs (tiling
    ranks its candidates by them). Fitted to QEMU counts of MobileNetV1-0.25 96x96 (bench/tiling_compare.py):
    untiled an386 1.14 instructions a MAC, an547 0.25, an385 IC 1.95; its layers 1-3 tiled in bands of 1
    and 2 rows: a call 31 (an386) and 24 (an547) instructions, a moved byte 0.71 and 0.28."""

    per_mac: float          # conv/depthwise kernels, per multiply-accumulate (the model's average)
    per_call: int           # a kernel call: arguments, loop and requantization set-up
    per_moved_byte: float   # copying bytes within the arena (word copies)
    per_call_channel: float = 0.0   # a depthwise call's set-up per channel (weights, bias, requantization)
    pixel_block: int = 1            # pixels a convolution's GEMM takes at once
    per_tail_mac: float = 0.0       # extra per MAC of a pixel left over from those blocks


# The band terms are fitted to KWS's 25x5x64 layers in bands: on the an386 a depthwise call adds 6,270-6,600
# instructions (4 bands of 7 rows, 3 of 9: about 100 a channel, its 3x3 kernel's rows starting again), a pointwise
# one 2,590 where its 35-pixel bands each leave a pixel out of the GEMM's pairs (0.94 instructions a MAC more
# than in a pair; 1.1 on the an385). On the an385 and the an547 the band kernels' own variants also move a
# layer by -10 to +1 %: not modelled.
SCALAR_COSTS = Costs(per_mac=2.0, per_call=40, per_moved_byte=0.8, pixel_block=2, per_tail_mac=1.1)
DSP_COSTS = Costs(per_mac=1.1, per_call=30, per_moved_byte=0.7, per_call_channel=100, pixel_block=2, per_tail_mac=0.94)
HELIUM_COSTS = Costs(per_mac=0.25, per_call=25, per_moved_byte=0.3)


class Isa(Enum):
    """Which code path of the hand-written C kernels a core runs (kernels/table.py)."""

    SCALAR = "scalar"   # plain C (Cortex-M0/M0+, ARMv8-M Baseline)
    M3 = "m3"           # long multiply, no DSP (Cortex-M3, M33 without DSP)
    DSP = "dsp"         # the DSP extension's SIMD (SMLAD, SXTB16, ...)
    MVE = "mve"         # Helium


@dataclass(frozen=True)
class Cpu:
    name: str            # gcc -mcpu name, e.g. "cortex-m4"
    arch: str            # "armv7e-m", ...
    dsp: bool            # SIMD/DSP extension (SMLAD, SXTB16, ...)
    mve: bool            # Helium (M-profile vector extension)
    fpu: str | None      # gcc -mfpu name, None when the core has no FPU
    costs: Costs = SCALAR_COSTS

    @property
    def long_multiply(self) -> bool:
        """UMULL/SMLAL: every core but ARMv6-M and ARMv8-M Baseline."""
        return self.arch not in ("armv6-m", "armv8-m.base")

    @property
    def isa(self) -> Isa:
        return Isa.MVE if self.mve else Isa.DSP if self.dsp else Isa.M3 if self.long_multiply else Isa.SCALAR

    @property
    def kernel_features(self) -> tuple[bool, bool, bool]:
        """What the generated kernels' weight layouts depend on: a model compiled for one CPU runs
        on another only if these agree (the C picks its code path from the build's own flags)."""
        return (self.long_multiply, self.dsp, self.mve)

    @property
    def gcc_flags(self) -> list[str]:
        flags = [f"-mcpu={self.name}", "-mthumb"]
        if self.fpu:
            flags += ["-mfloat-abi=hard", f"-mfpu={self.fpu}"]
        else:
            flags += ["-mfloat-abi=soft"]
        return flags

    @property
    def tvm_target(self) -> dict:
        return {"kind": "c", "mcpu": self.name}


CPUS: dict[str, Cpu] = {c.name: c for c in [
    Cpu("cortex-m0", "armv6-m", dsp=False, mve=False, fpu=None),
    Cpu("cortex-m0plus", "armv6-m", dsp=False, mve=False, fpu=None),
    Cpu("cortex-m3", "armv7-m", dsp=False, mve=False, fpu=None),
    Cpu("cortex-m4", "armv7e-m", dsp=True, mve=False, fpu="fpv4-sp-d16", costs=DSP_COSTS),
    Cpu("cortex-m7", "armv7e-m", dsp=True, mve=False, fpu="fpv5-d16", costs=DSP_COSTS),
    Cpu("cortex-m33", "armv8-m.main", dsp=True, mve=False, fpu="fpv5-sp-d16", costs=DSP_COSTS),
    Cpu("cortex-m33+nodsp+nofp", "armv8-m.main", dsp=False, mve=False, fpu=None),   # e.g. SSE-200's CPU0
    Cpu("cortex-m55", "armv8.1-m.main", dsp=True, mve=True, fpu="auto", costs=HELIUM_COSTS),
]}

DEFAULT_CPU = "cortex-m4"


def get_cpu(name: str) -> Cpu:
    key = name.lower().replace("_", "-")
    if key == "cortex-m0+":
        key = "cortex-m0plus"
    if key not in CPUS:
        raise MtkError(f"unknown CPU '{name}'", hint=f"choose one of: {', '.join(CPUS)}")
    return CPUS[key]
