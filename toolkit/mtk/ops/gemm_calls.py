"""The C calls of a GEMM's TIR (gemm.gemm_func): where a block's rows come from and how they are packed into the
scratch (RowPacking), and the calls of the layout's kernel on them (KernelCalls), each by parameter name from the
kernel table's signatures."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from tvm.script import tirx as T

from ..kernels.signature import CFunction
from ..kernels.table import (IM2COL, PACK_PAIR, PACK_PAIR_GROUPS, PACK_ROW, PACK_ROW_GROUPS, PACK_RUNS_PAIR,
                             PACK_RUNS_ROW, PACK_SUMS, PACK_TAPS_PAIR, PACK_TAPS_ROW)
from ..target import Cpu, Isa
from .base import c_call
from .microkernels import GROUP
from .requant import Requant

if TYPE_CHECKING:
    from .gemm import GemmLayout, Patches


def row_source(patches: Patches | None) -> str:
    """Where the packed rows come from: the input's rows ("rows"); im2col taps packed straight from
    the input, whole groups of 4 channels per tap ("taps"); or patches gathered byte by byte into
    the scratch first ("gather")."""
    if patches is None:
        return "rows"
    return "taps" if patches.in_c % GROUP == 0 else "gather"


def runs_stage_bytes(patches: Patches | None, cpu: Cpu) -> int:
    """Bytes a row's staging takes when a gather packs kernel-row runs straight from the input
    (mtk_im2col_runs_s8.h: no horizontal dilation, a DSP core's int16 packing); 0 when it does not."""
    run = patches.k_w * patches.in_c if patches else 0
    if row_source(patches) != "gather" or patches.dil_w != 1 or cpu.isa is not Isa.DSP:
        return 0
    return -(-run // GROUP) * GROUP + -(-patches.k_h * (run % GROUP) // GROUP) * GROUP


def runs_order(patches: Patches) -> np.ndarray:
    """The im2col row's values (ky, kx, c order) in the order mtk_im2col_runs_s8.h packs them: each kernel
    row's whole groups, then the values left over from every kernel row."""
    run = patches.k_w * patches.in_c
    whole = run - run % GROUP
    rows = np.arange(patches.k_h)[:, None] * run
    return np.concatenate([(rows + np.arange(whole)).ravel(), (rows + np.arange(whole, run)).ravel()])


def block_row(g: GemmLayout, pb, i: int):
    """Row i of block pb (the last row again past the end)."""
    return T.min(pb * g.block_rows + i, g.rows - 1)


class RowPacking:
    """The calls packing a block's rows into the scratch as the kernels read them, from the layout's row source: the
    input's own rows ("rows"; none for a direct kernel, nor for a one-row stream, whose kernel packs the row), its
    im2col taps packed straight from the input, a kernel row at a time ("taps"), or its im2col patches gathered byte
    by byte into the scratch first ("gather"; on DSP cores, kernel rows with no horizontal dilation packed from the
    input a kernel row at a time: runs)."""

    def __init__(self, g: GemmLayout, patches: Patches | None):
        self.g, self.pt = g, patches
        self.packs = g.source == "taps" or g.source == "rows" and not g.direct and (g.block_rows == 2 or not g.stream)
        kernel_row = patches.k_w * patches.in_c if patches else 0
        # what one pack call covers: kernel rows of taps, else k values of the input's rows
        self.whole = patches.k_h if g.source == "taps" else g.depth
        self.chunk = g.chunk // kernel_row if g.source == "taps" else g.chunk

    def chunk_count(self, ch):
        """Kernel rows (taps) or k values (rows) of chunk ch."""
        return T.min(self.chunk, self.whole - ch * self.chunk)

    def block_rows(self, pb) -> list:
        """The block's rows: pb itself for a one-row block."""
        return [pb] if self.g.block_rows == 1 else [block_row(self.g, pb, i) for i in range(self.g.block_rows)]

    def corner(self, p, ky):
        """The input pixel (y, x) output row p's window reads at kernel row ky, column 0."""
        pt = self.pt
        return ((p // pt.out_w) * pt.stride_h + ky * pt.dil_h - pt.pad_top,
                (p % pt.out_w) * pt.stride_w - pt.pad_left)

    def rows(self, x, pad, scratch, pb, first, count, at=0):
        """The call packing the block's kernel rows first.. (count of them) of taps, or k values first.. of rows,
        into the scratch from byte `at`."""
        g, pt, dst = self.g, self.pt, T.address_of(scratch[at])
        rows = self.block_rows(pb)
        if g.source == "taps":
            geometry = dict(x=T.address_of(x[0]), in_h=pt.in_h, in_w=pt.in_w, in_c=pt.in_c, kh=count, kw=pt.k_w,
                            dil_h=pt.dil_h, dil_w=pt.dil_w, pad=T.address_of(pad[0]), dst=dst)
            if len(rows) == 2:
                (iy0, ix0), (iy1, ix1) = (self.corner(p, first) for p in rows)
                return c_call(PACK_TAPS_PAIR, iy0=iy0, ix0=ix0, iy1=iy1, ix1=ix1, **geometry)
            iy, ix = self.corner(rows[0], first)
            return c_call(PACK_TAPS_ROW, iy=iy, ix=ix, **geometry)
        srcs = [T.address_of(x[p * g.depth + first]) for p in rows]
        if len(rows) == 2:
            return c_call(PACK_PAIR, src0=srcs[0], src1=srcs[1], k=count, dst=dst)
        return c_call(PACK_ROW, src=srcs[0], k=count, dst=dst)

    def runs(self, x, scratch, pb, at=0):
        """The call packing the block's im2col rows a kernel row at a time from the input (runs_stage_bytes) into the
        scratch from byte `at`, staged after the packed rows."""
        g, pt = self.g, self.pt
        geometry = dict(x=T.address_of(x[0]), in_h=pt.in_h, in_w=pt.in_w, in_c=pt.in_c, kh=pt.k_h, kw=pt.k_w,
                        dil_h=pt.dil_h, pad=pt.in_zp, stage=T.address_of(scratch[g.packed_bytes]),
                        dst=T.address_of(scratch[at]))
        rows = self.block_rows(pb)
        if len(rows) == 2:
            (iy0, ix0), (iy1, ix1) = (self.corner(p, 0) for p in rows)
            return c_call(PACK_RUNS_PAIR, iy0=iy0, ix0=ix0, iy1=iy1, ix1=ix1, **geometry)
        iy, ix = self.corner(rows[0], 0)
        return c_call(PACK_RUNS_ROW, iy=iy, ix=ix, **geometry)

    @property
    def gathered_row(self) -> int:
        """Bytes of a gathered im2col row: zero-padded to whole groups."""
        return self.g.groups * GROUP

    def gather(self, x, scratch, pb, slot):
        """The call gathering block row `slot`'s im2col patch into the scratch after the packed rows."""
        pt, g = self.pt, self.g
        iy, ix = self.corner(block_row(g, pb, slot), 0)
        return c_call(IM2COL, x=T.address_of(x[0]), iy=iy, ix=ix, in_h=pt.in_h, in_w=pt.in_w, in_c=pt.in_c, c0=0,
                      cn=pt.in_c, kh=pt.k_h, kw=pt.k_w, dil_h=pt.dil_h, dil_w=pt.dil_w, pad=pt.in_zp,
                      tail=self.gathered_row - g.depth,
                      dst=T.address_of(scratch[g.packed_bytes + slot * self.gathered_row]))

    def gathered(self, scratch, at=0):
        """The call packing the gathered rows into the scratch from byte `at`."""
        g, src = self.g, self.g.packed_bytes
        if g.block_rows == 2:
            return c_call(PACK_PAIR_GROUPS, src0=T.address_of(scratch[src]),
                          src1=T.address_of(scratch[src + self.gathered_row]), groups=g.groups,
                          dst=T.address_of(scratch[at]))
        return c_call(PACK_ROW_GROUPS, src=T.address_of(scratch[src]), groups=g.groups, dst=T.address_of(scratch[at]))


class KernelCalls:
    """The calls of the layout's kernel (kernels/table.py) on a block of packed (or, direct, the input's) rows."""

    def __init__(self, g: GemmLayout, rq: Requant):
        self.g, self.rq = g, rq

    def row_sums(self, scratch, acc, groups):
        """The packed rows' sums after the block's (what the biased kernels read)."""
        g = self.g
        return c_call(PACK_SUMS, x=T.address_of(scratch[0]), groups=groups, rows=g.block_rows,
                      sums=T.address_of(acc[g.block_rows * g.block_cols]))

    def packed_tile(self, scratch, w, acc, ct, ch, groups):
        """The block's sums of channel tile ct over chunk ch of the packed rows."""
        g = self.g
        return c_call(g.micro_kernel, x=T.address_of(scratch[0]),
                      w=T.address_of(w[ct * g.weight_tile_bytes + ch * g.chunk_weight_bytes]), groups=groups,
                      acc=acc.access_ptr("rw"))

    def direct_tile(self, function: CFunction, x, w, acc, pb, ct):
        """The block's sums of channel tile ct by a direct kernel, over the input's rows as they are."""
        g = self.g
        rows = [T.address_of(x[block_row(g, pb, i) * g.depth]) for i in range(g.block_rows)]
        named = {"x": rows[0]} if len(rows) == 1 else {"x0": rows[0], "x1": rows[1]}
        return c_call(function, **named, w=T.address_of(w[ct * g.weight_tile_bytes]), k=g.depth,
                      acc=acc.access_ptr("rw"))

    def unpacked(self, x, at, k) -> dict:
        """A one-row stream kernel's int8 values to pack itself (x from `at`, k of them), or none: packed taps."""
        return dict(src=T.address_of(x[at]), k=k) if self.g.source == "rows" else dict(src=0, k=0)

    def stream(self, x, w, out, scratch, pb):
        """A stream's kernel computing the call's outputs (a block's, or 2x4's pairs'): every channel, or the live
        ones."""
        g, rq = self.g, self.rq
        common = dict(x=T.address_of(scratch[0]), w=T.address_of(w[0]), groups=g.groups, lo=rq.act_min,
                      hi=rq.act_max, sign=int(rq.negative_rounding_matters))
        if g.block_rows == 1:
            return c_call(g.micro_kernel, **common, channels=g.cols, out=T.address_of(out[pb * g.cols]),
                          **self.unpacked(x, pb * g.depth, g.depth))
        C, names = g.cols, {param.name for param in g.micro_kernel.params}
        if "rows" in names:   # (2x4: up to its pairs' rows a call, an odd last row its own; its code by the pairs)
            common["rows"] = T.min(g.call_rows, g.rows - pb * g.call_rows) if g.rows % g.call_rows else g.call_rows
            common["pairs"] = g.code_pairs
            stride = C
        else:
            stride = C if g.rows % 2 == 0 else T.if_then_else(pb * 2 + 1 < g.rows, C, 0)   # 0: the odd last row
        if "split" in names:   # (2x2's schedules: 2x4 has one)
            common["split"] = int(g.split_loads)
        out_at = T.address_of(out[pb * g.call_rows * C])
        if g.live is not None:
            return c_call(g.micro_kernel, **common, live=g.live, out=out_at, stride=stride, channels=C,
                          stream_bytes=g.live_stream_bytes)
        return c_call(g.micro_kernel, **common, channels=C, out=out_at, stride=stride)

    def stream_chunk(self, x, w, out, scratch, pb, ch, k):
        """A one-row stream's kernel over chunk ch (k values) of the row: the quads' partial sums kept in the
        scratch, the outputs after the last chunk."""
        g, rq = self.g, self.rq
        return c_call(g.chunk_kernel, x=T.address_of(scratch[0]), w=T.address_of(w[0]),
                      groups=(k + GROUP - 1) // GROUP, channels=g.cols, out=T.address_of(out[pb * g.cols]),
                      sums=T.address_of(scratch[g.packed_bytes]), g0=ch * (g.chunk // GROUP), total=g.groups,
                      **self.unpacked(x, pb * g.depth + ch * g.chunk, k), lo=rq.act_min, hi=rq.act_max)
