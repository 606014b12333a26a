"""On a board whose flash misses cost more than an instruction per byte (the Picos' QSPI flash behind a 16 KB XIP
cache: compiler.constants_cache_bytes, read from boards.yaml's memory_timing), a layer whose default constants do
not fit that cache and whose leanest do takes the leanest (a Winograd conv its GEMM); a tuning file's variant, and
constants copied into RAM, keep the default; boards with fast flash compile as before."""

from __future__ import annotations

import pytest

from harness import conv, layer_kernel
from mtk.boards import get_board
from mtk.compiler import code_cache_bytes, compile_model, constants_cache_bytes
from mtk.cycles.emulate import emulation_board
from mtk.kernels.table import WINOGRAD, WINOGRAD4
from mtk.ops import winograd_dsp
from mtk.tuning import Tuning


@pytest.mark.parametrize("board, constants_cache, code_cache", [
    ("rpi_pico2", 16384, 16384), ("rpi_pico", 16384, 16384),   # 108-112 wait states a fill of an 8-byte line
    ("nucleo_l4r5zi", None, None),   # 5 wait states a fill of an 8-byte line, but the code runs from its code RAM
    ("nucleo_u575zi_q", None, None), ("nucleo_h7a3zi_q", None, None),   # 4-7 wait states a 16- or 32-byte line
    ("nucleo_f746zg", None, None),
    ("nucleo_g0b1re", None, None),   # 2 wait states an 8-byte line, no cache for loads
    ("mps2/an505", None, None), ("mps2/an386", None, None),   # zero wait
])
def test_only_a_slow_flash_caps_the_constants_and_only_an_expensive_code_miss_the_kernel_code(board, constants_cache,
                                                                                               code_cache):
    """compiler.constants_cache_bytes (a miss of over a cycle a byte) and code_cache_bytes (half a cycle a byte)."""
    physical = get_board(board)
    boards = [physical, emulation_board(physical)] if physical.qemu is None else [physical]   # --emulate: as the board
    for target in boards:
        assert (constants_cache_bytes(target), code_cache_bytes(target)) == (constants_cache, code_cache)


def test_a_winograd_layer_whose_weights_overflow_the_xip_cache_takes_its_gemm_on_the_pico2(tmp_path):
    """16 -> 16 channels on 8x8: F(4x4)'s transformed weights take 21,024 B, more than the 16 KB cache, the GEMM's
    2,304 B fit: the Pico 2 takes the GEMM, the U575 (same core, 0.25 cycle a byte) Winograd."""
    model = tmp_path / "c16.tflite"
    model.write_bytes(conv((1, 8, 8, 16), (3, 3), 16, (8, 8), activation="RELU"))
    fast = compile_model(model, tmp_path / "u575", board="nucleo_u575zi_q")
    assert layer_kernel(fast) == WINOGRAD4 and fast.constant_bytes > 16384
    pico2 = compile_model(model, tmp_path / "pico2", board="rpi_pico2")
    assert layer_kernel(pico2) not in (WINOGRAD4, WINOGRAD) and pico2.constant_bytes <= 16384
    assert layer_kernel(compile_model(model, tmp_path / "emulated", board=emulation_board(get_board("rpi_pico2")))) \
        == layer_kernel(pico2)
    pinned = Tuning({fast.ops[0].layer_key: winograd_dsp.F4.variant}, "pinned.json")
    assert layer_kernel(compile_model(model, tmp_path / "pinned", board="rpi_pico2", tuning=pinned)) == WINOGRAD4
    assert layer_kernel(compile_model(model, tmp_path / "in_ram", board="rpi_pico2", weights_in_ram=True)) == WINOGRAD4


def test_a_layer_whose_leanest_weights_overflow_the_cache_too_keeps_its_default(tmp_path):
    """64 -> 64 channels on 8x8: the GEMM's 36,864 B overflow the cache as well, and it reads them once per two
    output pixels, Winograd once per tile: the Pico 2 keeps Winograd."""
    model = tmp_path / "c64.tflite"
    model.write_bytes(conv((1, 8, 8, 64), (3, 3), 64, (8, 8)))
    assert layer_kernel(compile_model(model, tmp_path / "pico2", board="rpi_pico2")) in (WINOGRAD4, WINOGRAD)
