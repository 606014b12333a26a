"""Any Cortex-M board of the user's Zephyr workspace, as a Board, described from Zephyr's own files
read with Zephyr's own Python from the user's tree (its targets: zephyr_workspace):

- the board's devicetree, preprocessed as Zephyr's dts.cmake does and read with edtlib
  (`scripts/dts/python-devicetree`): the CPU, its clock, the console, the chosen SRAM and the other
  RAM regions a linker section can be placed in;
- the board's and SoC's Kconfig, read with kconfiglib (`scripts/kconfig`): what the SoC selects for
  the core (CPU_HAS_FPU, ARMV8_M_DSP, ARMV8_1_M_MVEI), which sets the compiler flags Zephyr builds with;
- the twister YAML beside the devicetree: the flash (KB) the board's applications may use;
- `board.cmake`: the flash runners it includes from boards/common, preferred first.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import subprocess
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Iterator

import yaml

from .boards import Board, RamRegion, get_board
from .errors import MtkError, ToolMissing
from .names import identifier_read_back
from .target import CPUS
from .zephyr_env import find_base
from .zephyr_workspace import ListedBoard, Target, Workspace, find_target, listed_boards, soc_dirs, tree_modules, workspace

# devicetree CPU compatible -> mtk's core (target.CPUS); whether it has an FPU, DSP or MVE is Kconfig's
CORES = {"arm,cortex-m0": "cortex-m0", "arm,cortex-m0+": "cortex-m0plus", "arm,cortex-m3": "cortex-m3",
         "arm,cortex-m4": "cortex-m4", "arm,cortex-m4f": "cortex-m4", "arm,cortex-m7": "cortex-m7",
         "arm,cortex-m33": "cortex-m33", "arm,cortex-m33f": "cortex-m33",
         "arm,cortex-m55": "cortex-m55", "arm,cortex-m55f": "cortex-m55"}
# Where Zephyr's devicetrees give the clock the core runs at when the CPU node does not: the
# clock controller's output (STM32's RCC node, the RP2040/RP2350's clk_sys)
CORE_CLOCK_LABELS = ("rcc", "clk_sys")
DTS_INCLUDE_DIRS = ("include", "include/zephyr", "dts/common", "dts/vendor", "dts/arm", "dts")
PREPROCESSORS = ("arm-none-eabi-gcc", "gcc", "cpp")
TCM_COMPATIBLES = re.compile(r".*[,-]dtcm$")
RUNNER_INCLUDE = re.compile(r"^\s*include\s*\(\s*(\S+\.board\.cmake)\s*\)", re.M)
RUNNER_FINALIZED = re.compile(r"^\s*board_finalize_runner_args\s*\(\s*([\w-]+)", re.M)


def twister_entry(target: Target) -> dict:
    """The twister YAML describing `target` (beside its devicetree, its `identifier` the target's), or {}."""
    for folder in target.board.dirs:
        for stem in target.file_stems:
            path = folder / f"{stem}.yaml"
            try:
                entry = yaml.safe_load(path.read_text()) if path.is_file() else None
            except yaml.YAMLError as err:
                raise MtkError(f"board '{target.identifier}': {path} is not YAML ({err.__class__.__name__})") from None
            named = re.sub(r"@[^/]*", "", str(entry.get("identifier"))) if isinstance(entry, dict) else None
            if named in target.twister_identifiers:   # the default revision's file names its revision
                return entry
    return {}


def devicetree_source(target: Target) -> Path:
    for stem in target.file_stems:
        for folder in target.board.dirs:
            if (folder / f"{stem}.dts").is_file():
                return folder / f"{stem}.dts"
    raise MtkError(f"board '{target.identifier}' has no devicetree ({' or '.join(s + '.dts' for s in target.file_stems)} "
                   f"in {target.board.dirs[0]})")


def read_devicetree(ws: Workspace, target: Target):
    """The target's devicetree (edtlib.EDT), its source preprocessed as Zephyr's dts.cmake does."""
    source = devicetree_source(target)
    roots = [*target.board.dirs, *ws.roots["dts"]]
    includes = [arg for root in roots for d in DTS_INCLUDE_DIRS if (root / d).is_dir() for arg in ("-I", str(root / d))]
    cpp = next((shutil.which(p) for p in PREPROCESSORS if shutil.which(p)), None)
    if cpp is None:
        raise ToolMissing("no C preprocessor to read Zephyr devicetrees with (arm-none-eabi-gcc, gcc or cpp)",
                          hint="apt-get install gcc-arm-none-eabi")
    bindings = [str(root / "dts" / "bindings") for root in roots if (root / "dts" / "bindings").is_dir()]
    with tempfile.TemporaryDirectory(prefix="mtk-dts-") as tmp:
        preprocessed = Path(tmp) / "zephyr.dts.pre"
        result = subprocess.run([cpp, "-x", "assembler-with-cpp", "-nostdinc", "-undef", *includes, "-D__DTS__",
                                 "-E", "-o", str(preprocessed), str(source)], capture_output=True, text=True)
        if result.returncode != 0:
            lines = result.stderr.strip().splitlines() or ["?"]
            raise MtkError(f"cannot preprocess the devicetree of '{target.identifier}' ({source}): "
                           + next((line for line in lines if "error" in line), lines[0]),
                           hint="is every module it needs in the workspace (`west update`)?")
        with tree_modules(ws.base, ("devicetree.edtlib", "dts/python-devicetree/src")) as (edtlib,):
            try:
                return edtlib.EDT(str(preprocessed), bindings, warn_reg_unit_address_mismatch=False)
            except edtlib.EDTError as err:
                raise MtkError(f"the devicetree of '{target.identifier}' ({source}): {err}") from None


def kconfig_selected(ws: Workspace, target: Target) -> set[str]:
    """The Kconfig symbols the target's board and SoC select, conditions decided from the selected ones
    (a condition no select decides, such as a comparison, counts as false)."""
    files = [ws.base / "Kconfig.constants",   # the macros Kconfig files use ($(UINT8_MAX))
             *(d / f"Kconfig.{target.board.name}" for d in target.board.dirs),
             *(d / name for d in soc_dirs(ws).get(target.soc, ()) for name in ("Kconfig.soc", "Kconfig"))]
    with tempfile.TemporaryDirectory(prefix="mtk-kconfig-") as tmp, \
            tree_modules(ws.base, ("kconfiglib", "kconfig")) as (kconfiglib,):
        top = Path(tmp) / "Kconfig"
        top.write_text("".join(f'osource "{f}"\n' for f in files if f.is_file()))
        saved = {k: os.environ.get(k) for k in ("srctree", "ZEPHYR_BASE")}
        os.environ.update(srctree=str(ws.base), ZEPHYR_BASE=str(ws.base))
        try:
            kconf = kconfiglib.Kconfig(str(top), warn=False)
        except kconfiglib.KconfigError as err:
            raise MtkError(f"cannot read the Kconfig of '{target.identifier}': {str(err).splitlines()[0]}") from None
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value

        def holds(expr) -> bool:
            if isinstance(expr, tuple):
                if expr[0] == kconfiglib.AND:
                    return holds(expr[1]) and holds(expr[2])
                if expr[0] == kconfiglib.OR:
                    return holds(expr[1]) or holds(expr[2])
                if expr[0] == kconfiglib.NOT:
                    return not holds(expr[1])
                return False
            return expr is kconf.y or expr.name in selected

        selected = set(target.kconfig_symbols)
        grown = True
        while grown:
            grown = False
            for name in list(selected):
                for chosen, condition in getattr(kconf.syms.get(name), "selects", ()):
                    if chosen.name not in selected and holds(condition):
                        selected.add(chosen.name)
                        grown = True
        return selected


class NotCortexM(MtkError):
    pass


def cpu_node(edt):
    """The devicetree's first CPU (the one the build runs on), None if it has no /cpus."""
    return next((n for n in edt.nodes if n.parent is not None and n.parent.path == "/cpus" and n.compats), None)


def core_of(target: Target, edt, selected: set[str]):
    """The target's core (a target.Cpu) with the extensions Zephyr builds for."""
    cpu = cpu_node(edt)
    if cpu is None:
        raise NotCortexM(f"board '{target.identifier}': its devicetree has no CPU under /cpus, so no Cortex-M")
    compatible = cpu.compats[0]
    if compatible not in CORES:
        kind = "a Cortex-M mtk has no kernels for" if compatible.startswith("arm,cortex-m") else "not a Cortex-M"
        raise NotCortexM(f"board '{target.identifier}': its CPU ({compatible}) is {kind}: mtk builds for "
                         f"{', '.join(dict.fromkeys(CORES.values()))}")
    core = CPUS[CORES[compatible]]
    features = {"fpu": core.fpu if "CPU_HAS_FPU" in selected else None,
                "dsp": ("ARMV8_M_DSP" in selected) if core.arch.startswith("armv8") else core.dsp,
                "mve": core.mve and "ARMV8_1_M_MVEI" in selected}
    named = [c for c in CPUS.values() if c.name.partition("+")[0] == core.name   # e.g. cortex-m33+nodsp+nofp
             and (c.fpu, c.dsp, c.mve) == tuple(features.values())]
    return named[0] if named else dataclasses.replace(core, **features)


def core_clock(edt) -> int:
    """The core's clock in Hz from the devicetree, 0 if it does not say."""
    candidates = [cpu_node(edt), *(edt.label2node.get(label) for label in CORE_CLOCK_LABELS)]
    for node in candidates:
        value = node.props["clock-frequency"].val if node is not None and "clock-frequency" in node.props else None
        if isinstance(value, int):
            return value
    return 0


def ram_regions(target: Target, edt) -> tuple[RamRegion, ...]:
    """The chosen SRAM (the system region) and the RAM regions Zephyr's linker can place a section in
    (nodes with a zephyr,memory-region name and no memory attributes: not external, I/O or uncached);
    tightly coupled ones first."""
    sram = edt.chosen_node("zephyr,sram")
    if sram is None or not sram.regs:
        raise MtkError(f"board '{target.identifier}': its devicetree chooses no zephyr,sram")
    system = RamRegion(_linker_name(target, sram) if _region_name(sram) else "RAM", sram.regs[0].addr,
                       sram.regs[0].size, system=True, tcm=_is_tcm(sram))
    low, high = system.base, system.base + system.size
    others = [RamRegion(_linker_name(target, n), n.regs[0].addr, n.regs[0].size, tcm=_is_tcm(n))
              for n in edt.nodes
              if n is not sram and n.status == "okay" and n.regs and _region_name(n)
              and "zephyr,memory-attr" not in n.props and ("mmio-sram" in n.compats or _is_tcm(n))
              and not (n.regs[0].addr < high and low < n.regs[0].addr + n.regs[0].size)]
    return tuple(sorted([system, *others], key=lambda r: (not r.tcm, not r.system, r.base)))


def _region_name(node) -> str | None:
    prop = node.props.get("zephyr,memory-region")
    return str(prop.val) if prop is not None else None


def _linker_name(target: Target, node) -> str:
    """The node's zephyr,memory-region, which the generated C, linker snippets and CMake name sections and
    symbols after: MtkError if it is not a C identifier (Zephyr's own linker script takes it as a token)."""
    try:
        return identifier_read_back(_region_name(node), "its RAM region")
    except ValueError as err:
        raise MtkError(f"board '{target.identifier}': {node.path}: {err}") from None


def _is_tcm(node) -> bool:
    return any(TCM_COMPATIBLES.fullmatch(c) for c in node.compats)


def flash_bytes(target: Target, edt, twister: dict) -> int:
    """What the board's applications may use: the twister YAML's flash, else the size of the chosen
    zephyr,flash, else of the zephyr,code-partition (an external flash whose size is the chip's)."""
    if isinstance(twister.get("flash"), int):
        return twister["flash"] * 1024
    for chosen in ("zephyr,flash", "zephyr,code-partition"):
        node = edt.chosen_node(chosen)
        if node is not None and node.regs and node.regs[0].size:
            return node.regs[0].size
    raise MtkError(f"board '{target.identifier}': neither its twister YAML nor its devicetree (zephyr,flash, "
                   "zephyr,code-partition) gives the size of its flash")


def flash_runners(board: ListedBoard, base: Path) -> tuple[str, ...]:
    """The runners board.cmake finalizes, itself or through the boards/common files it includes; the
    first one included is west flash's default."""
    def runners_in(path: Path, depth: int = 0) -> list[str]:
        try:
            text = re.sub(r"#.*", "", path.read_text())
        except OSError:
            return []
        found = RUNNER_FINALIZED.findall(text)
        for include in RUNNER_INCLUDE.findall(text):
            resolved = include.replace("${ZEPHYR_BASE}", str(base)).replace("${BOARD_DIR}", str(path.parent))
            if depth < 2:
                found += runners_in(Path(resolved), depth + 1)
        return found
    return tuple(dict.fromkeys(r for d in board.dirs for r in runners_in(d / "board.cmake")))


def console_label(target: Target, edt) -> str:
    console = edt.chosen_node("zephyr,console")
    if console is None or not console.labels:
        raise MtkError(f"board '{target.identifier}': its devicetree chooses no zephyr,console UART with a label "
                       "(mtk's firmware talks over the console)")
    return console.labels[0]


def describe(target: Target) -> Board:
    ws = workspace()
    twister = twister_entry(target)
    if twister.get("arch") not in (None, "arm"):
        raise NotCortexM(f"board '{target.identifier}' is a Zephyr {twister['arch']} board, not a Cortex-M: "
                         f"mtk builds for {', '.join(dict.fromkeys(CORES.values()))}")
    edt = read_devicetree(ws, target)
    cpu = core_of(target, edt, kconfig_selected(ws, target))
    regions = ram_regions(target, edt)
    return Board(name=target.identifier, cpu=cpu, clock_hz=core_clock(edt),
                 flash_bytes=flash_bytes(target, edt, twister), ram_bytes=sum(r.size for r in regions),
                 console=console_label(target, edt), runners=flash_runners(target.board, ws.base),
                 ram_regions=regions)


@lru_cache(maxsize=32)
def _zephyr_board(base: Path, identifier: str) -> Board:
    return describe(find_target(identifier))


class NoWorkspace(MtkError):
    """No Zephyr workspace to look a board up in."""


def zephyr_board(identifier: str) -> Board:
    """The board `identifier` of the Zephyr workspace mtk finds; NoWorkspace if it finds none."""
    try:
        base = find_base()
    except ToolMissing as err:
        raise NoWorkspace(err.message, hint=err.hint) from None
    return _zephyr_board(base, identifier)


def zephyr_boards(pattern: str = "") -> Iterator[Board | MtkError]:
    """The Cortex-M targets of the workspace whose identifier holds `pattern`, each as --board takes it
    (boards.yaml's entry where it has one), or the error that kept it from being read; other
    architectures are left out."""
    for board in sorted(listed_boards().values(), key=lambda b: b.name):
        for identifier in board.targets:
            if pattern.lower() not in identifier.lower():
                continue
            try:
                yield get_board(identifier)
            except NotCortexM:
                continue
            except MtkError as err:
                yield err
