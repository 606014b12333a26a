"""The cost tables of the cycle model: one per Cortex-M core, one row per instruction class.

Each row gives the cycles of one instruction of its class (`base`), the cycles added per register a
load/store multiple moves (`per_reg`), the cycles added when the instruction changes the flow
(`taken`: a taken branch, a write of PC) and its issue group (dual issue), with the section of the
Arm Technical Reference Manual (TRM) it comes from. Where the TRM gives a range or no figure, the
row says what is modelled. The plugin (plugin.c) holds the decoder and the pairing rules; it takes
the numbers from here (`table_text`).

Data-dependent timings cannot follow the data: QEMU 7.2's plugin API v1 gives an instruction's
encoding and its memory addresses, not register values. Divides and the Cortex-M3's long multiplies
are therefore charged a fixed count, said in their row.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import MtkError


@dataclass(frozen=True)
class Row:
    cls: str            # an instruction class of plugin.c
    base: int
    per_reg: int = 0
    taken: int = 0
    group: str = "none"
    source: str = ""    # where the figure comes from, and what is modelled where the TRM leaves a choice


@dataclass(frozen=True)
class CoreTable:
    name: str                            # the core, as mtk.target names it
    rows: dict[str, Row]
    params: dict[str, int] = field(default_factory=dict)
    pairs: tuple[tuple[str, str], ...] = ()   # issue groups that dual-issue (first, second)
    notes: str = ""

    def lines(self) -> list[str]:
        out = [f"# {self.name}"]
        out += [f"param {k} {v}" for k, v in sorted(self.params.items())]
        out += [f"class {r.cls} {r.base} {r.per_reg} {r.taken} {r.group}" for r in self.rows.values()]
        out += [f"pair {a} {b}" for a, b in self.pairs]
        return out


def _rows(*rows: Row) -> dict[str, Row]:
    return {r.cls: r for r in rows}


def _with(table: dict[str, Row], *rows: Row) -> dict[str, Row]:
    return {**table, **_rows(*rows)}


NOT_IN_ISA = "not in this core's instruction set (never executed)"

# ---- Cortex-M4 (ARMv7E-M): Cortex-M4 TRM r0p1, DDI 0439B --------------------------------------------
M4_TRM = "Cortex-M4 TRM 3.3.1 Table 3-1"
M4_LS = "Cortex-M4 TRM 3.3.2 Load/store timings"
M4_FPU = "Cortex-M4 TRM 7.2.3 FPU instruction set table"
P_NOTE = "P (pipeline refill) is 1-3 by target alignment and width and early speculation; modelled "

CORTEX_M4 = _rows(
    Row("ALU", 1, source=f"{M4_TRM}: data processing 1"),
    Row("ALU_PC", 1, taken=2, source=f"{M4_TRM}: ADD/MOV PC 1+P; {P_NOTE}P=2 (a computed target)"),
    Row("SIMD", 1, source=f"{M4_TRM}: parallel add/subtract, saturate, pack, USAD8 1"),
    Row("MUL", 1, source=f"{M4_TRM}: MUL 1"),
    Row("MLA", 2, source=f"{M4_TRM}: MLA, MLS 2"),
    Row("MAC_DSP", 1, source=f"{M4_TRM}: SMLA<x><y>, SMLAD, SMUAD, SMMLA, SMULW... 1"),
    Row("MUL_LONG", 1, source=f"{M4_TRM}: SMULL, UMULL 1"),
    Row("MAC_LONG", 1, source=f"{M4_TRM}: SMLAL, UMLAL, SMLALD, UMAAL 1"),
    Row("DIV", 12, source=f"{M4_TRM}: SDIV, UDIV 2-12 by the operands' sizes; modelled 12 (operands unseen)"),
    Row("LOAD", 2, source=f"{M4_TRM}: LDR 2; {M4_LS}: 1 when pipelined behind a load (param load_pipeline)"),
    Row("STORE", 1, source=f"{M4_LS}: STR Rx,[Ry,#imm] is always one cycle (the write buffer)"),
    Row("STORE_REG", 2, source=f"{M4_TRM}: STR 2; {M4_LS}: 1 pipelined behind a load"),
    Row("LOAD_DUAL", 1, per_reg=1, source=f"{M4_TRM}: LDRD 1+N, N=2; not pipelined"),
    Row("STORE_DUAL", 1, per_reg=1, source=f"{M4_TRM}: STRD 1+N, N=2; not pipelined"),
    Row("LDM", 1, per_reg=1, source=f"{M4_TRM}: LDM, POP 1+N"),
    Row("STM", 1, per_reg=1, source=f"{M4_TRM}: STM, PUSH 1+N"),
    Row("LDM_PC", 1, per_reg=1, taken=3,
        source=f"{M4_TRM}: POP {{..., PC}} 1+N+P; {M4_LS}: three cycles for the pipeline reload after a load to PC"),
    Row("LOAD_PC", 2, taken=3, source=f"{M4_LS}: LDR PC at least two cycles for the load, three for the reload"),
    Row("BRANCH", 1, taken=1, source=f"{M4_TRM}: B 1+P; {P_NOTE}P=1 (immediate target, speculated), +1 for a "
        "32-bit target not word-aligned (param branch_unaligned32)"),
    Row("BRANCH_COND", 1, taken=1, source=f"{M4_TRM}: B<cc>, CBZ, CBNZ 1 untaken, 1+P taken; P=1 as B"),
    Row("BL", 1, taken=1, source=f"{M4_TRM}: BL 1+P; P=1 as B"),
    Row("BX", 1, taken=2, source=f"{M4_TRM}: BX, BLX 1+P; {P_NOTE}P=2 (a register target)"),
    Row("TABLE_BRANCH", 3, taken=3, source=f"{M4_LS}: TBB, TBH two cycles load, one add, three reload"),
    Row("IT", 1, source=f"{M4_TRM}: IT 1, folded onto a preceding 16-bit instruction: 0 (param it_fold)"),
    Row("NOP", 1, source=f"{M4_TRM}: NOP, hints 1"),
    Row("BARRIER", 4, source=f"{M4_TRM}: DMB, DSB, ISB 1+B; modelled B=3 (a pipeline refill)"),
    Row("SYSTEM", 2, source=f"{M4_TRM}: MRS, MSR 2 (CPS 1, SVC, BKPT: rare, modelled 2)"),
    Row("FP_ALU", 1, source=f"{M4_FPU}: VADD, VSUB, VMUL, VABS, VNEG, VCVT, VCMP 1"),
    Row("FP_MAC", 3, source=f"{M4_FPU}: VMLA, VMLS, VFMA, VFMS, VNMLA 3"),
    Row("FP_DIV", 14, source=f"{M4_FPU}: VDIV, VSQRT 14"),
    Row("FP_LOAD", 2, source=f"{M4_FPU}: VLDR.F32 2"),
    Row("FP_STORE", 2, source=f"{M4_FPU}: VSTR.F32 2"),
    Row("FP_LDM", 1, per_reg=1, source=f"{M4_FPU}: VLDM, VSTM, VPUSH, VPOP 1+N"),
    Row("FP_MOV", 1, source=f"{M4_FPU}: VMOV core<->S, VMRS 1"),
    Row("MVE_LOAD", 1, source=NOT_IN_ISA),
    Row("MVE_STORE", 1, source=NOT_IN_ISA),
    Row("MVE_DP", 1, source=NOT_IN_ISA),
    Row("LOOP_START", 1, source=NOT_IN_ISA),
    Row("LOOP_END", 1, taken=1, source=NOT_IN_ISA),
    Row("UNKNOWN", 1, source="an encoding the decoder does not classify: 1"),
)
M4_PARAMS = {"load_pipeline": 1, "agu_stall": 1, "it_fold": 1, "branch_unaligned32": 1}

# ---- Cortex-M3 (ARMv7-M): Cortex-M3 TRM r2p1, DDI 0337I -----------------------------------------------
M3_TRM = "Cortex-M3 TRM 18.2 Table 18-1"
M3_LS = "Cortex-M3 TRM 18.3 Load-store timings"
CORTEX_M3 = _with(
    {cls: Row(r.cls, r.base, r.per_reg, r.taken, r.group, r.source.replace(M4_TRM, M3_TRM).replace(M4_LS, M3_LS))
     for cls, r in CORTEX_M4.items()},
    Row("SIMD", 1, source=NOT_IN_ISA),
    Row("MAC_DSP", 1, source=NOT_IN_ISA),
    Row("MUL_LONG", 3, source=f"{M3_TRM}: SMULL, UMULL 3-5 by the operands (early termination); modelled 3, "
        "operands of at most 16 significant bits as int8/int16 kernels' are"),
    Row("MAC_LONG", 4, source=f"{M3_TRM}: SMLAL, UMLAL 4-7 by the operands; modelled 4, as MUL_LONG"),
    Row("FP_ALU", 1, source=NOT_IN_ISA), Row("FP_MAC", 1, source=NOT_IN_ISA), Row("FP_DIV", 1, source=NOT_IN_ISA),
    Row("FP_LOAD", 1, source=NOT_IN_ISA), Row("FP_STORE", 1, source=NOT_IN_ISA),
    Row("FP_LDM", 1, source=NOT_IN_ISA), Row("FP_MOV", 1, source=NOT_IN_ISA),
)

# ---- Cortex-M0+ and Cortex-M0 (ARMv6-M) ---------------------------------------------------------------
M0P_TRM = "Cortex-M0+ TRM r0p1 (DDI 0484C) 3.3 Table 3-1"
CORTEX_M0PLUS = _with(
    {cls: Row(cls, 1, source=NOT_IN_ISA) for cls in CORTEX_M4},
    Row("ALU", 1, source=f"{M0P_TRM}: data processing 1"),
    Row("ALU_PC", 1, taken=1, source=f"{M0P_TRM}: ADD PC, MOV PC 2"),
    Row("MUL", 1, source=f"{M0P_TRM}: MULS 1 with the fast multiplier, 32 with the small one; modelled the fast "
        "one (STM32L0/G0/C0, RP2040, nRF52 have it)"),
    Row("LOAD", 2, source=f"{M0P_TRM}: LDR, LDRH, LDRB, LDRSB... 2"),
    Row("STORE", 2, source=f"{M0P_TRM}: STR, STRH, STRB 2"),
    Row("STORE_REG", 2, source=f"{M0P_TRM}: STR register offset 2"),
    Row("LDM", 1, per_reg=1, source=f"{M0P_TRM}: LDM, POP 1+N"),
    Row("STM", 1, per_reg=1, source=f"{M0P_TRM}: STM, PUSH 1+N"),
    Row("LDM_PC", 2, per_reg=1, taken=1, source=f"{M0P_TRM}: POP {{..., PC}} 3+N (N counting PC)"),
    Row("BRANCH", 1, taken=1, source=f"{M0P_TRM}: B 2"),
    Row("BRANCH_COND", 1, taken=1, source=f"{M0P_TRM}: B<cc> 1 untaken, 2 taken"),
    Row("BL", 2, taken=1, source=f"{M0P_TRM}: BL 3"),
    Row("BX", 1, taken=1, source=f"{M0P_TRM}: BX, BLX 2"),
    Row("NOP", 1, source=f"{M0P_TRM}: NOP, YIELD, SEV 1"),
    Row("BARRIER", 3, source=f"{M0P_TRM}: DMB, DSB, ISB 3"),
    Row("SYSTEM", 3, source=f"{M0P_TRM}: MRS, MSR 3 (SVC, BKPT, CPS: rare, modelled 3)"),
    Row("UNKNOWN", 1, source="an encoding the decoder does not classify: 1"),
)
M0_TRM = "Cortex-M0 TRM r0p0 (DDI 0432C) 3.3 Table 3-1"
CORTEX_M0 = _with(
    {cls: Row(r.cls, r.base, r.per_reg, r.taken, r.group, r.source.replace(M0P_TRM, M0_TRM))
     for cls, r in CORTEX_M0PLUS.items()},
    Row("ALU_PC", 1, taken=2, source=f"{M0_TRM}: ADD PC, MOV PC 3"),
    Row("LDM_PC", 2, per_reg=1, taken=2, source=f"{M0_TRM}: POP {{..., PC}} 4+N (N counting PC)"),
    Row("BRANCH", 1, taken=2, source=f"{M0_TRM}: B 3"),
    Row("BRANCH_COND", 1, taken=2, source=f"{M0_TRM}: B<cc> 1 untaken, 3 taken"),
    Row("BL", 2, taken=2, source=f"{M0_TRM}: BL 4"),
    Row("BX", 1, taken=2, source=f"{M0_TRM}: BX, BLX 3"),
    Row("BARRIER", 4, source=f"{M0_TRM}: DMB, DSB, ISB 4"),
    Row("SYSTEM", 4, source=f"{M0_TRM}: MRS, MSR 4 (SVC, BKPT, CPS: rare, modelled 4)"),
)

# ---- Cortex-M33 (ARMv8-M Mainline + DSP) ----------------------------------------------------------
M33_NOTE = ("the Cortex-M33 TRM (100230) publishes no instruction timing table; modelled from Arm's description "
            "of its 3-stage pipeline (load/store addresses and branches resolved in the second stage, dual issue "
            "of 16-bit and branch instructions), the rest as the Cortex-M4")
CORTEX_M33 = _with(
    {cls: Row(r.cls, r.base, r.per_reg, r.taken, r.group, f"{r.source} [{M33_NOTE}]") for cls, r in CORTEX_M4.items()},
    Row("ALU", 1, group="alu", source=f"data processing 1; two adjacent 16-bit ones dual-issue (param pair_16bit) "
        f"[{M33_NOTE}]"),
    Row("LOAD", 1, source=f"LDR 1 (address in the second stage), its result a cycle later (param load_use) [{M33_NOTE}]"),
    Row("STORE_REG", 1, source=f"STR 1 [{M33_NOTE}]"),
    Row("BRANCH", 1, taken=1, group="branch", source=f"B 1+1, a 16-bit one pairing after a 16-bit ALU [{M33_NOTE}]"),
    Row("BRANCH_COND", 1, taken=1, group="branch", source=f"B<c>, CBZ 1, taken 1+1, pairing as B [{M33_NOTE}]"),
    Row("DIV", 11, source="SDIV, UDIV 2-11 by the operands (Cortex-M33 TRM 2.1 'Features'); modelled 11"),
)
M33_PARAMS = {**M4_PARAMS, "load_pipeline": 0, "load_use": 1, "dual_issue": 1, "pair_16bit": 1}

# ---- Cortex-M7 (ARMv7E-M, superscalar) ----------------------------------------------------------------
M7_NOTE = ("the Cortex-M7 TRM (DDI 0489) describes a 6-stage dual-issue pipeline with a branch target "
           "cache and 64-bit instruction and data buses but publishes no instruction timing table; modelled")
# Arm's own scheduling model of the core in LLVM (llvm/lib/Target/ARM/ARMScheduleM7.td, contributed by Arm): public
# figures the rows below agree with where they cite it
M7_LLVM = "LLVM's Cortex-M7 model (ARMScheduleM7.td)"
CORTEX_M7 = _rows(
    Row("ALU", 1, group="alu", source=f"{M7_NOTE}: 1, dual-issues with an ALU, load/store, multiply or branch"),
    Row("ALU_PC", 1, taken=0, group="branch", source=f"{M7_NOTE}: as a branch"),
    Row("SIMD", 1, group="dsp", source=f"{M7_NOTE}: 1; DSP/SIMD only as the first of a pair ({M7_LLVM}: "
        "BeginGroup)"),
    Row("MUL", 1, group="mul", source=f"{M7_NOTE}: 1, result a cycle later (param mul_use; {M7_LLVM}: one MAC "
        "pipe, multiply latency 2)"),
    Row("MLA", 1, group="mul", source=f"{M7_NOTE}: 1, accumulator forwarded ({M7_LLVM}: the accumulator read a "
        "cycle late)"),
    Row("MAC_DSP", 1, group="mul", source=f"{M7_NOTE}: 1, accumulator forwarded (SMLAD chains 1 each; {M7_LLVM})"),
    Row("MUL_LONG", 1, group="mul", source=f"{M7_NOTE}: 1"),
    Row("MAC_LONG", 1, group="mul", source=f"{M7_NOTE}: 1, accumulators forwarded"),
    Row("DIV", 12, group="div", source=f"{M7_NOTE}: SDIV, UDIV 12 (the ARMv7-M bound; operands unseen; "
        f"{M7_LLVM} schedules 7, single-issue)"),
    Row("LOAD", 1, group="ls", source=f"{M7_NOTE}: 1, result two cycles later (param load_use); one load/store "
        "a cycle"),
    Row("STORE", 1, group="ls", source=f"{M7_NOTE}: 1"),
    Row("STORE_REG", 1, group="ls", source=f"{M7_NOTE}: 1"),
    Row("LOAD_DUAL", 1, source=f"{M7_NOTE}: 1 (64-bit bus), single-issue ({M7_LLVM}: load/store doubles cannot "
        "be dual-issued)"),
    Row("STORE_DUAL", 1, source=f"{M7_NOTE}: 1 (64-bit bus), single-issue as LDRD"),
    Row("LDM", 1, per_reg=1, source=f"{M7_NOTE}: 1 + N/2 (two registers a cycle, param regs_per_cycle), "
        f"single-issue ({M7_LLVM})"),
    Row("STM", 1, per_reg=1, source=f"{M7_NOTE}: 1 + N/2, single-issue"),
    Row("LDM_PC", 1, per_reg=1, source=f"{M7_NOTE}: 1 + N/2, the return predicted as a branch"),
    Row("LOAD_PC", 2, source=f"{M7_NOTE}: 2, predicted as a branch"),
    Row("BRANCH", 1, group="branch", source=f"{M7_NOTE}: 1 when the branch target cache predicts it (a 2-bit "
        f"counter per branch), 6 when mispredicted (param mispredict: the pipeline's depth; {M7_LLVM}: 6 for a "
        "forward branch)"),
    Row("BRANCH_COND", 1, group="branch", source=f"{M7_NOTE}: as BRANCH"),
    Row("BL", 1, group="branch", source=f"{M7_NOTE}: as BRANCH"),
    Row("BX", 1, group="branch", source=f"{M7_NOTE}: as BRANCH"),
    Row("TABLE_BRANCH", 2, source=f"{M7_NOTE}: 2, predicted as a branch"),
    Row("IT", 1, group="alu", source=f"{M7_NOTE}: 1, pairs as an ALU instruction"),
    Row("NOP", 1, group="alu", source=f"{M7_NOTE}: 1, pairs as an ALU instruction"),
    Row("BARRIER", 6, source=f"{M7_NOTE}: 6 (a pipeline refill)"),
    Row("SYSTEM", 2, source=f"{M7_NOTE}: 2"),
    Row("FP_ALU", 1, group="fp", source=f"{M7_NOTE}: 1, pairs with an integer instruction"),
    Row("FP_MAC", 1, group="fp", source=f"{M7_NOTE}: 1 issue (VFMA pipelined)"),
    Row("FP_DIV", 14, source=f"{M7_NOTE}: VDIV.F32, VSQRT.F32 14"),
    Row("FP_LOAD", 1, group="ls", source=f"{M7_NOTE}: 1"),
    Row("FP_STORE", 1, group="ls", source=f"{M7_NOTE}: 1"),
    Row("FP_LDM", 1, per_reg=1, source=f"{M7_NOTE}: 1 + N/2"),
    Row("FP_MOV", 1, group="fp", source=f"{M7_NOTE}: 1"),
    Row("MVE_LOAD", 1, source=NOT_IN_ISA),
    Row("MVE_STORE", 1, source=NOT_IN_ISA),
    Row("MVE_DP", 1, source=NOT_IN_ISA),
    Row("LOOP_START", 1, source=NOT_IN_ISA),
    Row("LOOP_END", 1, source=NOT_IN_ISA),
    Row("UNKNOWN", 1, source="an encoding the decoder does not classify: 1"),
)
M7_PARAMS = {"load_use": 1, "mul_use": 1, "dual_issue": 1, "mispredict": 6, "regs_per_cycle": 2}
M7_PAIRS = (("alu", "alu"), ("alu", "ls"), ("ls", "alu"), ("alu", "mul"), ("mul", "alu"), ("ls", "mul"),
            ("mul", "ls"), ("dsp", "alu"), ("dsp", "ls"), ("dsp", "mul"), ("alu", "branch"), ("ls", "branch"),
            ("mul", "branch"), ("dsp", "branch"), ("fp", "alu"), ("alu", "fp"), ("fp", "ls"), ("ls", "fp"),
            ("fp", "branch"))

# ---- Cortex-M55 (ARMv8.1-M Mainline + MVE) ---------------------------------------------------------
M55_NOTE = ("Cortex-M55 TRM (101051) and Software Optimization Guide: a dual-beat MVE implementation (a "
            "128-bit vector instruction is 4 beats, 2 a cycle) with 64-bit buses")
CORTEX_M55 = _with(
    {cls: Row(r.cls, r.base, r.per_reg, r.taken, r.group, f"{r.source} [scalar: modelled as the Cortex-M4]")
     for cls, r in CORTEX_M4.items()},
    Row("LOAD", 1, source=f"{M55_NOTE}: LDR 1, result a cycle later (param load_use)"),
    Row("STORE", 1, source=f"{M55_NOTE}: STR 1"),
    Row("STORE_REG", 1, source=f"{M55_NOTE}: STR 1"),
    Row("LDM", 1, per_reg=1, source=f"{M55_NOTE}: 1 + N/2 (64-bit bus, param regs_per_cycle)"),
    Row("STM", 1, per_reg=1, source=f"{M55_NOTE}: 1 + N/2"),
    Row("LDM_PC", 1, per_reg=1, taken=3, source=f"{M55_NOTE}: 1 + N/2 + 3 (a refill)"),
    Row("MVE_LOAD", 2, source=f"{M55_NOTE}: VLDR 4 beats = 2 cycles; overlaps a preceding data-processing "
        "vector instruction by 1 cycle (param mve_overlap)"),
    Row("MVE_STORE", 2, source=f"{M55_NOTE}: VSTR 2 cycles, overlapping as VLDR"),
    Row("MVE_DP", 2, source=f"{M55_NOTE}: VMLADAV, VMLA, VADD, VQRDMULH, VSHL... 2 cycles; overlaps a preceding "
        "vector load/store by 1 cycle; two data-processing ones in a row do not overlap (modelled: the TRM's "
        "overlap between the load/store and the ALU/MAC units only)"),
    Row("LOOP_START", 1, source=f"{M55_NOTE}: DLS, DLSTP 1"),
    Row("LOOP_END", 0, taken=0, source=f"{M55_NOTE}: LE, LETP; modelled 0: the loop end is cached after the "
        "first iteration (the first iteration's and the exit's refill not modelled)"),
)
M55_PARAMS = {**M4_PARAMS, "load_pipeline": 0, "agu_stall": 0, "load_use": 1, "mve_overlap": 1, "regs_per_cycle": 2}

TABLES: dict[str, CoreTable] = {t.name: t for t in [
    CoreTable("cortex-m0", CORTEX_M0),
    CoreTable("cortex-m0plus", CORTEX_M0PLUS),
    CoreTable("cortex-m3", CORTEX_M3, M4_PARAMS),
    CoreTable("cortex-m4", CORTEX_M4, M4_PARAMS),
    CoreTable("cortex-m33", CORTEX_M33, M33_PARAMS, (("alu", "alu"), ("alu", "branch"))),
    CoreTable("cortex-m7", CORTEX_M7, M7_PARAMS, M7_PAIRS),
    CoreTable("cortex-m55", CORTEX_M55, M55_PARAMS),
]}


def core_table(cpu: str) -> CoreTable:
    """The table of `cpu` (a gcc -mcpu name; feature suffixes such as +nodsp are the same core)."""
    cpu = cpu.split("+")[0]
    if cpu not in TABLES:
        raise MtkError(f"the cycle model has no table for {cpu}", hint=f"one of: {', '.join(TABLES)}")
    return TABLES[cpu]
