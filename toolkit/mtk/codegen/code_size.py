"""The generated C's code size and deepest stack use on the target (arm-none-eabi-gcc -O2), when that
compiler is here."""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from .. import interrupts
from ..errors import InternalError
from ..target import Cpu
from .stack_bound import call_graph, deepest_stack


@dataclass(frozen=True)
class CodeMeasure:
    code_bytes: int | None    # .text; None without the compiler
    stack_bytes: int | None   # the heaviest call chain from its entry points (stack_bound.py); None: unbounded
    function_bytes: dict[str, int] = field(default_factory=dict)   # .text of each function (static ones too)
    calls: dict[str, set[str]] = field(default_factory=dict)       # gcc's call graph: the functions each calls

    def own_code(self, entries: dict[Hashable, Iterable[str]],
                 kinds: dict[Hashable, Hashable] | None = None) -> dict[Hashable, int] | None:
        """Per owner of `entries` (its entry functions), the .text of the functions its entries reach and no owner
        of another kind does (`kinds`: each owner's, default its own): the code it would take alone (a kernel
        only owners of its kind call is each one's; one that others call too is none's). None without the
        compiler."""
        if self.code_bytes is None:
            return None
        kinds = kinds or {owner: owner for owner in entries}
        reach = {owner: self._reached(functions) for owner, functions in entries.items()}
        callers: dict[str, set[Hashable]] = {}
        for owner, reached in reach.items():
            for f in reached:
                callers.setdefault(f, set()).add(kinds[owner])
        return {owner: sum(self.function_bytes.get(f, 0) for f in reached if len(callers[f]) == 1)
                for owner, reached in reach.items()}

    def _reached(self, functions: Iterable[str]) -> set[str]:
        todo, seen = list(functions), set()
        while todo:
            f = todo.pop()
            if f not in seen:
                seen.add(f)
                todo.extend(self.calls.get(f, ()))
        return seen


NO_COMPILER = CodeMeasure(None, None)


def measure_code(files: dict[str, str], cpu: Cpu, entry_prefix: str) -> CodeMeasure:
    """.text and deepest stack use of the .c files among `files` (relative path -> text) built for `cpu`,
    from the functions named `entry_prefix`... that the files do not call themselves."""
    gcc = shutil.which("arm-none-eabi-gcc")
    size = shutil.which("arm-none-eabi-size")
    if not gcc or not size:
        return NO_COMPILER
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        objs = []
        for rel, text in files.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text)
        for rel in files:
            if rel.endswith(".c"):
                obj = root / (Path(rel).stem + ".o")
                cmd = [gcc, *cpu.gcc_flags, "-O2", "-pipe", "-ffunction-sections", "-fdata-sections",
                       "-fcallgraph-info=su", "-I", str(root / "include"), "-c", str(root / rel), "-o", str(obj)]
                with interrupts.child_group(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                            errors="replace") as built:
                    output, _ = built.communicate()
                if built.returncode != 0:   # mtk wrote C that does not build: a bug, not "no compiler"
                    first = next((line for line in output.splitlines() if "error" in line), output.strip())
                    raise InternalError(f"the generated {rel} does not build with arm-none-eabi-gcc: {first}")
                objs.append(str(obj))
        out = subprocess.run([size, "-A", *objs], capture_output=True, text=True).stdout
        graphs = [Path(obj).with_suffix(".ci").read_text() for obj in objs]
    sections = re.findall(r"^\.text(\S*)\s+(\d+)", out, re.M)
    # -ffunction-sections: a section .text.<name> a function
    functions = {name.removeprefix("."): int(n) for name, n in sections if name}
    calls = {_plain(caller): {_plain(f) for f in callees} for caller, callees in call_graph(graphs)[1].items()}
    return CodeMeasure(sum(int(n) for _, n in sections), deepest_stack(graphs, entry_prefix), functions, calls)


def _plain(title: str) -> str:
    """A function's name as its section has it: gcc's call graph names a static one `<file>:<name>`."""
    return title.rsplit(":", 1)[-1]
