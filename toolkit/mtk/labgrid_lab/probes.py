"""How a place's firmware gets onto its board: one labgrid driver per kind of probe resource.

| probe resource (exporter YAML)       | driver                          | boards                         |
|--------------------------------------|---------------------------------|--------------------------------|
| USBDebugger (NetworkUSBDebugger)     | labgrid's OpenOCDDriver         | those in OPENOCD_BOARD_FILES   |
| GDBServer (mtk's, below)             | GdbServerDriver (GDB remote)    | code in RAM-like memory: QEMU  |

Adding a combination: a board → OpenOCD board file in OPENOCD_BOARD_FILES, or a resource class →
driver factory in PROBE_DRIVERS (a labgrid driver implementing BootstrapProtocol.load).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import attr
from labgrid.driver.common import Driver
from labgrid.driver.openocddriver import OpenOCDDriver
from labgrid.factory import target_factory
from labgrid.protocol import BootstrapProtocol
from labgrid.resource.common import NetworkResource
from labgrid.target import Target
from labgrid.util.proxy import proxymanager

from .. import ui
from ..boards import Board, Unit
from ..errors import MtkError
from ..runners.gdb_remote import GdbRemote, load_elf

# OpenOCD's board/*.cfg file per mtk board (the probe is the board's own ST-LINK).
OPENOCD_BOARD_FILES = {
    "nucleo_f746zg": "st_nucleo_f7.cfg",
    "nucleo_l4r5zi": "st_nucleo_l4.cfg",
    "stm32f746g_disco": "stm32f7discovery.cfg",
}
OPENOCD_LOAD = ["init", "reset init", "program {filename} verify", "reset run", "shutdown"]


@target_factory.reg_resource
@attr.s(eq=False)
class GDBServer(NetworkResource):
    """A GDB server on the exporter's network that stands for the board's probe: QEMU's `-gdb`,
    or an OpenOCD/pyOCD gdbserver. `reset` is the monitor command that resets the target."""

    port = attr.ib(validator=attr.validators.instance_of(int))
    reset = attr.ib(default="system_reset", validator=attr.validators.instance_of(str))


ICOUNT = "-icount shift=0,align=off,sleep=off"   # what a QEMU stand-in needs for its counts to be instructions


@target_factory.reg_driver
@attr.s(eq=False)
class GdbServerDriver(Driver, BootstrapProtocol):
    """Loads an ELF through a GDBServer resource, resets the target and lets it run. `check_icount`: the
    board's counts are instructions (a QEMU stand-in), checked to run under -icount (warned about if not)."""

    bindings = {"server": {"GDBServer"}}
    check_icount = attr.ib(default=False, validator=attr.validators.instance_of(bool))

    @Driver.check_active
    def load(self, filename: str) -> None:
        host, port = proxymanager.get_host_and_port(self.server)
        load_elf(host, port, Path(filename), self.server.reset, self._warn_without_icount if self.check_icount else None)

    def _warn_without_icount(self, gdb: GdbRemote) -> None:
        if not gdb.qemu_counts_instructions():
            ui.info(f"warning: place {self.target.name} is a QEMU stand-in without -icount: the counts it reports "
                    f"follow the host's clock, not the instructions run (start its QEMU with {ICOUNT})")


def _openocd(target: Target, board: Board) -> Driver:
    board_file = OPENOCD_BOARD_FILES.get(board.name)
    if board_file is None:
        raise MtkError(f"mtk knows no OpenOCD board file for {board.name}",
                       hint="add one to OPENOCD_BOARD_FILES in mtk/labgrid_lab/probes.py")
    return OpenOCDDriver(target, name=None, board_config=board_file, load_commands=OPENOCD_LOAD)


PROBE_DRIVERS: dict[str, Callable[[Target, Board], Driver]] = {
    "GDBServer": lambda target, board: GdbServerDriver(target, name=None, check_icount=board.caps.unit == Unit.INSTRUCTIONS),
    "NetworkUSBDebugger": _openocd,
    "USBDebugger": _openocd,
}


def probe_driver(target: Target, board: Board) -> Driver:
    """The flashing driver for the probe resource of `target` (a place's acquired resources)."""
    classes = {type(resource).__name__ for resource in target.resources}
    probes = sorted(classes & PROBE_DRIVERS.keys())
    if len(probes) != 1:
        raise MtkError(f"place {target.name} has {'no' if not probes else 'several'} probe resource(s) "
                       f"({', '.join(probes) or ', '.join(sorted(classes))})",
                       hint=f"export exactly one of: {', '.join(PROBE_DRIVERS)}")
    return PROBE_DRIVERS[probes[0]](target, board)
