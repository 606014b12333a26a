"""Which QEMU board runs a core's code for the cycle model (`--emulate`, the sequence tests)."""

from __future__ import annotations

from ..errors import MtkError

# the QEMU machine with the same core (and ISA) as each core mtk targets
QEMU_BOARD_OF_CPU = {
    "cortex-m0": "bbc_microbit",
    "cortex-m0plus": "bbc_microbit",      # QEMU's microbit is a Cortex-M0: the same ARMv6-M instructions
    "cortex-m3": "mps2/an385",
    "cortex-m4": "mps2/an386",
    "cortex-m7": "mps2/an500",
    "cortex-m33": "mps2/an505",
    "cortex-m55": "mps3/corstone300/an547",
}


def qemu_board_for(cpu: str) -> str:
    if cpu not in QEMU_BOARD_OF_CPU:
        raise MtkError(f"no QEMU machine runs {cpu} code", hint=f"cores with one: {', '.join(QEMU_BOARD_OF_CPU)}")
    return QEMU_BOARD_OF_CPU[cpu]
