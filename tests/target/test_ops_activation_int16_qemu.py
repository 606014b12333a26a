"""The chain of all six int16 activations bit-exact in QEMU on a Cortex-M4 (an386) and a Cortex-M55 (an547)."""

from __future__ import annotations

import pytest

from harness import assert_bit_exact_on_target
from test_ops_activation_int16 import activation_chain, chain_inputs


@pytest.mark.qemu
@pytest.mark.parametrize("board", ["mps2/an386", "mps3/corstone300/an547"])
def test_chain_bit_exact_on_target(board, tmp_path):
    assert_bit_exact_on_target(activation_chain(), board, tmp_path, chain_inputs(2))
