"""ADD, SUB, MUL on int8 and int16 tensors (16x8): TFLite's reference kernels, bit for bit.

ADD: reference/integer_ops/add.h (AddFunc), int16: reference/add.h (AddGeneralParamScale → AddElementwise,
BroadcastAdd6DSlow); SUB: reference/sub.h (SubElementwise, BroadcastQuantSubSlow, both types);
MUL: reference/integer_ops/mul.h (MulElementwise). Parameters as the
Prepare code of micro/kernels/add_common.cc, sub_common.cc and mul_common.cc computes them.
Broadcasting follows reference/broadcast_loop.h (numpy rules, shapes aligned on the right).

ADD/SUB: each input (x − zp) is shifted left by 20 (int16: 15) and rescaled by in_scale / (2·max_in_scale)
to a common scale (int8: a 256-entry table per input, computed at compile time); the sum (difference)
is rescaled by 2·max_in_scale / (2^20·out_scale) (int16: 2^15). int16 zero points are honoured as TFLM does.
MUL: (x1 − zp1)·(x2 − zp2) rescaled by in1_scale·in2_scale / out_scale (int16: zero points 0,
the product within int32, the result clamped within int16).
Then + out_zp and the clamp to the fused activation range.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np
from tvm import te, tirx
from tvm.script import tirx as T

from ..errors import ModelError
from ..graph import Graph, Op, Tensor
from ..target import Cpu, Isa
from .base import Axis, Const, Kernel, Lowered, OpData, OpDef, Rows, constant_kernel, io
from .common import op_error, require_per_tensor
from .fixedpoint import activation_range, clamp, quantize_multiplier, quantize_multiplier_smaller_than_one_exp
from .gemmlowp import multiply_by_quantized_multiplier_np
from .requant import clamp_s8, scale
from .schedules import schedule_per_output

ADD_LEFT_SHIFT = {"int8": 20, "int16": 15}   # add_common.cc / sub_common.cc: left_shift
ADD_MVE_HEADER = "add_mve"
ADD_S8_HEADER = "add_s8"
MUL_MVE_HEADER = "mul_mve"
MAX_RANK = 6


@dataclass(frozen=True)
class Rescale:
    """A real multiplier as TFLite stores it: multiplier · 2^(shift − 31)."""

    multiplier: int
    shift: int

    def apply(self, x):
        return scale(x, self.multiplier, self.shift)


@dataclass(frozen=True)
class BinaryParams:
    in_zp: tuple[int, int]
    out_zp: int
    act_min: int
    act_max: int
    inputs: tuple[Rescale, Rescale] | None   # ADD/SUB: to the common scale; MUL: None
    output: Rescale


def _smaller_than_one_exp(real: float, where: str) -> Rescale:
    """QuantizeMultiplierSmallerThanOneExp: TFLM aborts unless 0 < real < 1 and the shift is ≤ 0."""
    try:
        multiplier, shift = quantize_multiplier_smaller_than_one_exp(real)
    except ModelError as err:
        raise ModelError(f"{where}: {err.message}; TFLM rejects these input/output scales") from None
    if shift > 0:
        raise ModelError(f"{where}: rescale factor {real!r} rounds to 1.0; TFLM rejects it")
    return Rescale(multiplier, shift)


def add_sub_params(op: Op, s1: float, s2: float, s_out: float, left_shift: int) -> tuple[Rescale, Rescale, Rescale]:
    """CalculateOpDataAdd / CalculateOpDataSub: the real multipliers in double.

    TFLM's sub_common.cc (source as of Aug 2026) computes SUB's in float, but the tflite-micro
    interpreter mtk is checked against behaves as double, like ADD: with scales 0.02, 0.03 →
    0.04, float would differ by one on 3.5 % of input pairs (tests/compile/test_ops_elementwise.py).
    """
    twice_max = 2.0 * max(s1, s2)
    where = f"op {op.index} ({op.type})"
    return (_smaller_than_one_exp(s1 / twice_max, where),
            _smaller_than_one_exp(s2 / twice_max, where),
            _smaller_than_one_exp(twice_max / ((1 << left_shift) * s_out), where))


INT16_LIMITS = (-32768, 32767)


def binary_params(op: Op, a: Tensor, b: Tensor, y: Tensor) -> BinaryParams:
    limits = INT16_LIMITS if y.dtype == "int16" else ()
    lo, hi = activation_range(op.options.get("fused_activation_function", "NONE"), y.quant, *limits)
    zps = (a.quant.zp, b.quant.zp)
    if op.type == "MUL":
        real = float(np.float64(a.quant.s) * np.float64(b.quant.s) / np.float64(y.quant.s))
        return BinaryParams(zps, y.quant.zp, lo, hi, None, Rescale(*quantize_multiplier(real)))
    r1, r2, r_out = add_sub_params(op, a.quant.s, b.quant.s, y.quant.s, ADD_LEFT_SHIFT[y.dtype])
    return BinaryParams(zps, y.quant.zp, lo, hi, (r1, r2), r_out)


def input_table(zp: int, rescale: Rescale, left_shift: int = ADD_LEFT_SHIFT["int8"]) -> np.ndarray:
    """ADD/SUB: one input's contribution on the common scale, MultiplyByQuantizedMultiplier((x − zp)·2^20),
    for each int8 value x (index x + 128): two table loads replace two rescales per element."""
    shifted = (np.arange(-128, 128, dtype=np.int64) - zp) << left_shift
    return multiply_by_quantized_multiplier_np(shifted, rescale.multiplier, rescale.shift).astype(np.int32)


def clamp_int(x: int, lo: int, hi: int) -> int:
    return min(max(x, lo), hi)


def broadcast_read(t: te.Tensor, out_rank: int):
    """t read at an output index under numpy broadcasting: size-1 (and missing) dims read index 0."""
    shape = [int(d) for d in t.shape]
    lead = out_rank - len(shape)

    def read(index):
        return t[tuple(0 if d == 1 else index[lead + k] for k, d in enumerate(shape))]
    return read


TABLE_ENTRIES = 256   # an int8 input's table: an int32 for each of its values


class BinaryElementwise(OpDef):
    types = ("ADD", "SUB", "MUL")

    def prepare(self, op: Op, graph: Graph, cpu: Cpu) -> OpData:
        (a, b, *_), y = io(op, graph)
        require_per_tensor(op, a, b, y, dtypes=("int8", "int16"))
        if op.type == "MUL" and y.dtype == "int16" and (a.quant.zp, b.quant.zp, y.quant.zp) != (0, 0, 0):   # mul_common.cc
            raise op_error(op, "int16 MUL needs zero points 0 (TFLM requires it)")
        try:
            shape = np.broadcast_shapes(a.shape, b.shape)
        except ValueError:
            raise op_error(op, f"shapes {list(a.shape)} and {list(b.shape)} do not broadcast") from None
        if tuple(shape) != tuple(y.shape):
            raise op_error(op, f"output shape {list(y.shape)} is not the broadcast shape {list(shape)}")
        if len(shape) > MAX_RANK:
            raise op_error(op, f"{len(shape)}-D tensors; at most {MAX_RANK}-D is supported")
        return OpData.of(op, graph, cpu, binary_params(op, a, b, y))   # raises for scales TFLM rejects

    def macs(self, data: OpData) -> int:
        return data.output.size if data.op.type == "MUL" else 0

    def axis_map(self, data: OpData, axis: Axis) -> Rows | None:
        """Rows only (the other operand's columns would need gathering too), every operand of the output's shape."""
        y = data.output
        same = all(tuple(t.shape) == tuple(y.shape) and t.dtype == y.dtype
                   for t in data.inputs if t is not None and not t.is_constant)
        return Rows(y.shape[axis.value], y.shape[axis.value], 1, 1, 0, elementwise=True) \
            if same and axis is Axis.ROWS else None

    def constant_passes(self, data: OpData, variant=None) -> int:
        """An int8 ADD or SUB of two variable operands reads an entry of each input's table (TABLE_ENTRIES) an
        element: its tables' bytes once every TABLE_ENTRIES elements, at random (other kernels, and constant operands:
        no figure)."""
        tables = data.op.type != "MUL" and data.output.dtype == "int8"
        variable = all(t is None or not t.is_constant for t in data.inputs)
        return max(1, data.output.size // TABLE_ENTRIES) if tables and variable else 1

    def lower(self, data: OpData, variant=None) -> Lowered:
        """The kernels (each reads an element of both operands before writing the output's: in place over an
        operand of the output's shape and type)."""
        y = data.output
        same = tuple(i for i, t in zip(data.op.inputs, data.inputs)
                     if t is not None and not t.is_constant and tuple(t.shape) == tuple(y.shape) and t.dtype == y.dtype)
        return replace(self._lower(data), in_place=same)

    def _lower(self, data: OpData) -> Lowered:
        op, p = data.op, data.params
        a, b, *_ = data.inputs
        y = data.output
        if p.act_min == p.act_max or p.output.multiplier == 0:
            return Lowered([constant_kernel(data, clamp_int(p.out_zp, p.act_min, p.act_max))])
        if data.cpu.mve and (op.type == "ADD" or op.type == "SUB" and y.dtype == "int16"):
            return Lowered([add_mve_kernel(op, a.shape, b.shape, y.shape, p, y.dtype)])
        if data.cpu.mve and op.type == "MUL":
            return Lowered([mul_mve_kernel(op, a.shape, b.shape, y.shape, p, y.dtype)])
        if data.cpu.isa in (Isa.M3, Isa.DSP) and op.type != "MUL" and y.dtype == "int8" \
                and tuple(a.shape) == tuple(b.shape) == tuple(y.shape):
            requant = add_s8_requantization(op.type, p)
            if requant is not None:
                return Lowered([add_s8_kernel(op, y.size, p, *requant)])
        out_shape = tuple(y.shape) or (1,)
        A = te.placeholder(tuple(a.shape) or (1,), a.dtype, name="x1")
        B = te.placeholder(tuple(b.shape) or (1,), b.dtype, name="x2")
        read_a, read_b = broadcast_read(A, len(out_shape)), broadcast_read(B, len(out_shape))
        if op.type == "MUL":
            params, consts = [], []

            def element(*index):
                x1 = read_a(index).astype("int32") - tirx.const(p.in_zp[0], "int32")
                x2 = read_b(index).astype("int32") - tirx.const(p.in_zp[1], "int32")
                return x1 * x2
        elif y.dtype == "int16":   # AddElementwise / SubElementwise: each input rescaled on the way
            params, consts = [], []

            def on_common_scale(k: int, read, index):
                v = read(index).astype("int32") - tirx.const(p.in_zp[k], "int32")
                if (p.inputs[k].multiplier, p.inputs[k].shift) == (1 << 30, 0):   # the input of the larger scale:
                    return v * tirx.const(1 << 14, "int32")   # SaturatingRoundingDoublingHighMul(v·2^15, 2^30), exact
                return p.inputs[k].apply(v * tirx.const(1 << ADD_LEFT_SHIFT["int16"], "int32"))

            def element(*index):
                x1, x2 = (on_common_scale(k, read, index) for k, read in enumerate((read_a, read_b)))
                return x1 + x2 if op.type == "ADD" else x1 - x2
        else:
            params = [te.placeholder((256,), "int32", name=f"scaled{k}") for k in (1, 2)]
            consts = [Const(f"scaled{k}", input_table(zp, r)) for k, zp, r in zip((1, 2), p.in_zp, p.inputs)]

            def element(*index):
                x1 = params[0][read_a(index).astype("int32") + 128]
                x2 = params[1][read_b(index).astype("int32") + 128]
                return x1 + x2 if op.type == "ADD" else x1 - x2

        # Two stages, fused per element by the schedule: one expression with the rescales nested
        # in one another makes TVM's CompactBufferAllocation take seconds.
        raw = te.compute(out_shape, element, name="raw")
        saturate = clamp_s8 if y.dtype == "int8" else lambda v, lo, hi: clamp(v, lo, hi).astype("int16")
        out = te.compute(out_shape, lambda *i: saturate(p.output.apply(raw[i]) + tirx.const(p.out_zp, "int32"),
                                                        p.act_min, p.act_max), name="out")
        func = schedule_per_output(te.create_prim_func([A, B, *params, out]), acc_block="raw")
        return Lowered([Kernel(op.type.lower(), [op.inputs[0], op.inputs[1], *consts, op.outputs[0]], func=func)])


def broadcast_runs(a_shape: Sequence[int], b_shape: Sequence[int],
                   out_shape: Sequence[int]) -> list[tuple[int, bool, bool]]:
    """The output's dims, outermost first, as (size, whether a steps along it, whether b does): size-1 dims
    dropped, neighbours where both inputs step alike merged."""
    rank = len(out_shape)
    padded = [(1,) * (rank - len(s)) + tuple(s) for s in (a_shape, b_shape)]
    runs: list[tuple[int, bool, bool]] = []
    for n, da, db in zip(out_shape, *padded):
        if n == 1:
            continue
        if runs and runs[-1][1:] == (da == n, db == n):
            runs[-1] = (runs[-1][0] * n, da == n, db == n)
        else:
            runs.append((n, da == n, db == n))
    return runs or [(1, True, True)]


def run_calls(a_shape: Sequence[int], b_shape: Sequence[int],
              out_shape: Sequence[int]) -> tuple[int, bool, bool, Callable]:
    """A Helium kernel's calls, one per run of the innermost merged dim (broadcast_runs): the run's length n, whether
    each input steps along it, and offset(i, k), input k's (1: a, 2: b) offset at the start of outer run i (its
    index along each dim it steps along)."""
    runs = broadcast_runs(a_shape, b_shape, out_shape)
    (n, a_steps, b_steps), outer = runs[-1], runs[:-1]

    def offset(i, k: int):
        total, stride, inner = 0, n if runs[-1][k] else 1, 1
        for run in reversed(outer):
            if run[k]:
                total, stride = total + (i // inner) % run[0] * stride, stride * run[0]
            inner *= run[0]
        return total
    return n, a_steps, b_steps, offset


def add_mve_kernel(op: Op, a_shape: Sequence[int], b_shape: Sequence[int], out_shape: Sequence[int], p: BinaryParams,
                   dtype: str) -> Kernel:
    """ADD of int8 tensors and ADD/SUB of int16 ones on Helium cores (c/mtk_add_mve.h), 4 elements a vector: one
    call per run (run_calls). int8: the input tables rotated by 128 so that the raw byte indexes them; int16: each
    input's zero point and rescale as arguments."""
    n, a_steps, b_steps, offset = run_calls(a_shape, b_shape, out_shape)
    i32 = "int32"
    a_size, b_size, out_size = (int(np.prod(s)) for s in (a_shape, b_shape, out_shape))
    (m1, s1), (m2, s2) = ((r.multiplier, r.shift) for r in p.inputs)
    out_args = (p.output.multiplier, p.output.shift, p.out_zp, p.act_min, p.act_max)

    if dtype == "int16":
        @T.prim_func
        def add_s16(x1: T.Buffer((a_size,), "int16"), x2: T.Buffer((b_size,), "int16"),
                    out: T.Buffer((out_size,), "int16")):
            for i in T.serial(out_size // n):
                T.evaluate(T.call_extern(i32, "mtk_add_mve_s16", T.address_of(x1[offset(i, 1)]),
                                         T.address_of(x2[offset(i, 2)]), T.address_of(out[i * n]), n, int(a_steps),
                                         int(b_steps), p.in_zp[0], m1, s1, p.in_zp[1], m2, s2,
                                         int(op.type == "SUB"), *out_args))

        return Kernel(op.type.lower(), [op.inputs[0], op.inputs[1], op.outputs[0]], func=add_s16,
                      headers=(ADD_MVE_HEADER,), c_calls=("mtk_add_mve_s16",))

    tables = [Const(f"scaled{k}", np.roll(input_table(zp, r), 128)) for k, zp, r in zip((1, 2), p.in_zp, p.inputs)]

    @T.prim_func
    def add(x1: T.Buffer((a_size,), "int8"), x2: T.Buffer((b_size,), "int8"), t1: T.Buffer((256,), i32),
            t2: T.Buffer((256,), i32), out: T.Buffer((out_size,), "int8")):
        for i in T.serial(out_size // n):
            T.evaluate(T.call_extern(i32, "mtk_add_mve_s8", T.address_of(x1[offset(i, 1)]),
                                     T.address_of(x2[offset(i, 2)]), T.address_of(t1[0]), T.address_of(t2[0]),
                                     T.address_of(out[i * n]), n, int(a_steps), int(b_steps), *out_args))

    return Kernel("add", [op.inputs[0], op.inputs[1], *tables, op.outputs[0]], func=add, headers=(ADD_MVE_HEADER,),
                  c_calls=("mtk_add_mve_s8",))


def add_s8_requantization(op_type: str, p: BinaryParams) -> tuple[np.ndarray, np.ndarray, int, int] | None:
    """mtk_add_s8's input tables (rotated by 128, doubled; SUB: the second negated), rounding term c =
    2^(e−1) + out_zp·2^e and shift e, or None where it would not compute TFLM's AddFunc exactly: the output rescale
    shifts right (e ≥ 1), the doubled sum x2 and SMMLAR's x2·m/2^32 + c − 1 stay within int32 (c/mtk_add_s8.h)."""
    tables = [np.roll(input_table(zp, r), 128).astype(np.int64) for zp, r in zip(p.in_zp, p.inputs)]
    if op_type == "SUB":
        tables[1] = -tables[1]
    m, e = p.output.multiplier, -p.output.shift
    if not 1 <= e <= 31 or m <= 0:
        return None
    c = (1 << (e - 1)) + p.out_zp * (1 << e)
    x2 = np.array([2 * (tables[0].min() + tables[1].min()), 2 * (tables[0].max() + tables[1].max())])
    high = (x2 * m + (1 << 31)) >> 32
    if x2[0] < -(1 << 31) or x2[1] >= 1 << 31 or high[0] + c - 1 < -(1 << 31) or high[1] + c >= 1 << 31:
        return None
    return (2 * tables[0]).astype(np.int32), (2 * tables[1]).astype(np.int32), c, e


def add_s8_kernel(op: Op, n: int, p: BinaryParams, table_a: np.ndarray, table_b: np.ndarray, c: int,
                  e: int) -> Kernel:
    """int8 ADD/SUB of two tensors of the output's shape in one call of c/mtk_add_s8.h."""
    i32 = "int32"

    @T.prim_func
    def add(x1: T.Buffer((n,), "int8"), x2: T.Buffer((n,), "int8"), t1: T.Buffer((256,), i32),
            t2: T.Buffer((256,), i32), out: T.Buffer((n,), "int8")):
        T.evaluate(T.call_extern(i32, "mtk_add_s8", T.address_of(x1[0]), T.address_of(x2[0]), T.address_of(t1[0]),
                                 T.address_of(t2[0]), T.address_of(out[0]), n, p.output.multiplier, c, e,
                                 p.act_min, p.act_max))

    tables = [Const("scaled1", table_a), Const("scaled2", table_b)]
    return Kernel(op.type.lower(), [op.inputs[0], op.inputs[1], *tables, op.outputs[0]], func=add,
                  headers=(ADD_S8_HEADER,), c_calls=("mtk_add_s8",))


def mul_mve_kernel(op: Op, a_shape: Sequence[int], b_shape: Sequence[int], out_shape: Sequence[int], p: BinaryParams,
                   dtype: str) -> Kernel:
    """MUL of int8 or int16 tensors on Helium cores (c/mtk_mul_mve.h), 4 elements a vector, one call per run
    (run_calls)."""
    n, a_steps, b_steps, offset = run_calls(a_shape, b_shape, out_shape)
    a_size, b_size, out_size = (int(np.prod(s)) for s in (a_shape, b_shape, out_shape))
    call = f"mtk_mul_mve_{'s16' if dtype == 'int16' else 's8'}"
    args = (n, int(a_steps), int(b_steps), *p.in_zp, p.output.multiplier, p.output.shift, p.out_zp, p.act_min,
            p.act_max)

    @T.prim_func
    def mul(x1: T.Buffer((a_size,), dtype), x2: T.Buffer((b_size,), dtype), out: T.Buffer((out_size,), dtype)):
        for i in T.serial(out_size // n):
            T.evaluate(T.call_extern("int32", call, T.address_of(x1[offset(i, 1)]), T.address_of(x2[offset(i, 2)]),
                                     T.address_of(out[i * n]), *args))

    return Kernel("mul", [op.inputs[0], op.inputs[1], op.outputs[0]], func=mul, headers=(MUL_MVE_HEADER,),
                  c_calls=(call,))


OPS = [BinaryElementwise()]
