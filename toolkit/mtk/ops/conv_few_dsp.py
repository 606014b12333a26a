"""CONV_2D with 1 to 4 input channels (image and spectrogram first layers) on DSP cores (Cortex-M4, M7, M33), the layer
in one call (c/dsp/mtk_conv_few_dsp.h): the input rows the windows of an output row (or pair of rows) read, zero-padded
and widened to int16 once in a band, a ring of rows that keeps those the next block reads too, then each pixel's window
read from the band where it is, as int16 pairs; two pixels (side by side, or one above the other where that leaves fewer
pixels without a partner) against four output channels a block, each weight word loaded once for both pixels and each
pixel word once for the four channels. The pass over a band's pixel pairs is assembly generated here with the band's and
the stream's offsets as immediates: per k pair 6 loads and 8 SMLADs (on the M7 ordered for its dual issue:
asm_schedule.py), the doubled int16 weights' sums requantized as the fused GEMM's (SMMLAR, shift, SSAT). Where a kernel
row's kw * in_c values are odd the rows' last values pair up two rows a k pair (PKHBT of two loads: VWW's 3x3 over 3
channels 14 k pairs for 27 values, not 15), the last row's alone reading one more value against a zero weight.

Where stride_w * in_c is odd (a 3-channel or 1-channel layer of stride 1) every other pixel starts on an odd value:
pairs then lie side by side, pixel 1 read from a second band holding the same rows one value on. It takes a layer
undilated along its rows whose requantization the fused stream computes exactly (gemm.stream_params) and whose offsets
fit the loads' immediates."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace

import numpy as np

from ..kernels.signature import CFunction
from ..kernels.table import FEW_INPUTS_KERNEL, Family, spec
from .base import Const, Kernel, OpData, Scratch
from ..target import Isa
from .asm_schedule import dual_issues, schedule
from .depthwise3x3_dsp import _clamp, uniform_shift
from .gemm import GemmParams, Patches, stream_params
from .microkernels import requantization_terms

KERNEL = spec(Family.FEW_INPUTS, FEW_INPUTS_KERNEL)
MAX_IN_C = 4
LOAD_REACH = 4095        # LDR's immediate offset
# the stream copied to RAM on the Cortex-M4 up to this size (its boards' flash caches hold a few hundred bytes of data:
# each pair would read a larger stream from flash again; its copy is the layer's scratch, which OpDef.leaner leaves
# out under a RAM limit, the stream then read from flash: Variant.lean)
STREAM_IN_RAM = {"cortex-m4": 8192}
UNROLLED = 2             # blocks of 4 channels one after the other, their offsets immediates; more in a loop
FRAME = 20               # o0, o1, pairs left, the stream, the full quads' end
ACC0 = ("r2", "r3", "r4", "r5")    # pixel 0's sums of the block's 4 channels
ACC1 = ("r6", "r7", "r8", "r9")    # pixel 1's


@dataclass(frozen=True)
class Plan:
    """A layer's band and pixel pairs."""

    g: Patches
    vertical: bool           # pairs one above the other
    stream_in_ram: bool = False
    shift: int = 0           # the channels' uniform right shift (0: each its own)

    @property
    def shifted(self) -> bool:
        """Whether every other pixel starts on an odd value (stride_w * in_c odd): pixel 1 of a pair (side by side)
        then reads a second band, the first's rows one value on."""
        return (self.g.stride_w * self.g.in_c) % 2 == 1

    @property
    def pairs(self) -> int:
        """int16 pairs of a kernel row (kw * in_c values, one more when odd)."""
        return -(-self.g.k_w * self.g.in_c // 2)

    @property
    def joined(self) -> bool:
        """Whether kernel rows end on an odd value (kw * in_c odd) two of them or more: their last values then
        pair up two rows a k pair (each value in a word's low half, PKHBT joining them), the last row's alone
        where k_h is odd, instead of one k pair each against a zero weight."""
        return self.g.k_w * self.g.in_c % 2 == 1 and self.g.k_h >= 2

    @property
    def taps(self) -> list[tuple[tuple[int, int], tuple[int, int] | None]]:
        """Per k pair its two (kernel row, value) taps, the second None where it is the next band value against a
        zero weight: each row's whole pairs, then (joined) the rows' last values two rows a pair."""
        g, full = self.g, self.g.k_w * self.g.in_c // 2
        whole = full if self.joined else self.pairs
        run = g.k_w * g.in_c
        taps = [((r, 2 * p), (r, 2 * p + 1) if 2 * p + 1 < run else None) for r in range(g.k_h) for p in range(whole)]
        if self.joined:
            taps += [((r, run - 1), (r + 1, run - 1) if r + 1 < g.k_h else None) for r in range(0, g.k_h, 2)]
        return taps

    @property
    def k_pairs(self) -> int:
        return len(self.taps)

    @property
    def row_values(self) -> int:
        """Values of a band row: every pixel's kernel row, and the one after the last's (a pixel without partner)."""
        g = self.g
        return 2 * -(-(g.out_w * g.stride_w * g.in_c + 2 * self.pairs) // 2)

    @property
    def span(self) -> int:
        """Consecutive input rows a block's windows read (a vertical pair's: both pixels')."""
        g = self.g
        return (g.k_h - 1) * g.dil_h + 1 + g.stride_h * self.vertical

    @property
    def step(self) -> int:
        """Input rows from a block to the next."""
        return self.g.stride_h * (2 if self.vertical else 1)

    @property
    def ring_rows(self) -> int:
        """Rows of the band's ring: a block's span and the next block's new rows, where the blocks' spans overlap
        (those rows then stay, moved to the front once every other block)."""
        return self.span + self.step * (self.step < self.span)

    @property
    def band_rows(self) -> int:
        return self.ring_rows * (2 if self.shifted else 1)

    @property
    def partner(self) -> int:
        """Bytes from a pair's pixel 0 to pixel 1 in the band."""
        g = self.g
        if self.vertical:
            return 2 * g.stride_h * self.row_values
        return 2 * (self.ring_rows * self.row_values * self.shifted + g.stride_w * g.in_c - self.shifted)

    @property
    def band_step(self) -> int:
        """Bytes from a pair to the next in the band."""
        g = self.g
        return 2 * g.stride_w * g.in_c * (1 if self.vertical else 2)

    @property
    def out_step(self) -> int:
        return self.g.out_c * (1 if self.vertical else 2)

    @property
    def quads(self) -> int:
        return -(-self.g.out_c // 4)

    @property
    def quad_bytes(self) -> int:
        return 4 * (16 + 4 * self.k_pairs)

    @property
    def band_bytes(self) -> int:
        return 2 * self.band_rows * self.row_values

    @property
    def stream_bytes(self) -> int:
        return self.quads * self.quad_bytes

    @property
    def scratch_bytes(self) -> int:
        """The band, a junk block's outputs, then the stream's copy."""
        return self.band_bytes + 4 * self.quads + self.stream_bytes * self.stream_in_ram

    def x_offsets(self, j: int) -> tuple[int, ...]:
        """Bytes from a pixel's first band value to its k pair j: the word's, or a joined pair's two halfwords'."""
        first, second = self.taps[j]
        at = lambda tap: 2 * (self.row_values * self.g.dil_h * tap[0] + tap[1])
        return (at(first),) if second is None or second[0] == first[0] else (at(first), at(second))

    @property
    def looped(self) -> bool:
        """Whether the pass runs its whole blocks of 4 channels in a loop (more than UNROLLED of them)."""
        return self.g.out_c // 4 > UNROLLED

    @property
    def reach(self) -> int:
        """The largest immediate offset of the pass's loads."""
        stream = self.quad_bytes if self.looped else self.quads * self.quad_bytes
        return max(max(max(self.x_offsets(j)) for j in range(self.k_pairs)) + self.partner, stream, self.band_step)


def plan(data: OpData, lean: bool = False) -> Plan | None:
    """The layer's plan on a DSP core (`lean`: its stream read from flash, never copied to the scratch), or None: a
    layer it does not take (module docstring)."""
    p = data.params
    if data.cpu.isa is not Isa.DSP or not isinstance(p, GemmParams) or p.patches is None:
        return None
    g = p.patches
    if g.in_c > MAX_IN_C or g.dil_w != 1 or p.requant.constant_output is not None or stream_params(p) is None:
        return None
    # the pairing that leaves fewer pixels without a partner (each costs a whole pair); side by side where every
    # other pixel starts on an odd value
    vertical = g.out_h * (g.out_w % 2) > g.out_w * (g.out_h % 2) and (g.stride_w * g.in_c) % 2 == 0
    stream_bytes = Plan(g, vertical).stream_bytes
    planned = Plan(g, vertical, not lean and stream_bytes <= STREAM_IN_RAM.get(data.cpu.name, 0), _uniform_shift(data))
    return planned if planned.reach <= LOAD_REACH else None


def _uniform_shift(data: OpData) -> int:
    """The right shift every channel's requantization is scaled to (depthwise3x3_dsp.uniform_shift), 0 for each its
    own: where no sign term is needed, and not on a dual-issue core (whose scheduled code issues the ASR it saves
    beside another instruction)."""
    p: GemmParams = data.params
    if p.requant.negative_rounding_matters or dual_issues(data.cpu.name):
        return 0
    weights, bias, multiplier, shift = stream_params(p)
    return uniform_shift(weights.T, requant_columns(bias, multiplier, shift, p.requant.out_zp)) or 0


def takes(data: OpData) -> bool:
    return plan(data) is not None


def weight_bytes(data: OpData) -> int:
    """Flash of the stream."""
    planned = plan(data)
    assert planned is not None
    return planned.stream_bytes


def requant_columns(bias: np.ndarray, multiplier: np.ndarray, shift: np.ndarray, out_zp: int) -> np.ndarray:
    """int64 [channels][2 * bias, m, k, e] (depthwise_dsp.fused_params's order): the rounding term
    k = 2^(e−1) + out_zp·2^e, e the right shift (1 where m is 0): microkernels.requantization_terms."""
    b, m, k, e = requantization_terms(bias, multiplier, shift, out_zp, len(bias))
    return np.stack([2 * b, m, k, e], axis=1)


def pack(plan: Plan, weights: np.ndarray, bias: np.ndarray, multiplier: np.ndarray, shift: np.ndarray,
         out_zp: int) -> np.ndarray:
    """The stream (int32) from the fused stream's weights [out_c, k_h * k_w * in_c], biases, multipliers and shifts:
    per block of 4 channels (the last zero-padded) the doubled biases, per k pair (plan.taps) the channels' doubled
    weight pairs (low half the pair's first tap), then per channel m, k and e (requant_columns); with a uniform shift
    the weights, bias and k scaled to it (depthwise3x3_dsp.pack's), e the shift."""
    g, quads = plan.g, plan.quads
    padded = lambda v: np.concatenate([np.asarray(v, np.int64), np.zeros((4 * quads - g.out_c, *np.shape(v)[1:]),
                                                                        np.int64)])
    params = requant_columns(padded(bias), padded(multiplier), padded(shift), out_zp)
    bias2, m, k, e = params.T
    scale = np.int64(1) << (plan.shift - e) if plan.shift else np.ones_like(e)
    if plan.shift:
        bias2, k, e = bias2 * scale, scale // 2 + k * scale, np.full_like(e, plan.shift)
    run = g.k_w * g.in_c
    w = (2 * padded(weights) * scale[:, None]).reshape(quads, 4, g.k_h, run)
    tap = lambda t: w[..., t[0], t[1]] if t is not None else np.zeros_like(w[..., 0, 0])
    # [quad][channel][k pair]
    pairs = np.stack([(tap(a) & 0xffff) | ((tap(b) & 0xffff) << 16) for a, b in plan.taps], axis=-1)
    requant = np.stack([m, k, e], axis=1).reshape(quads, 12)
    stream = np.concatenate([bias2.reshape(quads, 4), pairs.transpose(0, 2, 1).reshape(quads, -1), requant], axis=1)
    return (stream & 0xffffffff).astype(np.uint32).view(np.int32).reshape(-1)


def _add(reg: str, value: int, temp: str = "r12") -> list[str]:
    """reg += value (≥ 0), `temp` free when it needs a register."""
    if value == 0:
        return []
    if value < 4096:
        return [f"addw {reg}, {reg}, #{value}"]
    return [f"movw {temp}, #{value & 0xffff}", f"movt {temp}, #{value >> 16}", f"add {reg}, {reg}, {temp}"]


def _pixels(x: tuple[int, ...], partner: int) -> list[str]:
    """A k pair of both pixels into r10 and r11: one word each, or (joined) two halfwords' words each (r12 and lr
    taking the second, the weights' registers after) joined by PKHBT."""
    if len(x) == 1:
        return [f"ldr r10, [r0, #{x[0]}]", f"ldr r11, [r0, #{x[0] + partner}]"]
    first, second = x
    return [f"ldr r10, [r0, #{first}]", f"ldr r12, [r0, #{second}]", f"ldr r11, [r0, #{first + partner}]",
            f"ldr lr, [r0, #{second + partner}]", "pkhbt r10, r10, r12, lsl #16", "pkhbt r11, r11, lr, lsl #16"]


def _requantize(shift: int, sign: bool, s: str, t: str, at: int) -> list[str]:
    """A channel's sums of pixel 0 and 1 (s, t) to int8 in place, its m, k, e `at` bytes from r1: with a uniform
    shift SMMLA then SSAT of it shifted, else SMMLAR (and the sign term where it matters), ASR by e, SSAT."""
    lines = [f"ldr r10, [r1, #{at}]", f"ldr r11, [r1, #{at + 4}]"]
    if shift:
        return lines + [f"smmla {v}, {v}, r10, r11" for v in (s, t)] + [f"ssat {v}, #8, {v}, asr #{shift}"
                                                                         for v in (s, t)]
    lines.append(f"ldr r12, [r1, #{at + 8}]")
    if sign:
        for v in (s, t):
            lines += [f"smmlar lr, {v}, r10, r11", f"add lr, lr, {v}, asr #31", f"asr {v}, lr, r12"]
    else:
        lines += [f"smmlar {s}, {s}, r10, r11", f"smmlar {t}, {t}, r10, r11", f"asr {s}, {s}, r12",
                  f"asr {t}, {t}, r12"]
    return lines + [f"ssat {s}, #8, {s}", f"ssat {t}, #8, {t}"]


def _block(plan: Plan, channels: int, at: int | None, out_at: int, sign: bool, act_min: int, act_max: int
           ) -> list[str]:
    """One block of `channels` (≤ 4) channels for the pair, its stream `at` bytes from r1 (None: at r1, which moves
    past it), its outputs stored `out_at` bytes from o0 and o1 ([sp, #0], [sp, #4]). The sums start from the biases
    in the first k pair's SMLADs (pixel 1's first, while pixel 0's register still holds the bias)."""
    lines = ["ldm r1!, {r2-r5}"] if at is None else [f"ldr {ACC0[c]}, [r1, #{at + 4 * c}]" for c in range(channels)]
    base = 0 if at is None else at + 16
    for j in range(plan.k_pairs):
        x, w = plan.x_offsets(j), base + 16 * j
        acc = lambda c, pixel: ((ACC1[c], ACC0[c]) if j == 0 else (ACC1[c], ACC1[c])) if pixel else (ACC0[c], ACC0[c])
        for half in range(0, channels, 2):
            loads = [f"ldr r12, [r1, #{w + 4 * half}]"] + ([f"ldr lr, [r1, #{w + 4 * half + 4}]"]
                                                             if channels > half + 1 else [])
            if half == 0:
                loads = _pixels(x, plan.partner) + loads
            lines += loads
            for c, w_reg in zip(range(half, min(channels, half + 2)), ("r12", "lr")):
                for pixel, x_reg in ((1, "r11"), (0, "r10")):
                    dest, start = acc(c, pixel)
                    lines.append(f"smlad {dest}, {x_reg}, {w_reg}, {start}")
    params = base + 16 * plan.k_pairs
    for c in range(channels):
        s, t = ACC0[c], ACC1[c]
        lines += _requantize(plan.shift, sign, s, t, params + 12 * c)
        for v in (s, t):
            lines += _clamp(v, act_min, "lt") if act_min > -128 else []
            lines += _clamp(v, act_max, "gt") if act_max < 127 else []
    lines += ["ldr r10, [sp, #0]", "ldr r11, [sp, #4]"]
    lines += [f"strb {ACC0[c]}, [r10, #{out_at + c}]" for c in range(channels)]
    lines += [f"strb {ACC1[c]}, [r11, #{out_at + c}]" for c in range(channels)]
    if at is None:   # on to the next block
        lines += [*_add("r1", params + 48), "add r10, r10, #4", "add r11, r11, #4", "str r10, [sp, #0]",
                  "str r11, [sp, #4]"]
    return lines


def assembly(plan: Plan, sign: bool, act_min: int, act_max: int) -> list[str]:
    """The pass (band r0, stream r1, o0 r2, o1 r3, pairs on the stack): per pair every block of 4 channels, up to
    UNROLLED of them one after the other (their offsets immediates), more in a loop (r1, o0 and o1 moving on), then a
    partial last one."""
    g = plan.g
    full, part = divmod(g.out_c, 4)
    looped = plan.looped
    lines = ["push {r4-r11, lr}", f"sub sp, sp, #{FRAME}", f"ldr r12, [sp, #{FRAME + 36}]", "str r2, [sp, #0]",
             "str r3, [sp, #4]", "str r12, [sp, #8]", "str r1, [sp, #12]"]
    if looped:
        lines += ["mov r12, r1", *_add("r12", full * plan.quad_bytes, "r10"), "str r12, [sp, #16]"]
    lines += ["1:", "ldr r1, [sp, #12]"]
    block = lambda channels, q: _block(plan, channels, None if looped else q * plan.quad_bytes,
                                       0 if looped else 4 * q, sign, act_min, act_max)
    if looped:
        lines += ["2:", *block(4, 0), "ldr r12, [sp, #16]", "cmp r1, r12", "bne 2b"]
    else:
        for q in range(full):
            lines += block(4, q)
    if part:
        lines += _block(plan, part, 0 if looped else full * plan.quad_bytes, 0 if looped else 4 * full, sign,
                        act_min, act_max)
    back = plan.out_step - 4 * full * looped   # the blocks in the loop moved o0 and o1 on
    lines += ["ldr r10, [sp, #0]", "ldr r11, [sp, #4]", *_add("r10", back), *_add("r11", back), "str r10, [sp, #0]",
              "str r11, [sp, #4]", *_add("r0", plan.band_step), "ldr r12, [sp, #8]", "subs r12, r12, #1",
              "str r12, [sp, #8]", "bne 1b", f"add sp, sp, #{FRAME}", "pop {r4-r11, pc}"]
    return lines


def pass_source(name: str, plan: Plan, sign: bool, act_min: int, act_max: int, cpu: str) -> str:
    """The C of the pass `name` over `plan`'s pairs: its assembly (ordered for `cpu`), or for builds without it
    mtk_few_pass_c."""
    g = plan.g
    asm = "".join(f'      "{line}\\n\\t"\n' for line in schedule(assembly(plan, sign, act_min, act_max), cpu))
    unused = "__attribute__((unused))"
    params = (f"{unused} const int16_t* band, {unused} const int32_t* stream, {unused} int8_t* o0, "
              f"{unused} int8_t* o1, {unused} int32_t n")
    return (f"#ifdef MTK_DSP_ASM\n"
            f"__attribute__((naked, noinline)) static void {name}({params}) {{\n"
            f"  __asm__ volatile(\n{asm}  );\n}}\n#else\n"
            f"static void {name}({params}) {{\n"
            f"  mtk_few_pass_c(band, stream, o0, o1, n, {plan.pairs}, {int(plan.joined)}, {g.k_h}, "
            f"{plan.row_values * g.dil_h}, {plan.partner // 2}, {plan.band_step // 2}, {plan.out_step}, {g.out_c}, "
            f"{plan.shift}, {act_min}, {act_max});\n}}\n#endif\n")


def c_source(plan: Plan, sign: bool, act_min: int, act_max: int, cpu: str) -> tuple[str, CFunction]:
    """(C source, its function): the layer's call of mtk_few_layer with its pass and, where pairs lie one above the
    other and the last row is alone, that row's pass of pairs side by side."""
    g = plan.g
    layer = (f"{g.in_h}, {g.in_w}, {g.in_c}, {g.out_h}, {g.out_w}, {g.out_c}, {g.k_h}, {g.stride_h}, {g.stride_w}, "
             f"{g.dil_h}, {g.pad_top}, {g.pad_left}, {g.in_zp}, {plan.row_values}, {int(plan.vertical)}, "
             f"{int(plan.shifted)}, {plan.ring_rows}, {plan.stream_bytes * plan.stream_in_ram}")
    plans = [plan] + ([replace(plan, vertical=False)] if plan.vertical and g.out_h % 2 else [])
    passes = "".join(pass_source(f"PASS{i}", p, sign, act_min, act_max, cpu) for i, p in enumerate(plans))
    name = f"mtk_few_{hashlib.sha256((passes + layer).encode()).hexdigest()[:12]}"
    passes = passes.replace("PASS", f"{name}_pass")
    function = CFunction.of(name, "const void* x, const void* stream, int8_t* out, void* scratch")
    row_pass = f"{name}_pass1" if len(plans) > 1 else "0"
    src = (f"{passes}{function.head} {{\n"
           f"  static const mtk_few_layer_t layer = {{{layer}}};\n"
           f"  mtk_few_layer(&layer, (const int8_t*)x, (const int32_t*)stream, out, (int16_t*)scratch,\n"
           f"                (int8_t*)scratch + {plan.band_bytes}, "
           f"(int32_t*)scratch + {(plan.band_bytes + 4 * plan.quads) // 4}, {name}_pass0, {row_pass});\n"
           f"  return 0;\n}}\n")
    return src, function


def lower(data: OpData, lean: bool = False) -> Kernel:
    """The layer (GemmParams over patches that `takes`) as the band kernel computes it (`lean`: as plan's)."""
    planned = plan(data, lean)
    assert planned is not None
    p: GemmParams = data.params
    rq = p.requant
    weights, bias, multiplier, shift = stream_params(p)
    sign = rq.negative_rounding_matters
    src, function = c_source(planned, sign, rq.act_min, rq.act_max, data.cpu.name)
    stream = pack(planned, weights, bias, multiplier, shift, rq.out_zp)
    args = [data.op.inputs[0], Const("stream", stream), data.op.outputs[0], Scratch(planned.scratch_bytes)]
    return Kernel(p.name, args, c_source=src, c_function=function, headers=(KERNEL.header,))
