"""Cortex-M CPUs: the features kernels and build flags depend on."""

from __future__ import annotations

from dataclasses import dataclass

from .errors import MtkError


@dataclass(frozen=True)
class Cpu:
    name: str            # gcc -mcpu name, e.g. "cortex-m4"
    arch: str            # "armv7e-m", ...
    dsp: bool            # SIMD/DSP extension (SMLAD, SXTB16, ...)
    mve: bool            # Helium (M-profile vector extension)
    fpu: str | None      # gcc -mfpu name, None when the core has no FPU

    @property
    def long_multiply(self) -> bool:
        """UMULL/SMLAL: every core but ARMv6-M and ARMv8-M Baseline."""
        return self.arch not in ("armv6-m", "armv8-m.base")

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
    Cpu("cortex-m4", "armv7e-m", dsp=True, mve=False, fpu="fpv4-sp-d16"),
    Cpu("cortex-m7", "armv7e-m", dsp=True, mve=False, fpu="fpv5-d16"),
    Cpu("cortex-m33", "armv8-m.main", dsp=True, mve=False, fpu="fpv5-sp-d16"),
    Cpu("cortex-m55", "armv8.1-m.main", dsp=True, mve=True, fpu="auto"),
]}

DEFAULT_CPU = "cortex-m4"


def get_cpu(name: str) -> Cpu:
    key = name.lower().replace("_", "-")
    if key == "cortex-m0+":
        key = "cortex-m0plus"
    if key not in CPUS:
        raise MtkError(f"unknown CPU '{name}'", hint=f"choose one of: {', '.join(CPUS)}")
    return CPUS[key]
