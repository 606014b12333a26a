"""TVM schedules (s_tir.Schedule) shared by the TE-defined op families. (How a tunable op runs, which the
tuning file calls its schedule, is its variant in the code: variants.Variant.)"""

from __future__ import annotations

from tvm import s_tir, tirx


def schedule_per_output(func: tirx.PrimFunc, acc_block: str = "acc", out_block: str = "out") -> tirx.PrimFunc:
    """The `acc_block` stage (a reduction or not) computed right before each output element uses
    it, so it is one scalar, never an array. A reduction whose loops all have extent 1 loses them
    in compute_at: nothing to decompose then."""
    sch = s_tir.Schedule(func)
    out_loops = sch.get_loops(sch.get_sblock(out_block))
    acc = sch.get_sblock(acc_block)
    sch.compute_at(acc, out_loops[-1])
    acc_loops = sch.get_loops(acc)
    if len(acc_loops) > len(out_loops):
        sch.decompose_reduction(acc, acc_loops[len(out_loops)])
    return sch.mod["main"]
