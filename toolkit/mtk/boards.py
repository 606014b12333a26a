"""Board registry: the boards mtk knows, read from board_templates/boards.yaml."""

from __future__ import annotations

import dataclasses
import difflib
from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache
from typing import Any

import yaml

from .cycles.memory import MemoryTiming, memory_timing_from_yaml
from .errors import MtkError
from .names import identifier_read_back
from .paths import BOARD_TEMPLATES
from .target import Cpu, get_cpu

BOARDS_FILE = BOARD_TEMPLATES / "boards.yaml"
DEFAULT_BOARD = "mps2/an386"
UART_KINDS = ("cmsdk", "pl011", "nrf51")
# What an entry of boards.yaml without `cpu` sets on a board mtk reads from the Zephyr workspace
OVERRIDES = {"clock_hz": int, "usb_vid_pid": str, "pyocd_target": str, "timestamp_gpio": str, "runners": tuple,
             "zephyr_modules": tuple}


@dataclass(frozen=True)
class MemoryRegion:
    base: int
    size: int


@dataclass(frozen=True)
class RamRegion:
    """A RAM region the model's arena may use. `name` is the linker's: the memory region and the input
    section a pool placed there goes to (in Zephyr its devicetree node's `zephyr,memory-region`: where Zephyr's
    devicetree gives the node none, `zephyr_node` labels it and the application's overlay names it);
    the `system` region holds the firmware's own data and stack (Zephyr's `zephyr,sram`)."""

    name: str
    base: int | None      # None: not known (a physical board of boards.yaml without ram_regions)
    size: int
    system: bool = False
    tcm: bool = False     # tightly coupled: no wait states, no cache; hot buffers go here first
    zephyr_node: str | None = None


@dataclass(frozen=True)
class CodeRam:
    """RAM on the core's code bus, where code runs without wait states (the STM32L4+'s SRAM2 at 0x10000000 on
    ICode/DCode): the firmware copies the model's code there from flash at start-up (its .code_ram section). Its
    bytes are not among the board's ram_bytes: the data keep out of it."""

    base: int                       # where the code bus sees it (the linker's region CODE_RAM)
    size: int
    source: str = ""                  # the reference manual's wording
    zephyr_node: str | None = None    # its devicetree node label in Zephyr (the application names its region)


@dataclass(frozen=True)
class QemuMachine:
    """How QEMU emulates a board: machine, memory map and console UART."""

    machine: str          # qemu-system-arm -M value
    code: MemoryRegion    # where code and constants are linked
    ram: MemoryRegion     # where data, arena and stack go
    uart_kind: str        # one of UART_KINDS
    uart_base: int
    timer_hz: int         # SysTick clock; under -icount shift=0 a tick is 1e9/timer_hz instructions
    zephyr_timer_hz: int | None = None   # Zephyr's system timer (k_cycle_get_32) where it is not SysTick

    @property
    def zephyr_cycle_hz(self) -> int:
        """The clock of the cycles a Zephyr build of this board counts."""
        return self.zephyr_timer_hz or self.timer_hz


class Unit(StrEnum):
    """What the firmware's counter counts (its `mtk-info` unit)."""

    INSTRUCTIONS = "instructions"   # QEMU under -icount shift=0: one a nanosecond of virtual time
    CYCLES = "cycles"               # the core's clock on silicon


@dataclass(frozen=True)
class BoardCaps:
    """What a board's firmware and its target can do: the data commands read, not "is it QEMU"."""

    where: str                  # what reports say the firmware ran on
    unit: Unit                  # what its timings count
    exits_by_semihosting: bool  # the firmware can end a run with its exit status; else it resets
    sets_console_baud: bool     # the console is a UART at the firmware's baud rate (an emulated one has none)
    flashable: bool             # a flash tool writes its firmware (else the emulator loads the ELF)
    energy_mode: bool           # can be an MLPerf Tiny energy-mode DUT (measured by an energy monitor)
    default_platform: str       # the firmware platform when --platform is not given


EMULATED = BoardCaps(where="QEMU", unit=Unit.INSTRUCTIONS, exits_by_semihosting=True, sets_console_baud=False,
                     flashable=False, energy_mode=False, default_platform="baremetal")
SILICON = BoardCaps(where="silicon", unit=Unit.CYCLES, exits_by_semihosting=False, sets_console_baud=True,
                    flashable=True, energy_mode=True, default_platform="zephyr")


@dataclass(frozen=True)
class Board:
    name: str                   # Zephyr board name, e.g. "mps2/an386"
    cpu: Cpu
    clock_hz: int
    flash_bytes: int
    ram_bytes: int
    console: str                # console UART (Zephyr node label)
    qemu: QemuMachine | None = None
    usb_vid_pid: str | None = None
    runners: tuple[str, ...] = ()
    pyocd_target: str | None = None   # pyOCD's target type (a CMSIS-Pack device name)
    timestamp_gpio: str | None = None  # MLPerf Tiny energy mode's timestamp pin: devicetree cells
    aliases: tuple[str, ...] = ()
    zephyr_modules: tuple[str, ...] = ()   # west projects it needs besides zephyr and cmsis_6
    zephyr_selects: tuple[tuple[str, tuple[str, ...]], ...] = ()   # (Kconfig symbol, what it selects)
    zephyr_config: tuple[tuple[str, str], ...] = ()   # (Kconfig symbol, value) its applications' board .conf sets
    ram_regions: tuple[RamRegion, ...] = ()   # fastest first; their sizes add up to ram_bytes
    in_zephyr: bool = True   # Zephyr has a board of this name (else: QEMU bare metal only)
    memory_timing: tuple[MemoryTiming, ...] = ()   # the cycle model's wait states and caches; (): zero wait
    emulates: str | None = None   # --emulate: the physical board whose core, flash and RAM this QEMU board takes
    code_ram: CodeRam | None = None   # zero-wait RAM on the code bus the model's code is copied to

    @property
    def budget_name(self) -> str:
        """The board whose flash and RAM a model for this one must fit: itself, or the board it emulates."""
        return self.emulates or self.name

    @property
    def flash_timing(self) -> MemoryTiming | None:
        """The cycle model's timing of the flash holding code and constants; None: zero wait."""
        return next((t for t in self.memory_timing if t.role == "flash"), None)

    @property
    def system_region(self) -> RamRegion:
        return next(r for r in self.ram_regions if r.system)

    @property
    def caps(self) -> BoardCaps:
        return SILICON if self.qemu is None else EMULATED

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name, "cpu": self.cpu.name, "clock_hz": self.clock_hz,
            "flash_bytes": self.flash_bytes, "ram_bytes": self.ram_bytes, "console": self.console,
            "qemu_machine": self.qemu.machine if self.qemu else None,
            "usb_vid_pid": self.usb_vid_pid, "runners": list(self.runners), "pyocd_target": self.pyocd_target,
            "timestamp_gpio": self.timestamp_gpio, "in_zephyr": self.in_zephyr,
            "memory_timing": {t.role: {"wait_states": t.wait_states, "sequential_wait_states": t.fill_waits()[1],
                                       "prefetch": t.prefetch, "icache": t.icache and vars(t.icache),
                                       "dcache": t.dcache and vars(t.dcache), "cache": t.cache and vars(t.cache)}
                              for t in self.memory_timing},
            "ram_regions": [{"name": r.name, "base": r.base, "size": r.size, "system": r.system, "tcm": r.tcm}
                            for r in self.ram_regions],
            "code_ram": self.code_ram and vars(self.code_ram),
        }


def _board_from_yaml(name: str, entry: dict[str, Any]) -> Board:
    try:
        qemu = entry.get("qemu")
        qemu_machine = _qemu_from_yaml(qemu) if qemu else None
        ram_bytes = int(entry["ram_bytes"])
        return Board(
            name=name,
            cpu=get_cpu(entry["cpu"]),
            clock_hz=int(entry["clock_hz"]),
            flash_bytes=int(entry["flash_bytes"]),
            ram_bytes=ram_bytes,
            console=str(entry["console"]),
            qemu=qemu_machine,
            usb_vid_pid=entry.get("usb_vid_pid"),
            runners=tuple(entry.get("runners", ())),
            pyocd_target=entry.get("pyocd_target"),
            timestamp_gpio=entry.get("timestamp_gpio"),
            aliases=tuple(entry.get("aliases", ())),
            zephyr_modules=tuple(entry.get("zephyr_modules", ())),
            zephyr_selects=tuple((symbol, tuple(selects)) for symbol, selects in entry.get("zephyr_selects", {}).items()),
            zephyr_config=tuple((symbol, str(value)) for symbol, value in entry.get("zephyr_config", {}).items()),
            ram_regions=_ram_regions_from_yaml(entry.get("ram_regions"), ram_bytes, qemu_machine),
            in_zephyr=bool(entry.get("in_zephyr", True)),
            memory_timing=memory_timing_from_yaml(entry.get("memory_timing")),
            code_ram=_code_ram_from_yaml(entry.get("code_ram")),
        )
    except (KeyError, TypeError, ValueError) as err:
        raise MtkError(f"{BOARDS_FILE}: board '{name}' is malformed ({err!r})") from err


def _ram_regions_from_yaml(entries: list[dict[str, Any]] | None, ram_bytes: int,
                          qemu: QemuMachine | None) -> tuple[RamRegion, ...]:
    """The board's RAM regions; without a list, one system region "RAM" of ram_bytes."""
    if not entries:
        return (RamRegion("RAM", qemu.ram.base if qemu else None, ram_bytes, system=True),)
    regions = tuple(RamRegion(identifier_read_back(e["name"], "RAM region"), int(e["base"]), int(e["size"]),
                              bool(e.get("system", False)), bool(e.get("tcm", False)), _node_label(e))
                    for e in entries)
    systems = [r for r in regions if r.system]
    if len(systems) != 1:
        raise ValueError("ram_regions need exactly one system region")
    if sum(r.size for r in regions) != ram_bytes:
        raise ValueError(f"ram_regions add up to {sum(r.size for r in regions):#x}, ram_bytes is {ram_bytes:#x}")
    if qemu and (qemu.ram.base, qemu.ram.size) != (systems[0].base, systems[0].size):
        raise ValueError("the system region is not where QEMU's firmware links its RAM (qemu.ram)")
    return regions


def _code_ram_from_yaml(entry: dict[str, Any] | None) -> CodeRam | None:
    if entry is None:
        return None
    return CodeRam(int(entry["base"]), int(entry["size"]), str(entry.get("source", "")), _node_label(entry))


def _node_label(entry: dict[str, Any]) -> str | None:
    """A region's `zephyr_node`, which the application's devicetree overlay names as it is: a C identifier."""
    label = entry.get("zephyr_node")
    return None if label is None else identifier_read_back(label, "devicetree node label")


def _qemu_from_yaml(entry: dict[str, Any]) -> QemuMachine:
    kind = entry["uart"]["kind"]
    if kind not in UART_KINDS:
        raise ValueError(f"UART kind '{kind}' is not one of {UART_KINDS}")
    return QemuMachine(
        machine=entry["machine"],
        code=MemoryRegion(**entry["code"]),
        ram=MemoryRegion(**entry["ram"]),
        uart_kind=kind,
        uart_base=int(entry["uart"]["base"]),
        timer_hz=int(entry["timer_hz"]),
        zephyr_timer_hz=int(entry["zephyr_timer_hz"]) if "zephyr_timer_hz" in entry else None,
    )


@lru_cache(maxsize=1)
def _entries() -> dict[str, dict[str, Any]]:
    with open(BOARDS_FILE, encoding="utf-8") as f:
        return yaml.safe_load(f)["boards"]


@lru_cache(maxsize=1)
def _registry() -> dict[str, Board]:
    return {name: _board_from_yaml(name, entry) for name, entry in _entries().items() if "cpu" in entry}


def _overridden(board: Board) -> Board:
    """A board read from the Zephyr workspace with what boards.yaml's entry without `cpu` gives for it
    (a measured clock, the probe's USB ids, ...)."""
    entry = _entries().get(board.name)
    if entry is None or "cpu" in entry:
        return board
    unknown = set(entry) - set(OVERRIDES)
    if unknown:
        raise MtkError(f"{BOARDS_FILE}: board '{board.name}' overrides {', '.join(sorted(unknown))}, which mtk reads "
                       f"from Zephyr (an entry without `cpu` may give {', '.join(OVERRIDES)})")
    return dataclasses.replace(board, **{key: OVERRIDES[key](value) for key, value in entry.items()})


@lru_cache(maxsize=1)
def _names() -> dict[str, str]:
    """Every accepted spelling (lower case) -> board name."""
    names: dict[str, str] = {}
    for board in _registry().values():
        for spelling in (board.name, *board.aliases):
            names[spelling.lower()] = board.name
            names[spelling.lower().replace("/", "_")] = board.name
    return names


def all_boards() -> list[Board]:
    return list(_registry().values())


def find_board(name: str) -> Board | None:
    """The board called `name` (its Zephyr name or an alias such as "mps2_an386"), or None."""
    key = _names().get(name.strip().lower())
    return None if key is None else _registry()[key]


def get_board(name: str) -> Board:
    """The board called `name`: one of boards.yaml (its Zephyr name or an alias such as "mps2_an386"),
    else any Cortex-M board of the user's Zephyr workspace (zephyr_boards), qualifiers included."""
    key = _names().get(name.strip().lower())
    if key is not None:
        return _registry()[key]
    from .zephyr_boards import NoWorkspace, zephyr_board   # it builds on this module
    try:
        return _overridden(zephyr_board(name.strip()))
    except NoWorkspace:
        close = dict.fromkeys(_names()[k] for k in difflib.get_close_matches(name.strip().lower(), _names(), n=3))
        raise MtkError(f"unknown board '{name}'" + did_you_mean(list(close)),
                       hint=f"mtk's boards: {', '.join(_registry())}; any other Cortex-M board of a Zephyr "
                            "workspace once ZEPHYR_BASE is set to its zephyr/ tree") from None


def require_clock(board: Board) -> Board:
    """`board`, if mtk knows its clock: run and bench turn its cycle counts into time."""
    if board.clock_hz <= 0:
        raise MtkError(f"{board.name}: its devicetree gives no CPU clock, so mtk cannot turn its cycle counts into "
                       "time", hint=f"give it in board_templates/boards.yaml: '{board.name}: {{clock_hz: HZ}}'")
    return board


def did_you_mean(candidates: list[str]) -> str:
    """"; did you mean X?" (or "X or Y?"), empty without candidates."""
    return f"; did you mean {' or '.join(candidates)}?" if candidates else ""


def boards_that_fit(flash_bytes: int, ram_bytes: int) -> list[Board]:
    return [b for b in all_boards() if b.flash_bytes >= flash_bytes and b.ram_bytes >= ram_bytes]


def fitting_boards_hint(flash_bytes: int, ram_bytes: int) -> str:
    """Which boards have room for `flash_bytes` of flash and `ram_bytes` of RAM, for an error's hint."""
    fitting = boards_that_fit(flash_bytes, ram_bytes)
    if not fitting:
        return "no board mtk knows has that much flash and RAM (`mtk boards`)"
    return "it fits " + ", ".join(f"{b.name} ({b.flash_bytes // 1024:,} KB flash, {b.ram_bytes // 1024:,} KB RAM)"
                                  for b in fitting)
