"""Reordering of generated straight-line Thumb-2 assembly for a dual-issue core (Cortex-M7): a list scheduler over
the instructions between two barriers, keeping every register dependency and the memory order that matters, that issues each cycle the
ready instructions the core pairs (cycles/tables.py: its issue groups and pairs) and waits out load and multiply
results. What it does not know (labels, branches, IT blocks, push/pop, flags) is a barrier nothing moves across."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..cycles.tables import core_table

REG = re.compile(r"\b(r\d+|lr|sp)\b")
# mnemonic: (issue group on the M7, writes its first operand, reads its first operand too)
KINDS = {
    "ldrsb": ("ls", True, False), "ldrb": ("ls", True, False), "ldr": ("ls", True, False),
    "ldrd": ("none", True, False),
    "strb": ("ls", False, True), "str": ("ls", False, True),
    "smlad": ("mul", True, False), "smlabb": ("mul", True, False), "smlabt": ("mul", True, False),
    "smlatb": ("mul", True, False), "smlatt": ("mul", True, False), "smmlar": ("mul", True, False),
    "smmla": ("mul", True, False),
    "pkhbt": ("dsp", True, False), "pkhtb": ("dsp", True, False), "ssat": ("dsp", True, False),
    "asr": ("alu", True, False), "lsl": ("alu", True, False), "lsr": ("alu", True, False),
    "add": ("alu", True, False), "addw": ("alu", True, False), "sub": ("alu", True, False),
    "subw": ("alu", True, False), "movw": ("alu", True, False), "movt": ("alu", True, True),
    "mov": ("alu", True, False), "uxth": ("alu", True, False),
}
MACS = ("smlad", "smlabb", "smlabt", "smlatb", "smlatt")
LOAD_LATENCY = 2     # a load's result the second cycle after it issues
MUL_LATENCY = 2      # a multiply's too, but for the accumulator of a MAC (forwarded: the next cycle)


@dataclass(frozen=True)
class Instr:
    text: str
    group: str
    reads: frozenset[str]
    writes: frozenset[str]
    memory: str          # "load", "store" or ""
    base: str            # a load's or store's base register
    accumulator: str     # a MAC's accumulator operand (read late), else ""

    @property
    def mnemonic(self) -> str:
        return self.text.split()[0]


def parse(line: str) -> Instr | None:
    """The instruction of `line`, or None for one the scheduler does not know (a barrier)."""
    mnemonic, _, operands = line.strip().partition(" ")
    if mnemonic not in KINDS or "{" in operands or "!" in operands:
        return None
    group, writes_first, reads_first = KINDS[mnemonic]
    regs = REG.findall(operands)
    memory = "load" if mnemonic.startswith("ldr") else "store" if mnemonic.startswith("str") else ""
    if memory == "load":
        dests = regs[:2] if mnemonic == "ldrd" else regs[:1]
        sources = regs[len(dests):]
        writes = set(dests) | ({sources[0]} if "]," in operands else set())   # post-indexed: the base too
    else:
        dests = regs[:1] if writes_first else []
        sources = regs if reads_first or not writes_first else regs[1:]
        writes = set(dests) | ({regs[1]} if memory == "store" and "]," in operands else set())
    accumulator = regs[3] if mnemonic in MACS and len(regs) == 4 else ""
    base = REG.findall(operands.partition("[")[2])[0] if memory else ""
    return Instr(line, group, frozenset(sources), frozenset(writes), memory, base, accumulator)


def _depends(later: Instr, earlier: Instr) -> bool:
    """Through a register; a store after every access before it; a load after a store through the same base
    register only: the generated code's pointers (input, output, stack frame) address buffers that one call does
    not share (an output overwrites its input only where earlier calls read it for the last time: tiling.py's
    Stage.overwrite)."""
    if later.reads & earlier.writes or later.writes & (earlier.reads | earlier.writes):
        return True
    if later.memory == "store":
        return bool(earlier.memory)
    return later.memory == "load" and earlier.memory == "store" and later.base == earlier.base


def _latency(producer: Instr, consumer: Instr) -> int:
    """Cycles from the producer's issue to the consumer's earliest."""
    used = consumer.reads & producer.writes
    if not used:
        return 1
    if producer.memory == "load":
        return LOAD_LATENCY
    if producer.group == "mul" and used != {consumer.accumulator}:
        return MUL_LATENCY
    return 1


def _schedule_segment(segment: list[Instr], pairs: set[tuple[str, str]]) -> list[Instr]:
    preds = [[j for j in range(i) if _depends(segment[i], segment[j])] for i in range(len(segment))]
    issued: dict[int, int] = {}
    order: list[int] = []
    cycle = 0
    while len(order) < len(segment):
        slot: list[int] = []
        for i in range(len(segment)):    # the first ready in program order, then one that pairs after it
            if i in issued or any(p not in issued for p in preds[i]):
                continue
            if any(issued[p] + _latency(segment[p], segment[i]) > cycle for p in preds[i]):
                continue
            if not slot:
                slot.append(i)
            elif (segment[slot[0]].group, segment[i].group) in pairs and slot[0] not in preds[i]:
                slot.append(i)
                break
            if segment[slot[0]].group == "none":
                break
        for i in slot:
            issued[i] = cycle
            order.append(i)
        cycle += 1
    return [segment[i] for i in order]


def two_loads_beat_ldrd(cpu: str) -> bool:
    """Two LDRs cost less than one LDRD of the same two words on `cpu`: fewer cycles (the cycle model's M33), or
    issued beside multiplies where an LDRD issues alone (the M7)."""
    load, dual = core_table(cpu).rows["LOAD"], core_table(cpu).rows["LOAD_DUAL"]
    return dual_issues(cpu) or 2 * load.base < dual.base + 2 * dual.per_reg


def dual_issues(cpu: str) -> bool:
    """`cpu` issues a load or store beside a multiply (the Cortex-M7): what `schedule` reorders for."""
    return ("mul", "ls") in core_table(cpu).pairs


def schedule(lines: list[str], cpu: str) -> list[str]:
    """`lines` reordered for `cpu` where it dual-issues (the Cortex-M7); unchanged for the other cores."""
    if not dual_issues(cpu):
        return lines
    pairs = set(core_table(cpu).pairs)
    out: list[str] = []
    segment: list[Instr] = []
    for line in lines + [""]:
        instr = parse(line) if line else None
        if instr is not None:
            segment.append(instr)
            continue
        out += [i.text for i in _schedule_segment(segment, pairs)]
        segment = []
        if line:
            out.append(line)
    return out
