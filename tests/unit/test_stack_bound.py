"""The generated C's deepest call chain from gcc's call graphs, the bare-metal stack sized from it, and a
run that used all of it refused."""

from __future__ import annotations

import re

import pytest

from mtk.argtypes import MIN_STACK_BYTES
from mtk.budget import DEFAULT_STACK_BYTES, FIRMWARE_STACK_BYTES, stack_reservation
from mtk.codegen.stack_bound import PUSHED, deepest_stack, naked_frame
from mtk.kernels.files import C_DIR
from mtk.elfsize import ElfSizes
from mtk.errors import TargetError
from mtk.pipeline import check_stack


def _node(title: str, frame: str | None = None) -> str:
    label = title.split(":")[-1] + "\\nsrc/x.c:1:1" + (f"\\n{frame}" if frame else "")
    return f'node: {{ title: "{title}" label: "{label}" }}\n'


def _edge(source: str, target: str) -> str:
    return f'edge: {{ sourcename: "{source}" targetname: "{target}" label: "src/x.c:2:3" }}\n'


RUN = ("graph: { title: \"src/m.c\"\n" + _node("m_run", "8 bytes (static)") + _node("m_conv")
       + _edge("m_run", "m_conv") + _node("m_pool") + _edge("m_run", "m_pool") + _node("memcpy")
       + _edge("m_run", "memcpy") + "}\n")


def _kernels(pool_frame: str) -> str:
    return ("graph: { title: \"src/k.c\"\n" + _node("src/k.c:gemm", "40 bytes (static)")
            + _node("m_conv", "136 bytes (static)") + _edge("m_conv", "src/k.c:gemm")
            + _node("m_pool", pool_frame) + "}\n")


def test_heaviest_chain_across_files():
    """m_run (8) -> m_conv (136) -> gemm (40); memcpy, outside the generated files, adds nothing."""
    assert deepest_stack([RUN, _kernels("64 bytes (static)")], "m_") == 184
    assert deepest_stack([RUN, _kernels("400 bytes (dynamic,bounded)")], "m_") == 408


@pytest.mark.parametrize("kernel", ["mtk_gemm_2x4_fused_g16_dsp", "mtk_gemm_band_g2_nosign_dsp",
                                    "mtk_gemm_2x2_fused_s_4_dsp", "mtk_gemm_1x4_fused_chunk_dsp",
                                    "mtk_gemm_1x4_octets_pc_chunk_dsp", "mtk_dot_2x2_rows_w16_dsp",
                                    "mtk_few_0123456789ab_pass1", "mtk_dw3x3_0123456789ab_body"])
def test_a_naked_assembly_kernels_frame_is_its_own_not_gccs_zero(kernel):
    """A naked kernel (gcc: 0 bytes): its pushes and frame, NAKED_FRAMES's."""
    node = f"src/k.c:{kernel}"
    naked = _kernels("64 bytes (static)").replace("}\n", _node(node, "0 bytes (static)")
                                                   + _edge("src/k.c:gemm", node) + "}\n")
    assert deepest_stack([RUN, naked], "m_") == 184 + naked_frame(kernel)


def test_the_generated_naked_kernels_frames_cover_their_asm():
    """dsp-few's passes and dsp-3x3's bodies (ops/ generators, the only ones of naked functions): their pushes, FRAME
    and (dsp-3x3) a depth multiplier's slot and the pushes of its row subroutine."""
    ops = C_DIR.parent.parent / "ops"
    assert {p.name for p in ops.glob("*.py") if "naked" in p.read_text()} == {"conv_few_dsp.py", "depthwise3x3_dsp.py"}
    few, dw = ((ops / name).read_text() for name in ("conv_few_dsp.py", "depthwise3x3_dsp.py"))
    assert naked_frame("mtk_few_0123456789ab_pass0") == PUSHED + int(re.search(r"^FRAME = (\d+)", few, re.M)[1])
    inner = 4 * len(re.findall(r'"push \{(?:r5|lr)\}"', dw))
    assert inner == 8
    dw_frame = PUSHED + int(re.search(r"^FRAME = (\d+)", dw, re.M)[1]) + 8 + inner
    assert naked_frame("mtk_dw3x3_0123456789ab_body") == dw_frame


def test_unbounded_frame_or_recursion_is_no_bound():
    assert deepest_stack([RUN, _kernels("16 bytes (dynamic)")], "m_") is None
    recursive = _kernels("64 bytes (static)").replace("}\n", _edge("src/k.c:gemm", "m_conv") + "}\n")
    assert deepest_stack([RUN, recursive], "m_") is None


def test_no_entry_point_is_no_bound():
    assert deepest_stack([_kernels("64 bytes (static)")], "other_") is None


@pytest.mark.parametrize("model_stack, expected", [
    (0, MIN_STACK_BYTES),
    (168, 640),                                      # 1.25 x (256 + 168) = 530 -> 640
    (144, 512),                                      # 1.25 x (256 + 144) = 500 -> 512
    (480, 1024),                                     # 1.25 x (256 + 480) = 920 -> 1024
    (4000, (5320 + 255) // 256 * 256),               # 1.25 x 4256 = 5320 -> 5376
])
def test_stack_reservation_covers_the_core_and_the_model_with_a_margin(model_stack, expected):
    reserved = stack_reservation(model_stack)
    assert reserved == expected and reserved >= 1.25 * (FIRMWARE_STACK_BYTES + model_stack)


def test_stack_reservation_falls_back_where_the_chain_is_unknown():
    assert stack_reservation(None) == DEFAULT_STACK_BYTES
    assert stack_reservation(144, "O0") == DEFAULT_STACK_BYTES


def test_a_run_that_used_its_whole_stack_is_an_error():
    sizes = ElfSizes(text_bytes=4096, data_bytes=16, bss_bytes=2048, stack_bytes=1024)
    check_stack("mps2/an386", sizes, 1020)
    check_stack("mps2/an386", sizes, None)                    # the port cannot tell (host, Zephyr without it)
    check_stack("mps2/an386", ElfSizes(4096, 16, 2048), 9999)   # no .stack section: a Zephyr ELF
    with pytest.raises(TargetError, match=r"used its whole main stack \(1,024 B\)"):
        check_stack("mps2/an386", sizes, 1024)
