"""A cycle model for one QEMU run: the core's table, the memory timing over the firmware's address
ranges, the clock the estimate is for; the plugin's arguments for a firmware ELF, and its records."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from elftools.common.exceptions import ELFError
from elftools.elf.elffile import ELFFile
from elftools.elf.sections import SymbolTableSection

from ..errors import TargetError
from .memory import MemoryTiming, plugin_lines
from .plugin import ensure_plugin
from .tables import CoreTable, core_table

RUN_SYMBOL = "run"                   # model_glue.c's function: one inference
HOOK_SYMBOL = "mtk_layer_hook"       # profiling builds: called after each layer
LAYERS_SYMBOL = "layer_cycles"       # ... which stores into this array at the layer's index
PUTC_SYMBOL = "mtk_port_putc"        # writes one console byte into the UART's data register
UART_DATA_OFFSET = {"cmsdk": 0x0, "pl011": 0x0, "nrf51": 0x51C}   # that register, from the UART's base
UNIT = "cycles (estimated)"


@dataclass(frozen=True)
class CycleModel:
    table: CoreTable
    clock_hz: int
    memory: tuple[MemoryTiming, ...] = ()
    ranges: tuple[tuple[str, int, int], ...] = ()   # (role, base, size): where the firmware puts flash/ram
    label: str = ""                                   # the board the estimate is for
    run_symbols: tuple[str, ...] = (RUN_SYMBOL,)      # the functions whose calls are measured (the first present)
    uart_data: int | None = None                      # the console's data register: records count its bytes

    @classmethod
    def for_board(cls, board, emulated=None) -> CycleModel:
        """The model of `emulated` (a board with timing, run on `board`'s QEMU machine) or of `board`."""
        target = emulated or board
        ranges = () if board.qemu is None else (("flash", board.qemu.code.base, board.qemu.code.size),
                                                ("ram", board.qemu.ram.base, board.qemu.ram.size))
        uart = None if board.qemu is None else board.qemu.uart_base + UART_DATA_OFFSET[board.qemu.uart_kind]
        return cls(core_table(target.cpu.name), target.clock_hz, target.memory_timing, ranges, target.name,
                   uart_data=uart)

    def table_text(self) -> str:
        by_role: dict[str, list[tuple[int, int]]] = {}
        for role, base, size in self.ranges:
            by_role.setdefault(role, []).append((base, size))
        return "\n".join([*self.table.lines(), *plugin_lines(self.memory, by_role)]) + "\n"

    def plugin_argument(self, elf: Path, table: Path, out: Path) -> str:
        """`-plugin` value: the plugin, its table and output, the ELF's measurement points."""
        table.write_text(self.table_text(), encoding="utf-8")
        args = [_escaped(ensure_plugin()), f"table={_escaped(table)}", f"out={_escaped(out)}"]
        symbols = elf_symbols(elf, (*self.run_symbols, HOOK_SYMBOL, LAYERS_SYMBOL, PUTC_SYMBOL))
        run = next((symbols[name] for name in self.run_symbols if name in symbols), None)
        if run is not None:
            args.append(f"run={run[0] & ~1:#x}")
        if HOOK_SYMBOL in symbols and LAYERS_SYMBOL in symbols:
            hook, layers = symbols[HOOK_SYMBOL], symbols[LAYERS_SYMBOL]
            args += [f"hook={hook[0] & ~1:#x}:{hook[1]}", f"layers={layers[0]:#x}:{layers[1] // 4}"]
        if PUTC_SYMBOL in symbols and self.uart_data is not None:
            putc = symbols[PUTC_SYMBOL]
            args += [f"putc={putc[0] & ~1:#x}:{putc[1]}", f"uart={self.uart_data:#x}"]
        return ",".join(args)


def _escaped(path: Path) -> str:
    """A path inside a QEMU option value (where a comma is written twice)."""
    return str(path).replace(",", ",,")


def elf_symbols(elf: Path, names: tuple[str, ...]) -> dict[str, tuple[int, int]]:
    """name -> (address, size) of the ELF's symbols of those names (functions and objects)."""
    found: dict[str, tuple[int, int]] = {}
    try:
        with open(elf, "rb") as f:
            for section in ELFFile(f).iter_sections():
                if not isinstance(section, SymbolTableSection):
                    continue
                for symbol in section.iter_symbols():
                    if symbol.name in names and symbol["st_info"]["type"] in ("STT_FUNC", "STT_OBJECT"):
                        found.setdefault(symbol.name, (symbol["st_value"], symbol["st_size"]))
    except (OSError, ELFError) as err:
        raise TargetError(f"cannot read the symbols of {elf}: {err}") from err
    return found


@dataclass(frozen=True)
class Measured:
    insns: int
    cycles: int
    fetch_waits: int = 0   # of the cycles, those code fetches waited for their memory (flash, QSPI, cache misses)
    data_waits: int = 0    # ... and those loads waited
    uart_bytes: int = 0    # console bytes the firmware had written when it ended


class CycleTrace:
    """The plugin's records as QEMU writes them (each line flushed before the firmware answers)."""

    def __init__(self, path: Path, model: CycleModel):
        self.path = path
        self.model = model
        self._offset = 0
        self._inferences: list[Measured] = []
        self._pending: dict[int, Measured] = {}
        self._layers: dict[int, Measured] = {}   # of the last whole inference

    def _read(self) -> None:
        if not self.path.exists():
            return
        with open(self.path, "rb") as f:
            f.seek(self._offset)
            data = f.read()
        whole = data[:data.rfind(b"\n") + 1]
        self._offset += len(whole)
        for line in whole.decode().splitlines():
            kind, first, *figures = line.split()
            if kind == "layer":
                self._pending[int(first)] = Measured(*(int(v) for v in figures))
            elif kind == "inference":
                self._inferences.append(Measured(*(int(v) for v in figures)))
                self._layers, self._pending = self._pending, {}

    def take_inferences(self, until_uart: int | None = None) -> list[Measured]:
        """The inferences measured since the last call (that ended before the console's `until_uart`-th byte)."""
        self._read()
        count = len(self._inferences) if until_uart is None else \
            next((k for k, m in enumerate(self._inferences) if m.uart_bytes > until_uart), len(self._inferences))
        taken, self._inferences = self._inferences[:count], self._inferences[count:]
        return taken

    def last_layers(self) -> dict[int, Measured]:
        """op index -> that layer's figures in the last whole inference (profiling builds)."""
        self._read()
        return dict(self._layers)


def median(values: list[int]) -> int:
    """The firmware's median: the lower and upper middle's mean, rounded down."""
    ordered = sorted(values)
    lo, hi = ordered[(len(ordered) - 1) // 2], ordered[len(ordered) // 2]
    return lo + (hi - lo) // 2

