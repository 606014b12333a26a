"""DEPTHWISE_CONV_2D with a 3x3 window, dilation 1 and horizontal stride 1 or 2 on DSP cores (Cortex-M4, M7, M33):
one output channel at a time (with a depth multiplier M, output channel c reads input channel c / M), its weights
and bias in registers over the whole channel plane, a window sliding along each row: every input column loaded once, its products added to the (up to 3) outputs whose
window holds it, 4 accumulators taken in turn and the finished outputs stored two at a time. The layer is one
function of assembly generated here with its strides, offsets and border columns as immediates, on the M7 ordered
for dual issue (asm_schedule.py); c/mtk_dw3x3_dsp.h computes the same in C where the assembly does not build.

A column of the window is one int16 pair (slot 0, slot 1) made by PKHBT of two byte loads and slot 2's byte; an
output is SMLAD of its three columns' pairs by W0..W2 and SMLABB/SMLABT/SMLABB of their slot-2 bytes by U, V.
The three slots read three image rows that are always inside the image: an output row whose window reaches
outside (padding) reads the nearest three rows instead, its weights moved at run time to the slots its rows land
in (KIND_SETUP) and the rows outside left out, their input zero point's products added to the bias.
Columns outside the image are the zero point's pair. Requantization as depthwise_dsp.py's (SMMLAR on doubled
sums, weights and bias doubled offline); where a negative sum can only give act_min (act_min >= the output zero
point: ReLU, ReLU6) without its "- 1 when negative", in place and without it. Such a layer's channels share one
right shift E where they can (on single-issue cores): channel c's sums scaled by 2^(E - e_c) (its weights and
bias; s_c = E - e_c >= 1) give the same outputs through SMMLA, whose truncation with k scaled to
2^(s_c - 1) + k_c * 2^s_c is the rounding of the scaled product, and one SSAT ..., ASR #E instead of ASR by e_c
and SSAT (`uniform_shift`).

Each output row is a call of one row subroutine, but for a small plane (VWW's 6x6x128, KWS's 25x5: the calls,
row counter and pointer steps cost the most there), whose rows are written out in the channel's loop.

A layer whose output is taller than wide runs transposed: its columns as rows (strides, padding and the weights'
axes swapped, each output row then a column of the image), for fewer, longer rows; so does one whose rows are too
far apart for LDRSB's offsets (two rows on from a column: 24x24x96 and wider), its columns then the ones an ADD
steps to."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace

import numpy as np

from ..kernels.signature import CFunction
from ..kernels.table import Family, spec
from . import depthwise, depthwise_dsp
from .asm_schedule import dual_issues, schedule, two_loads_beat_ldrd
from .base import Const, Kernel, OpData
from .depthwise_dsp import INT32_LIMIT, fused_params
from .geometry import ConvGeometry
from .requant import negative_rounding_matters
from .variants import KernelChoice

HEADER = spec(Family.DEPTHWISE, "dsp-3x3").header
PERIODS = (8, 4)           # outputs a pass of a row's loop, the longer first (accumulators r8-r11 once or twice
                           # round, stored 2 at a time)
CHANNEL_WORDS = 8          # mult, k, W0, W1, W2, U, V, 2 * bias
LOAD_REACH = 4095          # LDRSB's immediate offset
STORE_REACH = 4095         # STRB's
INLINE_LINES = 1700        # a channel's rows written out in its loop up to this many lines
ACCS = ("r8", "r9", "r10", "r11")
WEIGHTS = ("r2", "r3", "r4")
SINGLES = (("smlabb", "r5"), ("smlabt", "r5"), ("smlabt", "r6"))   # slot 2 of column kx by U.lo, U.hi, V.hi
FRAME = 32                 # stream, input and output pointers of the channel, channels and rows left, the row
                           # loop's end (of r1), the channel's mult and k
MULTIPLIER_SLOT = 8        # with a depth multiplier: the output channels left before the next input channel
NORMAL, TOP, BOTTOM = (0, 1, 2), (None, 0, 1), (1, 2, None)   # slot of each kernel row (None: outside)
# The weight registers of a row kind from the normal ones (W<kx> = (row 0, row 1), U = (w20, w21), V = (e, w22)),
# the bias first taking the zero point's products through the kernel row outside (zp in lr).
KIND_SETUP = {
    NORMAL: [],
    TOP: ["smlabb r7, lr, r2, r7", "smlabb r7, lr, r3, r7", "smlabb r7, lr, r4, r7",
          "lsr r2, r2, #16", "pkhbt r2, r2, r5, lsl #16", "pkhtb r3, r5, r3, asr #16", "pkhtb r4, r6, r4, asr #16",
          "mov r5, #0", "uxth r6, r6"],
    BOTTOM: ["smlabb r7, lr, r5, r7", "smlabt r7, lr, r5, r7", "smlabt r7, lr, r6, r7",
             "pkhtb r5, r3, r2, asr #16", "pkhbt r6, r6, r4", "lsl r2, r2, #16", "lsl r3, r3, #16",
             "lsl r4, r4, #16"],
}


def row_kinds(in_h: int, out_h: int, stride: int, pad: int) -> tuple[list[tuple], list[int]]:
    """Per output row the slot of each kernel row (None outside the image) and the first of the three image
    rows its slots read (the nearest three inside)."""
    kinds, first = [], []
    for oy in range(out_h):
        iy = oy * stride - pad
        top = min(max(iy, 0), in_h - 3)
        kinds.append(tuple(iy + ky - top if 0 <= iy + ky < in_h else None for ky in range(3)))
        first.append(top)
    return kinds, first


INT16_LIMIT = (1 << 15) - 1
PREFERRED_SHIFT = 12       # uniform_shift's choice among those that fit


def uniform_shift(w: np.ndarray, params: np.ndarray) -> int | None:
    """A right shift E every channel's requantization can be scaled to (module docstring): E > max(e_c), the
    channels' scaled weights (doubled, int16), sums and sums plus k within their types, E <= 31; of those the
    nearest to PREFERRED_SHIFT (layers of like scales then share one function). None when there is none.
    w [1, 3, 3, C], params [C][4] (fused_params)."""
    bias2, k, e = (params[:, i].astype(np.int64) for i in (0, 2, 3))
    taps = np.abs(w.astype(np.int64)).reshape(-1, e.size)

    def fits(shift: int) -> bool:
        scale = np.int64(1) << (shift - e)
        sums = (np.abs(bias2) + 256 * taps.sum(axis=0)) * scale              # doubled
        return not (np.any(2 * taps.max(axis=0) * scale > INT16_LIMIT) or np.any(sums > INT32_LIMIT)
                    or np.any(sums // 2 + 1 + np.abs(scale // 2 + k * scale) > INT32_LIMIT))

    shifts = [shift for shift in range(int(e.max()) + 1, 32) if fits(shift)]
    return min(shifts, key=lambda shift: (abs(shift - PREFERRED_SHIFT), shift)) if shifts else None


def pack(w: np.ndarray, params: np.ndarray, shift: int = 0) -> np.ndarray:
    """The channels' stream (int32) from weights w [1, 3, 3, C] and params [C][4] (fused_params): per channel
    mult, k, then the doubled weights as int16 pairs W<kx> = (w[0][kx], w[1][kx]), U = (w[2][0], w[2][1]),
    V = (e, w[2][2]), and 2 * bias; with a uniform shift (> 0) the weights, bias and k scaled to it."""
    mult, k, e, bias2 = (params[:, i].astype(np.int64) for i in (1, 2, 3, 0))
    scale = np.int64(1) << (shift - e) if shift else np.ones_like(e)
    if shift:
        k, bias2 = scale // 2 + k * scale, bias2 * scale
    taps = w[0].astype(np.int64) * 2 * scale                             # [ky][kx][C]

    def pair(lo, hi):
        return lo & 0xffff | (hi & 0xffff) << 16

    words = [mult, k, *(pair(taps[0, kx], taps[1, kx]) for kx in range(3)), pair(taps[2, 0], taps[2, 1]),
             pair(e, taps[2, 2]), bias2]
    return (np.stack(words, axis=1) & 0xffffffff).astype(np.uint32).view(np.int32).reshape(-1)


class _Asm:
    """Assembly lines with the stack depth below the frame tracked (for the frame's offsets)."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.depth = 0

    def __call__(self, *lines: str) -> None:
        self.lines += lines

    def frame(self, slot: int) -> str:
        return f"[sp, #{self.depth + 4 * slot}]"

    def add(self, reg: str, value: int, scratch: str) -> None:
        """reg += value (scratch free when the value needs a register)."""
        if value == 0:
            return
        if abs(value) < 4096:
            self(f"{'addw' if value > 0 else 'subw'} {reg}, {reg}, #{abs(value)}")
        elif modified_immediate(abs(value)):
            self(f"{'add' if value > 0 else 'sub'} {reg}, {reg}, #{abs(value)}")
        else:
            self(f"movw {scratch}, #{value & 0xffff}", f"movt {scratch}, #{(value >> 16) & 0xffff}",
                 f"add {reg}, {reg}, {scratch}")


def modified_immediate(value: int) -> bool:
    """A Thumb-2 ADD/SUB immediate beyond ADDW's 12 bits: an 8-bit value with its top bit set, rotated right by 8 to
    31 (the byte-replicated forms left out)."""
    return any(value == ((b >> r) | (b << (32 - r))) & 0xffffffff for b in range(0x80, 0x100) for r in range(8, 32))


def zero_point_pair(reg: str, zp: int) -> str:
    """reg = the int16 pair (zp, zp) of an int8 zero point: a Thumb-2 modified immediate 0x00XY00XY, or for a
    negative zp its complement's."""
    byte = zp & 0xff if zp >= 0 else ~zp & 0xff
    return f"{'mov' if zp >= 0 else 'mvn'} {reg}, #{byte * 0x10001}"


def _clamp(reg: str, bound: int, cond: str) -> list[str]:
    """reg = bound where reg compares `cond` (lt, gt) to it."""
    compare = f"cmp {reg}, #{bound}" if bound >= 0 else f"cmn {reg}, #{-bound}"
    move = f"mov{cond} {reg}, #{bound}" if bound >= 0 else f"mvn{cond} {reg}, #{~bound}"
    return [compare, f"it {cond}", move]


@dataclass(frozen=True)
class Steps:
    """Bytes from an input row to the next and from a column to the next (the input's channels apart), the same
    for the output."""

    in_row: int
    in_col: int
    out_row: int
    out_col: int


def transposed(g: ConvGeometry) -> ConvGeometry:
    """The layer with rows and columns swapped."""
    return replace(g, in_h=g.in_w, in_w=g.in_h, out_h=g.out_w, out_w=g.out_h, k_h=g.k_w, k_w=g.k_h,
                   stride_h=g.stride_w, stride_w=g.stride_h, dil_h=g.dil_w, dil_w=g.dil_h, pad_top=g.pad_left,
                   pad_left=g.pad_top)


def oriented(g: ConvGeometry, swapped: bool) -> tuple[ConvGeometry, Steps]:
    """The geometry whose rows the assembly runs and its steps: the layer's, or with rows and columns swapped."""
    c, out_c = g.in_c, g.out_c
    if swapped:
        return transposed(g), Steps(c, g.in_w * c, out_c, g.out_w * out_c)
    return g, Steps(g.in_w * c, c, g.out_w * out_c, out_c)


class _Layer:
    """The assembly of one layer, transposed (`swapped`) or not."""

    def __init__(self, layer: ConvGeometry, swapped: bool, zp: int, out_zp: int, act_min: int, act_max: int,
                 period: int = PERIODS[0], cpu: str = "cortex-m4", shift: int = 0) -> None:
        self.swapped = swapped
        self.g, self.steps = g, steps = oriented(layer, swapped)
        self.zp, self.act_min, self.act_max = zp, act_min, act_max
        self.sign_fix = negative_rounding_matters(out_zp, act_min)
        self.kinds, self.first = row_kinds(g.in_h, g.out_h, g.stride_h, g.pad_top)
        self.row = steps.in_row
        self.period, self.split_loads, self.dual_issue = period, two_loads_beat_ldrd(cpu), dual_issues(cpu)
        # the channels' uniform shift E (0: each its own); not on a dual-issue core, where the ASR it saves issues
        # beside another instruction and the scheduled code is slower without it
        self.shift = 0 if self.sign_fix or self.dual_issue else shift
        self.a = _Asm()
        self.reach = 0             # the largest load offset
        self.out_behind = 0        # bytes from r1 to the next output (outputs stored at offsets)

    def outputs_of(self, jw: int) -> list[int]:
        """The outputs of the row whose window holds window column jw (image column jw - pad_left)."""
        s = self.g.stride_w
        return list(range(max(-(-(jw - 2) // s), 0), min(jw // s + 1, self.g.out_w)))

    def column(self, j: int, base: int, temp: str, single: str, const_loaded: bool) -> bool:
        """Column j into r12 (slots 0, 1, slot 1 loaded into `temp`) and `single` (slot 2), r0 at column `base`;
        True when it is the zero point's. Its three loads run back to back when `single` is not `temp` (they
        pipeline on the M4; no load's result is used at once on the M7 and M33). The zero point's column: where
        `single` is r12 (the products read its low half), one MOV or MVN of a replicated halfword; else MOVW/MOVT
        and a MOVW of `single`."""
        g, a = self.g, self.a
        if 0 <= j < g.in_w:
            off = (j - base) * self.steps.in_col
            self.reach = max(self.reach, off + 2 * self.row)
            loads = [f"ldrsb r12, [r0, #{off}]", f"ldrsb {temp}, [r0, #{off + self.row}]"]
            last = f"ldrsb {single}, [r0, #{off + 2 * self.row}]"
            pack = f"pkhbt r12, r12, {temp}, lsl #16"
            a(*loads, *([last, pack] if single != temp else [pack, last]))
            return False
        if not const_loaded:
            half = self.zp & 0xffff
            a(*([zero_point_pair("r12", self.zp)] if single == "r12" else
                [f"movw r12, #{half}", f"movt r12, #{half}", f"movw {single}, #{half}"]))
        return True

    def columns(self, first: int, end: int, base: int, done: list[int]) -> int:
        """Window columns first .. end - 1 of the row, r0 at image column `base`: each column's products go to the
        outputs whose window holds it (output i in ACCS[i % 4], started with the bias at its first column), and the
        finished outputs (`done`, in order) are requantized and stored two at a time. A column's slot-2 byte goes
        to an accumulator that holds no output then, while there is one, else to lr, its slot 1 then to lr or (but
        on a dual-issue core: there that register's wait costs more) to the accumulator of the output the column
        starts. r0 moves on where a column's loads would leave LDRSB's reach;
        returns the column it is left at, r1 past the stored outputs."""
        g, const, previous = self.g, False, None
        for jw in range(first, end):
            j = jw - g.pad_left
            if 0 <= j < g.in_w and (j - base) * self.steps.in_col + 2 * self.row > LOAD_REACH:
                self.a.add("r0", (j - base) * self.steps.in_col, "r12")
                base, const = j, False
            outputs = self.outputs_of(jw)
            busy = {ACCS[i % len(ACCS)] for i in outputs + done}
            # a zero point's column in r12 alone, but on a dual-issue core (its scheduled code is slower so)
            inside = 0 <= j < g.in_w
            single = next((acc for acc in ACCS if acc not in busy), "lr") if inside or self.dual_issue else "r12"
            starting = [ACCS[i % len(ACCS)] for i in outputs if jw == g.stride_w * i]
            temp = starting[0] if single == "lr" and starting and not self.dual_issue else "lr"
            const = self.column(j, base, temp, single, const and single == previous)
            previous = single
            for i in outputs:
                kx, acc = jw - g.stride_w * i, ACCS[i % len(ACCS)]
                self.a(f"smlad {acc}, r12, {WEIGHTS[kx]}, {'r7' if kx == 0 else acc}")
                op, reg = SINGLES[kx]
                self.a(f"{op} {acc}, {single}, {reg}, {acc}")
                if kx == 2:
                    done.append(i)
            if len(done) == 2 or (done and done[-1] == g.out_w - 1):
                self.store(done)
                done.clear()
                const = False
        self.catch_up()
        return base

    def store(self, outputs: list[int]) -> None:
        """The finished outputs requantized and stored in order: r1 advanced past them, or (outputs more than 255
        bytes apart) stored at offsets from r1, which `catch_up` advances (at once on the M7: its scheduled code
        is faster so)."""
        a, accs = self.a, [ACCS[i % len(ACCS)] for i in outputs]
        self.requantize(accs)
        out_col = self.steps.out_col
        if out_col <= 255:
            a(*(f"strb {acc}, [r1], #{out_col}" for acc in accs))
            return
        if self.out_behind + len(accs) * out_col > STORE_REACH:
            self.catch_up()
        a(*(f"strb {acc}, [r1, #{self.out_behind + k * out_col}]" for k, acc in enumerate(accs)))
        self.out_behind += len(accs) * out_col
        if self.dual_issue:
            self.catch_up()

    def catch_up(self) -> None:
        """r1 advanced past the outputs stored at offsets from it (r12 free)."""
        self.a.add("r1", self.out_behind, "r12")
        self.out_behind = 0

    def requantize(self, accs: list[str]) -> None:
        """The sums in `accs` to int8 outputs in place (V's low half is the shift e); r12 and lr free."""
        a = self.a
        if self.sign_fix:
            a("push {r5}")   # U's register holds the multiplier, r12 k
            a.depth += 4
            self.load_params("r5", "r12")
            for acc in accs:
                a(f"smmlar lr, {acc}, r5, r12", f"sub lr, lr, {acc}, lsr #31", "asr lr, lr, r6", f"ssat {acc}, #8, lr")
            a("pop {r5}")
            a.depth -= 4
        elif self.shift:
            self.load_params("r12", "lr")
            a(*(f"smmla {acc}, {acc}, r12, lr" for acc in accs))
            a(*(f"ssat {acc}, #8, {acc}, asr #{self.shift}" for acc in accs))
        else:   # each step over all the sums: no result used by the next instruction (M7, M33 wait for those)
            self.load_params("r12", "lr")
            a(*(f"smmlar {acc}, {acc}, r12, lr" for acc in accs))
            a(*(f"asr {acc}, {acc}, r6" for acc in accs))
            a(*(f"ssat {acc}, #8, {acc}" for acc in accs))
        for acc in accs:
            if self.act_min > -128:
                a(*_clamp(acc, self.act_min, "lt"))
            if self.act_max < 127:
                a(*_clamp(acc, self.act_max, "gt"))

    def load_params(self, mult: str, k: str) -> None:
        """The channel's mult and k from the frame: by LDRD, or two LDRs where those take fewer cycles."""
        a = self.a
        if self.split_loads:
            a(f"ldr {mult}, {a.frame(6)}", f"ldr {k}, {a.frame(7)}")
        else:
            a(f"ldrd {mult}, {k}, {a.frame(6)}")

    def loop_span(self) -> tuple[int, int]:
        """The window columns [first, end) the row's loop runs, `period` outputs' columns a pass: inside the image,
        past outputs 0 and 1 and before the last output's columns (so that each pass's code, its registers and
        requantizations, is the same)."""
        g, s = self.g, self.g.stride_w
        first = max(2 * s + 2, g.pad_left)
        passes = max(min(s * g.out_w, g.in_w + g.pad_left) - first, 0) // (self.period * s)
        return first, first + passes * self.period * s

    def row_code(self) -> int:
        """The row subroutine (label 9): r0 at the window's first row, column 0; r1 at the output row. Returns
        the column r0 is left at."""
        a = self.a
        a("9:", "push {lr}")
        a.depth += 4
        base = self.row_body()
        a("pop {pc}")
        a.depth -= 4
        return base

    def row_body(self) -> int:
        """A row's code (row_code's), lr free. Returns the column r0 is left at."""
        g, a, s, in_col, pad = self.g, self.a, self.g.stride_w, self.steps.in_col, self.g.pad_left
        first, base, done = 0, 0, []
        loop_first, loop_end = self.loop_span()
        period = self.period
        passes = (loop_end - loop_first) // (period * s)
        if passes > 1:
            base = self.columns(0, loop_first, 0, done)
            a.add("r0", (loop_first - pad - base) * in_col, "r12")
            base = loop_first - pad
            a("mov r12, r1")
            a.add("r12", passes * period * self.steps.out_col, "lr")
            a(f"str r12, {a.frame(5)}", "3:")
            moved = self.columns(loop_first, loop_first + period * s, base, done)
            a.add("r0", (base + period * s - moved) * in_col, "r12")
            a(f"ldr r12, {a.frame(5)}", "cmp r1, r12", "bne 3b")
            done[:] = [i + (passes - 1) * period for i in done]
            first, base = loop_end, loop_end - pad
        return self.columns(first, s * (g.out_w - 1) + 3, base, done)

    def inlines_rows(self) -> bool:
        """Whether the channel's rows are written out in its loop instead of calls of the row subroutine: when
        all of them together are at most INLINE_LINES lines (a small plane, whose calls cost the most)."""
        outer, self.a = self.a, _Asm()
        self.row_body()
        lines = len(self.a.lines)
        self.a = outer
        return self.g.out_h * lines <= INLINE_LINES

    def runs(self) -> list[tuple[tuple, int, int]]:
        """Output rows as runs (kind, first output row, count) whose window rows step by the stride."""
        runs: list[tuple[tuple, int, int]] = []
        for oy, (kind, top) in enumerate(zip(self.kinds, self.first)):
            if runs:
                k, oy0, count = runs[-1]
                if k == kind and self.first[oy0] + count * self.g.stride_h == top:
                    runs[-1] = (k, oy0, count + 1)
                    continue
            runs.append((kind, oy, 1))
        return runs

    def next_row(self, end_column: int) -> None:
        """r0 and r1 from the end of a row (r0 at column `end_column`) to the start of the next one of its run."""
        g, steps = self.g, self.steps
        self.a.add("r0", g.stride_h * steps.in_row - end_column * steps.in_col, "r12")
        self.a.add("r1", steps.out_row - g.out_w * steps.out_col, "r12")

    def source(self) -> list[str]:
        g, steps = self.g, self.steps
        multiplier = g.out_c // g.in_c
        frame = FRAME + 8 * (multiplier > 1)   # 8-byte aligned
        inline = self.inlines_rows()
        end_column = 0 if inline else self.row_code()
        row_lines = [] if inline else self.a.lines
        self.a = a = _Asm()
        a("push {r4-r11, lr}", f"sub sp, sp, #{frame}", f"str r1, {a.frame(0)}", f"str r0, {a.frame(1)}",
          f"str r2, {a.frame(2)}")
        if multiplier > 1:
            a(f"movw r12, #{multiplier}", f"str r12, {a.frame(MULTIPLIER_SLOT)}")
        a(f"movw r12, #{g.out_c}", f"str r12, {a.frame(3)}", "5:", f"ldr r12, {a.frame(0)}",
          "ldrd r2, r3, [r12], #8", f"strd r2, r3, {a.frame(6)}")
        # the normal rows first: their code leaves the weights and bias as they are, for the next run's setup; the
        # first run's LDM leaves the stream pointer at the next channel's words, which the frame keeps from then
        weights = "fresh"   # r2-r7: "fresh" (not loaded yet, r12 at them), "kept" (as loaded) or "moved"
        for kind, oy0, count in sorted(self.runs(), key=lambda run: run[0] != NORMAL):
            if weights == "fresh":
                a("ldm r12!, {r2-r7}", f"str r12, {a.frame(0)}")
            elif weights == "moved":
                a(f"ldr r12, {a.frame(0)}", f"sub r12, r12, #{4 * CHANNEL_WORDS - 8}", "ldm r12, {r2-r7}")
            weights = "kept" if kind == NORMAL else "moved"
            if KIND_SETUP[kind]:
                a(f"movw lr, #{self.zp & 0xffff}", *KIND_SETUP[kind])
            a(f"ldr r0, {a.frame(1)}")
            a.add("r0", self.first[oy0] * self.row, "r12")
            a(f"ldr r1, {a.frame(2)}")
            a.add("r1", oy0 * steps.out_row, "r12")
            if inline:
                for row in range(count):
                    if row:
                        self.next_row(end_column)
                    end_column = self.row_body()
                continue
            if count > 1:
                a(f"movw r12, #{count}", f"str r12, {a.frame(4)}", "4:")
            a("bl 9f")
            if count > 1:
                self.next_row(end_column)
                a(f"ldr r12, {a.frame(4)}", "subs r12, r12, #1", f"str r12, {a.frame(4)}", "bne 4b")
        if multiplier > 1:   # the next input channel after the input channel's M output channels
            a(f"ldr r12, {a.frame(MULTIPLIER_SLOT)}", "subs r12, r12, #1", "itttt eq", f"moveq r12, #{multiplier}",
              f"ldreq r0, {a.frame(1)}", "addeq r0, r0, #1", f"streq r0, {a.frame(1)}",
              f"str r12, {a.frame(MULTIPLIER_SLOT)}")
        else:
            a(f"ldr r12, {a.frame(1)}", "adds r12, r12, #1", f"str r12, {a.frame(1)}")
        a(f"ldr r12, {a.frame(2)}", "adds r12, r12, #1", f"str r12, {a.frame(2)}")
        a(f"ldr r12, {a.frame(3)}", "subs r12, r12, #1", f"str r12, {a.frame(3)}", "bne 5b",
          f"add sp, sp, #{frame}", "pop {r4-r11, pc}")
        return a.lines + row_lines


def fits(g: ConvGeometry) -> bool:
    """The layers the generated assembly computes in the orientation of `g`: 3x3, any multiplier up to 255, dilation
    1, horizontal stride 1 or 2, at least 3 input rows, padding of at most a row at the top and 2 columns at the left
    (plan checks the load offsets)."""
    return (g.k_h == 3 and g.k_w == 3 and g.out_c // g.in_c <= 255 and g.dil_h == 1 and g.dil_w == 1
            and g.stride_w in (1, 2) and g.in_h >= 3 and 0 <= g.pad_left <= 2 and 0 <= g.pad_top
            and set(row_kinds(g.in_h, g.out_h, g.stride_h, g.pad_top)[0]) <= set(KIND_SETUP))


def plan(g: ConvGeometry, zp: int, out_zp: int, act_min: int, act_max: int, cpu: str = "cortex-m4", shift: int = 0
         ) -> tuple[_Layer, list[str]] | None:
    """The layer's assembly (and its lines, ordered for `cpu`) transposed when its output is taller than wide (fewer,
    longer rows) and that fits, else as it is, with the longest row loop whose loads stay within LDRSB's immediate;
    a layer that fits as it is but whose loads reach too far, transposed; None when none of these does."""
    for swapped in ((True, False) if g.out_h > g.out_w else (False, True) if fits(g) else ()):
        if not fits(oriented(g, swapped)[0]):
            continue
        for period in PERIODS:
            layer = _Layer(g, swapped, zp, out_zp, act_min, act_max, period, cpu, shift)
            lines = layer.source()
            if layer.reach <= LOAD_REACH:
                return layer, schedule(lines, cpu)
    return None


def c_source(layer: _Layer, lines: list[str]) -> tuple[str, CFunction]:
    """(C source, its function): the layer's assembly and, for builds without it, the call of the C version."""
    g, steps = layer.g, layer.steps
    asm = "".join(f'      "{line}\\n\\t"\n' for line in lines)
    c_args = (f"{g.in_h}, {g.in_w}, {g.in_c}, {g.out_c // g.in_c}, {g.out_h}, {g.out_w}, {g.stride_h}, {g.stride_w}, "
              f"{g.pad_top}, {g.pad_left}, {steps.in_row}, {steps.in_col}, {steps.out_row}, {steps.out_col}, {layer.zp}, "
              f"{layer.act_min}, {layer.act_max}, {layer.shift}")
    name = f"mtk_dw3x3_{hashlib.sha256((asm + c_args).encode()).hexdigest()[:12]}"
    function = CFunction.of(name, "const void* x, const void* stream, int8_t* out")
    src = (f"#ifdef MTK_DSP_ASM\n"
           f"__attribute__((naked, noinline)) static void {name}_body(__attribute__((unused)) const void* x, "
           f"__attribute__((unused)) const void* stream, __attribute__((unused)) void* out) {{\n"
           f"  __asm__ volatile(\n{asm}  );\n}}\n#endif\n"
           f"{function.head} {{\n"
           f"#ifdef MTK_DSP_ASM\n  {name}_body(x, stream, out);\n#else\n"
           f"  mtk_dw3x3_c((const int8_t*)x, (const int32_t*)stream, out, {c_args});\n"
           f"#endif\n  return 0;\n}}\n")
    return src, function


def _plan(data: OpData) -> tuple[_Layer, list[str]] | None:
    p, w = data.params, data.inputs[1].data
    params = fused_params(p.bias, p.requant, w)
    if params is None:
        return None
    return plan(p.geometry, data.inputs[0].quant.zp, p.requant.out_zp, p.requant.act_min, p.requant.act_max,
                data.cpu.name, uniform_shift(w, params) or 0)


def takes(data: OpData) -> bool:
    return _plan(data) is not None


def lower(data: OpData) -> Kernel:
    """The layer (conv.DepthwiseParams) as the generated assembly computes it; a band of a tiled layer
    (codegen/tiling.py) that it does not take (fewer than 3 rows) as depthwise_dsp.py's kernel does."""
    planned = _plan(data)
    if planned is None:
        return (depthwise_dsp.KERNEL if depthwise_dsp.takes(data) else depthwise.KERNEL).lower(data)
    layer, lines = planned
    p, w = data.params, data.inputs[1].data
    src, function = c_source(layer, lines)
    taps = w.transpose(0, 2, 1, 3) if layer.swapped else w
    stream = pack(taps, fused_params(p.bias, p.requant, w), layer.shift)
    args = [data.op.inputs[0], Const("channels", stream), data.op.outputs[0]]
    return Kernel("depthwise_conv2d", args, c_source=src, c_function=function, headers=(HEADER,))


KERNEL = KernelChoice("dsp-3x3", lower, takes)   # DSP cores, 3x3: a channel's weights in registers, 4 outputs a block
