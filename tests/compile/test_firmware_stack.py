"""The bare-metal firmware core's own stack, as budget.FIRMWARE_STACK_BYTES counts it: its deepest call chain
(gcc -fcallgraph-info=su over its sources as the Makefile builds them) and an exception frame with FP context."""

from __future__ import annotations

import subprocess

import pytest

from mtk.boards import get_board
from mtk.budget import FIRMWARE_STACK_BYTES
from mtk.codegen.stack_bound import deepest_stack
from mtk.compiled import CompiledModel
from mtk.platforms import ProjectOptions, get_platform

from checkout import FAKE

FP_EXCEPTION_FRAME = 104   # the basic frame (32 B), S0-S15, FPSCR and the alignment word
CORE_SOURCES = ("startup.c", "mtk_port_baremetal.c", "model_glue.c", "firmware/mtk_core.c", "firmware/mtk_mlperf.c")


@pytest.mark.parametrize("board", ["mps2/an386", "mps3/an547"])
def test_the_firmware_cores_deepest_chain_and_an_exception_frame_fit_its_share(board, tmp_path):
    project = get_platform("baremetal").render(CompiledModel.load(FAKE), get_board(board), tmp_path / "p",
                                               ProjectOptions())
    flags = get_board(board).cpu.gcc_flags
    for source in CORE_SOURCES:
        subprocess.run(["arm-none-eabi-gcc", *flags, "-Os", "-ffunction-sections", "-fno-common",
                        "--specs=picolibc.specs", "-I.", "-Ifirmware", "-Imodel/include", "-fcallgraph-info=su",
                        "-c", source, "-o", str(tmp_path / source.replace("/", "_").replace(".c", ".o"))],
                       cwd=project, check=True, capture_output=True)
    chain = deepest_stack([p.read_text() for p in tmp_path.glob("*.ci")], "Reset_Handler")
    assert chain is not None and chain + FP_EXCEPTION_FRAME <= FIRMWARE_STACK_BYTES, chain
