"""The bare-metal startup paints the main stack without overwriting its own frame, whatever the optimisation level
the startup and port are built at (bench harnesses build them at -O2, where GCC may read sp before a prologue's push):
a firmware of the startup, the port and a main that only exits reaches its exit."""

from __future__ import annotations

import subprocess
import sys

import pytest

from checkout import REPO
from mtk.boards import get_board
from mtk.paths import BAREMETAL_APP, FIRMWARE

sys.path.insert(0, str(REPO / "bench"))

from baremetal_harness import render_board_files  # noqa: E402

MAIN = """#include <stdint.h>
#include "mtk_core.h"
uint32_t mtk_port_stack_used(void);
void mtk_port_exit(int status);
void mtk_core_main(void) { mtk_port_exit(mtk_port_stack_used() < 1024u ? 0 : 1); }
"""


@pytest.mark.parametrize("optimisation", ["-Os", "-O2"])
@pytest.mark.parametrize("board_name", ["mps2/an385", "mps2/an386", "mps3/an547"])
def test_the_startup_reaches_main_and_its_exit(board_name, optimisation, tmp_path):
    board = get_board(board_name)
    render_board_files(board, tmp_path, 8192)
    (tmp_path / "main.c").write_text(MAIN)
    elf = tmp_path / "firmware.elf"
    subprocess.run(["arm-none-eabi-gcc", *board.cpu.gcc_flags, optimisation, "--specs=picolibc.specs",
                    "-nostartfiles", "-T", str(tmp_path / "linker.ld"), "-DMTK_SEMIHOSTING=1", "-I", str(tmp_path),
                    "-I", str(FIRMWARE), str(tmp_path / "main.c"), str(BAREMETAL_APP / "startup.c"),
                    str(BAREMETAL_APP / "mtk_port_baremetal.c"), "-o", str(elf)], check=True)
    done = subprocess.run(["qemu-system-arm", "-M", board.qemu.machine, "-kernel", str(elf), "-display", "none",
                           "-monitor", "none", "-serial", "null", "-no-reboot",
                           "-semihosting-config", "enable=on,target=native"], timeout=30)
    assert done.returncode == 0
