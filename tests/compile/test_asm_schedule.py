"""asm_schedule.py: generated straight-line assembly reordered for the Cortex-M7's dual issue, every dependency kept."""

from __future__ import annotations

from mtk.ops.asm_schedule import _depends, parse, schedule, two_loads_beat_ldrd

BLOCK = ["ldrsb r12, [r0, #0]", "ldrsb lr, [r0, #64]", "pkhbt r12, r12, lr, lsl #16", "smlad r8, r12, r2, r7",
         "ldrsb lr, [r0, #128]", "smlabb r8, lr, r5, r8", "smlad r9, r3, r2, r9", "ldrd r12, lr, [sp, #28]",
         "smmlar r8, r8, r12, lr", "asr r8, r8, r6", "ssat r8, #8, r8", "strb r8, [r1], #8",
         "ldrsb r12, [r1, #4]"]


def test_other_cores_keep_the_order():
    assert schedule(BLOCK, "cortex-m4") == BLOCK
    assert schedule(BLOCK, "cortex-m33") == BLOCK


def test_an_independent_multiply_fills_the_wait_for_a_load():
    lines = ["ldrsb r12, [r0, #0]", "smlad r8, r12, r2, r8", "smlad r9, r3, r2, r9"]
    assert schedule(lines, "cortex-m7") == [lines[0], lines[2], lines[1]]


def test_every_dependency_keeps_its_order():
    out = schedule(BLOCK, "cortex-m7")
    assert sorted(out) == sorted(BLOCK) and out != BLOCK
    instrs = [parse(line) for line in BLOCK]
    for i, earlier in enumerate(instrs):
        for later in instrs[i + 1:]:
            if _depends(later, earlier):
                assert out.index(earlier.text) < out.index(later.text), (earlier.text, later.text)


def test_nothing_moves_across_a_barrier():
    lines = ["ldrsb r12, [r0, #0]", "smlad r8, r12, r2, r8", "3:", "smlad r9, r3, r2, r9", "cmp r1, r12", "bne 3b"]
    assert schedule(lines, "cortex-m7") == lines


def test_what_each_instruction_reads_and_writes():
    store = parse("strb r8, [r1], #8")
    assert (store.reads, store.writes, store.memory) == ({"r8", "r1"}, {"r1"}, "store")
    mac = parse("smlad r8, r12, r2, r7")
    assert (mac.reads, mac.writes, mac.accumulator) == ({"r12", "r2", "r7"}, {"r8"}, "r7")
    assert parse("ldrd r12, lr, [sp, #28]").writes == {"r12", "lr"}
    assert parse("movt r12, #65408").reads == {"r12"}
    assert parse("push {r5}") is None and parse("movlt r8, #0") is None


def test_a_load_passes_a_store_through_another_pointer_and_no_store_passes_a_load():
    """The input (r0) is read where the output (r1) was not written; an output overwriting its input does so only
    where the input was read for the last time, before (memory_plan.py): loads move up, stores never do."""
    store, load = parse("strb r8, [r1], #8"), parse("ldrsb r12, [r0, #4]")
    assert not _depends(load, store) and _depends(store, load)
    assert _depends(parse("ldrd r12, lr, [sp, #28]"), parse("str r12, [sp, #24]"))
    lines = ["smmlar r8, r8, r2, r3", "strb r8, [r1], #8", "ldrsb r12, [r0, #4]", "smlad r9, r12, r4, r9"]
    assert schedule(lines, "cortex-m7").index(lines[2]) < schedule(lines, "cortex-m7").index(lines[1])


def test_two_loads_replace_an_ldrd_on_the_m7_and_m33_only():
    """The M33's LDRD takes three cycles, its LDR one; the M7's LDRD issues alone, its LDRs beside multiplies; on the
    M4 a second LDR pipelines behind the first, no cheaper than LDRD."""
    assert [two_loads_beat_ldrd(cpu) for cpu in ("cortex-m4", "cortex-m7", "cortex-m33")] == [False, True, True]
