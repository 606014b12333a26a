"""The generated C's deepest stack use: the heaviest call chain of gcc's call graph (-fcallgraph-info=su).

Each function's frame is what gcc reports for it (`N bytes (static)`, or `dynamic,bounded`; a naked assembly
kernel's, which gcc gives as 0, from NAKED_FRAMES); a chain's use is the sum of its frames. Functions outside the
generated files (libc's memcpy, the compiler's helpers) are not in the graph: their frames are the firmware's margin's
to cover. No bound (None) when a frame is unbounded (a variable-length array, alloca) or the calls are recursive.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

PUSHED = 9 * 4   # push {r4-r11, lr}: every naked kernel's first instruction
# Naked assembly kernels' frames (their pushes and stack frames are in their asm, which gcc's call graph counts as 0
# bytes), by a pattern of their names: a bound for each family (its largest `sub sp`, and the pushes inside).
NAKED_FRAMES = ((r"mtk_gemm_2x4_fused_\w+", PUSHED + 88),       # c/dsp/mtk_gemm_2x4_fused.h (straight: 88, any: 40)
                (r"mtk_gemm_band_\w+", PUSHED + 28),             # c/dsp/mtk_gemm_band_fused.h
                (r"mtk_gemm_2x2_fused_\w+", PUSHED + 40),        # c/dsp/mtk_dot_biased_s8.h MTK_FUSED_NAKED
                (r"mtk_gemm_1x4_fused_\w+", PUSHED + 64),        # MTK_FUSED_CHUNK_DSP (MTK_FUSED_QUAD_DSP: 48)
                (r"mtk_gemm_1x4_octets_\w+", PUSHED + 96),       # c/dsp/mtk_fused_octets_m33.h (chunk: 96, else 80)
                (r"mtk_dot_2x\d_rows_w16_dsp", PUSHED),          # c/dsp/mtk_dot_s8_dsp.h (its pushes alone)
                (r"mtk_few_[0-9a-f]{12}_pass\d", PUSHED + 20),   # ops/conv_few_dsp.py FRAME
                (r"mtk_dw3x3_[0-9a-f]{12}_body", PUSHED + 32 + 8 + 2 * 4))   # ops/depthwise3x3_dsp.py FRAME, its
#   depth multiplier's 8, the row subroutine's push {lr} and the sign fix's push {r5} inside it


def naked_frame(name: str) -> int | None:
    """The frame of the naked assembly kernel `name` (NAKED_FRAMES), or None: not one of them."""
    return next((frame for pattern, frame in NAKED_FRAMES if re.fullmatch(rf"{pattern}(\.\w+\.\d+)*", name)), None)


_NODE = re.compile(r'node: \{ title: "(?P<title>[^"]+)" label: "(?P<label>[^"]*)"')
_EDGE = re.compile(r'edge: \{ sourcename: "(?P<source>[^"]+)" targetname: "(?P<target>[^"]+)"')
_FRAME = re.compile(r"\\n(\d+) bytes \(([a-z,]+)\)$")


def call_graph(callgraphs: Iterable[str]) -> tuple[dict[str, int | None], dict[str, set[str]]]:
    """Over the .ci files `callgraphs`: each function's frame (None: unbounded) and the functions it calls, by
    gcc's name for it (a static function's: `<file>:<name>`)."""
    frames: dict[str, int | None] = {}
    calls: dict[str, set[str]] = {}
    for text in callgraphs:
        for node in _NODE.finditer(text):
            frame = _FRAME.search(node["label"])
            if frame is not None:
                frames[node["title"]] = int(frame[1]) if frame[2] in ("static", "dynamic,bounded") else None
                name = node["title"].split(":")[-1]
                naked = naked_frame(name)
                if naked is not None and frames[node["title"]] == 0:
                    frames[node["title"]] = naked
        for edge in _EDGE.finditer(text):
            calls.setdefault(edge["source"], set()).add(edge["target"])
    return frames, calls


def deepest_stack(callgraphs: Iterable[str], entry_prefix: str) -> int | None:
    """The heaviest chain of frames from any function whose name starts with `entry_prefix` and that no
    generated function calls, over the .ci files `callgraphs` (one per translation unit)."""
    frames, calls = call_graph(callgraphs)
    called = {target for targets in calls.values() for target in targets}
    entries = [f for f in frames if f.startswith(entry_prefix) and f not in called]
    depth: dict[str, int | None] = {}
    on_path: set[str] = set()

    def chain(function: str) -> int | None:
        if function in on_path:
            return None   # recursion: no bound
        if function not in depth:
            on_path.add(function)
            below = [chain(callee) for callee in calls.get(function, ()) if callee in frames]
            on_path.discard(function)
            frame = frames[function]
            depth[function] = None if frame is None or None in below else frame + max(below, default=0)
        return depth[function]

    chains = [chain(entry) for entry in entries]
    return None if not chains or None in chains else max(chains)
