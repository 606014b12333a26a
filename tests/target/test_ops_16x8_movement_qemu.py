"""The 16x8 movement chain (tests/compile/test_ops_16x8_movement.py) bit-exact in QEMU on a Cortex-M4 (DSP)
and a Cortex-M55 (Helium) board."""

from __future__ import annotations

import pytest

from harness import assert_bit_exact_on_target
from test_ops_16x8_movement import chain


@pytest.mark.qemu
@pytest.mark.parametrize("board", ["mps2/an386", "mps3/corstone300/an547"])
def test_chain_is_bit_exact_on_target(board, tmp_path):
    assert_bit_exact_on_target(chain(), board, tmp_path)
