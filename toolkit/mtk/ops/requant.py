"""The requantization epilogue shared by the weighted ops (conv, depthwise, fully connected):
int32 accumulator (bias included) → MultiplyByQuantizedMultiplier per channel → + out_zp → clamp → int8.

When every channel shifts right (or has a zero multiplier), the double rounding runs as one
64-bit multiply-add (mtk_requant_rshift in c/mtk_fixedpoint.h) from a prepared table of four
int32 per channel: multiplier, the rounding term's low and high words, and the final shift.
Other layers use the general TIR transcription (fixedpoint.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from tvm import te, tirx

from .base import Const
from .fixedpoint import multiply_by_quantized_multiplier

RSHIFT_FIELDS = 4   # multiplier, rounding low word, rounding high word, high-word shift


def rshift_table(multiplier: np.ndarray, shift: np.ndarray) -> np.ndarray | None:
    """int32 [channels, 4] for mtk_requant_rshift, or None when a channel shifts left (or, which
    TFLite's positive scales never give, has a negative multiplier). A zero multiplier gives 0 with
    any right shift: it takes shift 1."""
    if np.any((shift >= 0) & (multiplier != 0)) or np.any(multiplier < 0):
        return None
    e = np.where(multiplier == 0, 1, -shift.astype(np.int64))
    rounding = (1 << 30) + (np.int64(1) << (30 + e))
    lo = (rounding & 0xFFFFFFFF).astype(np.uint32).view(np.int32)
    hi = (rounding >> 32).astype(np.int32)
    return np.stack([multiplier.astype(np.int32), lo, hi, (e - 1).astype(np.int32)], axis=1)


def negative_rounding_matters(out_zp: int, act_min: int) -> bool:
    """Whether RoundingDivideByPOT's "- 1 when negative" can change an output of a layer that shifts right: not when
    act_min >= out_zp (ReLU, ReLU6), where a negative sum (whose product with a multiplier >= 0 is <= 0) rounds to at
    most 0 with or without it, so that its output, at most out_zp, is clamped to act_min either way."""
    return act_min < out_zp


def scale(x, multiplier: int, shift: int):
    """MultiplyByQuantizedMultiplier(x, multiplier, shift) with parameters known at compile time:
    mtk_requant_rshift for a right shift, the general transcription otherwise."""
    table = rshift_table(np.array([multiplier], np.int32), np.array([shift], np.int32))
    if table is None:
        return multiply_by_quantized_multiplier(x, multiplier, shift)
    return tirx.call_extern("int32", "mtk_requant_rshift", x, *[int(v) for v in table[0]])


def clamp_s8(x, lo: int, hi: int):
    """x clamped to an int8 activation range [lo, hi], as int8 (mtk_clamp_s8: SSAT where there is one)."""
    return tirx.call_extern("int32", "mtk_clamp_s8", x, lo, hi).astype("int8")


def requant_placeholders(consts: dict[str, Const]) -> dict[str, te.Tensor]:
    """TE placeholders for a TE kernel's buffers of Requant.consts(), by parameter."""
    return {param: te.placeholder((c.data.size,), "int32", name=c.name) for param, c in consts.items()}


@dataclass(frozen=True)
class Requant:
    multiplier: np.ndarray   # int32 [channels]
    shift: np.ndarray        # int32 [channels]
    out_zp: int
    act_min: int
    act_max: int

    @property
    def per_tensor(self) -> bool:
        return bool(np.all(self.multiplier == self.multiplier[0]) and np.all(self.shift == self.shift[0]))

    @property
    def constant_output(self) -> int | None:
        """The one value every output takes when the activation range or the multipliers leave no other."""
        if self.act_min == self.act_max:
            return self.act_min
        if not np.any(self.multiplier):
            return min(max(self.out_zp, self.act_min), self.act_max)
        return None

    @property
    def negative_rounding_matters(self) -> bool:
        return negative_rounding_matters(self.out_zp, self.act_min)

    @property
    def rshift_table(self) -> np.ndarray | None:
        return rshift_table(self.multiplier, self.shift)

    def consts(self) -> dict[str, Const]:
        """The constant arrays `output` reads, by the kernel parameter that takes each: the rshift table
        (per channel, every channel shifting right), or the multipliers and shifts (per channel otherwise);
        none per tensor (its multiplier and shift are literals in the code)."""
        if self.per_tensor:
            return {}
        table = self.rshift_table
        if table is not None:
            return {"table": Const("requant", table)}
        return {"mult": Const("mult", self.multiplier), "shift": Const("shift", self.shift)}

    def scaled(self, acc, c, table=None, mult=None, shift=None):
        """MultiplyByQuantizedMultiplier(acc) for channel `c`; table/mult/shift are the kernel's buffers of consts()."""
        if self.per_tensor:
            return scale(acc, int(self.multiplier[0]), int(self.shift[0]))
        if table is not None:
            return tirx.call_extern("int32", "mtk_requant_rshift", acc,
                                    *[table[c * RSHIFT_FIELDS + f] for f in range(RSHIFT_FIELDS)])
        return multiply_by_quantized_multiplier(acc, mult[c], shift[c])

    def output(self, acc, c, table=None, mult=None, shift=None):
        """The int8 output of channel `c` from `acc`; table/mult/shift are the kernel's buffers of consts()."""
        return clamp_s8(self.scaled(acc, c, table, mult, shift) + tirx.const(self.out_zp, "int32"),
                        self.act_min, self.act_max)
