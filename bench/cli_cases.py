"""CLI fuzz cases of the outside-strings kind for `fuzz_campaign.py --cli-inputs`:

  names       model file names, tensor names and --module-name with newlines, `$(...)`, CMake and Jinja
              syntax, quotes, keywords and C library macros: `mtk compile` must build C whose build
              fragments run nothing (make -n and cmake configure on some), `mtk project` likewise
  strings     arguments that land in generated files: zephyr-manifest --revision, ports
              --labgrid-exporter NAME, --board
  records     files mtk reads back from disk, mutated: a project's mtk-project.json (paths outside,
              `..`, absolute, symlinks, types, sizes), a compiled folder's metadata.json, a tuning JSON
  aliases     an output path that is an input (same name, `./`, `..`, absolute, symlink, hard link, a
              symlinked folder) for every command with an output
  urls        --lab labgrid://... forms
  numbers     numeric options at and past their ranges

Each case runs `python -m mtk ...` in a folder of its own and passes if it exits 0 or 2 (or the other
codes the case allows), prints no traceback, ends within the timeout, leaves every input byte for
byte as it was and (names/records) writes nothing outside its output that runs or escapes.

Most of a fresh `python -m mtk` is its imports (TVM, numpy: about 1 s of a tiny model's 1.4 s
compile), the same for every case; `ForkedMtk` pays them once: each case is a process forked from
one that imported mtk, running mtk's `__main__` as `python -m mtk` does, with its own stdio, folder,
process group and exit status (`fresh_mtk` starts a new interpreter each time). What a case mutates
is never reused: a project whose record is mutated is rendered once per board and copied.
"""

from __future__ import annotations

import atexit
import dataclasses
import hashlib
import importlib
import json
import os
import pkgutil
import random
import re
import runpy
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
import weakref
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
FAKE = ROOT / "tests" / "fixtures" / "fake_compiled"
MARK = "INJECTED"
PIECES = ["\n", "\r", "$(shell touch INJECTED)", "file(TOUCH INJECTED)", "`touch INJECTED`", "${INJECTED}",
          '"', "'", ";", "*/", "/*", "??/", "#", "#[[", "]]", "{{ 7*7 }}", "{% if 1 %}INJECTED{% endif %}",
          "\\", " ", "\t", "é", "\x7f", "..", "-", "CONFIG_MAIN_STACK_SIZE", "errno", "linux", "class", "state",
          "INJECTED", "a" * 120, "\u202e", "%s", "$", "&&", "|"]
ALLOWED = frozenset({0, 2})
RUNNABLE = ("$(shell", "file(TOUCH", "`touch", "${INJECTED}", "{{", "{%")   # the pieces that would run
C_DIRECTIVE = re.compile(r'#\s*(include\s+["<][\w./-]+[">]|(define\s+(TVMGEN|MTK|tvmgen|mtk)_\w*|if|ifdef|ifndef|elif|else|endif|pragma\s+once)\b)')


@dataclasses.dataclass
class Case:
    family: str
    argv: list[str]
    inputs: list[Path]                        # byte for byte the same afterwards (a folder: every file in it)
    allowed: frozenset[int] = ALLOWED
    check: Callable[[], str | None] | None = None   # after the run: None, or what went wrong
    describe: str = ""


def hostile(rng: random.Random, parts: int = 3, file_name: bool = False) -> str:
    text = "".join(rng.choice(PIECES) for _ in range(rng.randint(1, parts)))
    if file_name:
        text = text.replace("/", "_").replace("\0", "_")[:200] or "x"
    return text


def tiny_model(names: tuple[str, str, str]) -> bytes:
    """ADD of two int8 [1, 4] inputs: compiled in a second."""
    sys.path.insert(0, str(ROOT / "toolkit"))
    from mtk.tflite_builder import ModelBuilder
    builder = ModelBuilder()
    a = builder.tensor(names[0], (1, 4), "int8", scale=0.1, zero_point=0)
    b = builder.tensor(names[1], (1, 4), "int8", scale=0.1, zero_point=0)
    y = builder.tensor(names[2], (1, 4), "int8", scale=0.2, zero_point=0)
    builder.op("ADD", [a, b], [y])
    builder.inputs([a, b])
    builder.outputs([y])
    return builder.build()


def snapshot(paths: list[Path]) -> dict[str, str]:
    """sha256 of every file of `paths` (folders: recursively), by path."""
    found = {}
    for p in paths:
        files = [p] if p.is_file() else sorted(f for f in p.rglob("*") if f.is_file() and not f.is_symlink())
        for f in files:
            found[str(f)] = hashlib.sha256(f.read_bytes()).hexdigest()
    return found


def injection_in(folder: Path) -> str | None:
    """A generated file of `folder` where the marker stands outside a comment, or a JSON that does not parse."""
    for f in sorted(folder.rglob("*")):
        if not f.is_file() or f.is_symlink():
            continue
        text = f.read_text(errors="replace")
        if f.suffix == ".json":
            try:
                json.loads(text)
            except ValueError as err:
                return f"{f.name} is no JSON: {err}"
            continue
        if f.suffix in (".c", ".h") and f.name.startswith("tvmgen_") and not f.stem.endswith("_kernels"):
            code = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
            directives = [line for line in code.splitlines() if line.lstrip().startswith("#")
                          and not C_DIRECTIVE.match(line.strip())]
            if directives:
                return f"{f.name}: a directive mtk does not write: {directives[0][:80]!r}"
        elif f.name in ("CMakeLists.txt", "Kconfig", "prj.conf", "Makefile", "linker.ld") or f.suffix in (".mk", ".conf", ".overlay"):
            bad = [line for line in text.splitlines() if any(p in line for p in RUNNABLE)
                   and not line.lstrip().startswith(("#", "/*", " *"))]
            if bad:
                return f"{f.name}: {bad[0][:80]!r}"
    return None


def build_fragments_run_nothing(work: Path, out: Path, rng: random.Random) -> str | None:
    there = set(work.rglob(MARK))   # a model may be named so: only what make or cmake creates counts
    if (out / "tvmgen_default.mk").exists() and shutil.which("make") and rng.random() < 0.3:
        subprocess.run(["make", "-n", "-f", str(out / "tvmgen_default.mk")], cwd=work, capture_output=True, timeout=60)
    if (out / "CMakeLists.txt").exists() and shutil.which("cmake") and rng.random() < 0.05:
        app = work / "cmake_app"
        app.mkdir(exist_ok=True)
        (app / "CMakeLists.txt").write_text(f"cmake_minimum_required(VERSION 3.13)\nproject(p C)\n"
                                           f"add_subdirectory(\"{out}\" lib)\n")
        subprocess.run(["cmake", "-S", str(app), "-B", str(app / "build")], capture_output=True, timeout=120)
    made = [p for p in work.rglob(MARK) if p not in there]
    if made:
        return f"a build fragment ran a command: {made[0]}"
    run_c = next(out.glob("src/tvmgen_*.c"), None)
    if run_c is not None and shutil.which("gcc") and rng.random() < 0.3:
        built = subprocess.run(["gcc", "-std=gnu11", "-fsyntax-only", "-Wall", "-Werror", "-I", str(out / "include"),
                                str(run_c)], capture_output=True, text=True, timeout=60)
        if built.returncode != 0:
            return f"the run source does not build with gcc -std=gnu11: {built.stderr.strip()[:200]}"
    return injection_in(out)


# ---- families ----------------------------------------------------------------------------------

def names_case(rng: random.Random, work: Path) -> Case:
    names = tuple(hostile(rng) for _ in range(3))
    if len({n for n in names}) < 3:
        names = (names[0] + "0", names[1] + "1", names[2] + "2")
    model = work / (hostile(rng, 2, file_name=True) + rng.choice([".tflite", "", ".TFLITE"]))
    if model.name.startswith("-"):
        model = work / ("m" + model.name)
    model.write_bytes(tiny_model(names))
    out = work / "out"
    argv = ["compile", str(model), "-o", str(out)]
    if rng.random() < 0.3:
        argv += ["--module-name", hostile(rng, 2)]
    if rng.random() < 0.2:
        argv += ["--format", "mlf", "-o", str(work / "m.tar")]
        return Case("names", argv, [model], describe=repr(model.name))
    return Case("names", argv, [model], check=lambda: build_fragments_run_nothing(work, out, rng),
                describe=f"{model.name!r} {names!r}")


def project_names_case(rng: random.Random, work: Path) -> Case:
    compiled = work / "compiled"
    shutil.copytree(FAKE, compiled)
    meta = json.loads((compiled / "metadata.json").read_text())
    meta["model"] = hostile(rng)
    meta["inputs"][0]["name"] = hostile(rng)
    if rng.random() < 0.3:
        meta["inputs"][0]["c_name"] = hostile(rng)   # read back: refused unless an identifier
    if rng.random() < 0.2:
        meta["module"] = hostile(rng)
    (compiled / "metadata.json").write_text(json.dumps(meta))
    app = work / hostile(rng, 1, file_name=True).replace(".", "_").lstrip("-") if rng.random() < 0.3 else work / "app"
    board = rng.choice(["qemu_cortex_m3", "mps2/an386", "nucleo_f746zg"])
    return Case("names", ["project", str(compiled), "--board", board, "-o", str(app)], [compiled],
                check=lambda: injection_in(app) if app.is_dir() else None, describe=repr(meta["model"]))


def strings_case(rng: random.Random, work: Path) -> Case:
    text = hostile(rng)
    argv = rng.choice([["zephyr-manifest", "--revision", text], ["ports", "--labgrid-exporter", text],
                       ["boards", "--board", text] if False else ["zephyr-manifest", "--board", text],
                       ["compile", str(work / "missing.tflite"), "-o", str(work / "o"), "--board", text]])

    def check() -> str | None:
        made = list(work.rglob(MARK))
        return f"made {made[0]}" if made else None
    return Case("strings", argv, [], check=check, describe=repr(text))


def _record_mutations(rng: random.Random, record: dict, outside: Path) -> dict:
    names = ["../victim.txt", str(outside), "src/../../victim.txt", "./x", "", "a//b", "up/victim.txt",
             "model/../../victim.txt", "a\nb", "x" * 300, "firmware", "src/main.c"]
    kind = rng.randrange(6)
    if kind == 0:
        record.setdefault("files", {})[rng.choice(names)] = hashlib.sha256(outside.read_bytes()).hexdigest()
    elif kind == 1:
        record.setdefault("owned", {})[rng.choice(names)] = rng.choice(["0" * 64, 5, None, "zz"])
    elif kind == 2:
        record[rng.choice(["files", "owned", "board", "platform", "model"])] = rng.choice(
            [[], {}, None, 7, "x", ["a"], {"a": "b"}, "nucleo_f746zg"])
    elif kind == 3:
        record["files"] = {f"f{k}": "0" * 64 for k in range(rng.choice([10, 10_001]))}
    elif kind == 4:
        return rng.choice([[], "x", 1, None, {"board": "qemu_cortex_m3"}])
    else:
        record["files"] = {k: v for k, v in record.get("files", {}).items() if rng.random() < 0.5}
    return record


def records_case(rng: random.Random, work: Path) -> Case:
    """A project rendered, its record mutated (and maybe a folder made a symlink out), rendered again."""
    victim = work / "victim.txt"
    victim.write_text("the user's file")
    app = work / "app"
    shutil.copytree(rendered_project("qemu_cortex_m3"), app, symlinks=True)
    record = json.loads((app / "mtk-project.json").read_text())
    mutated = _record_mutations(rng, record, victim)
    text = json.dumps(mutated)
    if rng.random() < 0.05:
        text = "[" * rng.choice([100, 100_000]) + text
    (app / "mtk-project.json").write_text(text)
    if rng.random() < 0.3:
        os.symlink(work, app / "up")
    if rng.random() < 0.15:
        target = rng.choice(["model", "firmware", "src"])
        elsewhere = work / "elsewhere"
        elsewhere.mkdir()
        (elsewhere / "keep.c").write_text("mine")
        shutil.rmtree(app / target)
        os.symlink(elsewhere, app / target)
    outside_before = sorted(str(p) for p in work.iterdir())
    argv = ["project", str(FAKE), "--board", rng.choice(["qemu_cortex_m3", "mps2/an385"]), "-o", str(app)]
    argv += ["--force"] if rng.random() < 0.5 else []

    def check() -> str | None:
        after = sorted(str(p) for p in work.iterdir())
        if after != outside_before:
            return f"files beside the application changed: {sorted(set(after) ^ set(outside_before))[:3]}"
        return None
    inputs = [victim] + ([work / "elsewhere"] if (work / "elsewhere").exists() else [])
    return Case("records", argv, inputs, check=check, describe=text[:120])


def metadata_case(rng: random.Random, work: Path) -> Case:
    compiled = work / "compiled"
    shutil.copytree(FAKE, compiled)
    meta = json.loads((compiled / "metadata.json").read_text())
    key = rng.choice(["module", "files", "inputs", "outputs", "model", "memory", "ops", "target"])
    meta[key] = rng.choice([["../../etc/passwd"], ["/etc/passwd"], [], None, "x\n", {"a": 1}, -1, 2**70,
                            [{"name": "x"}], hostile(rng)])
    (compiled / "metadata.json").write_text(json.dumps(meta))
    return Case("records", ["project", str(compiled), "--board", "qemu_cortex_m3", "-o", str(work / "app")],
                [compiled], describe=f"{key}={meta[key]!r}"[:120])


def tuning_case(rng: random.Random, work: Path) -> Case:
    model = work / "m.tflite"
    model.write_bytes(tiny_model(("a", "b", "y")))
    tuning = work / "t.json"
    tuning.write_text(rng.choice([
        json.dumps({"layers": {hostile(rng): {"variant": hostile(rng)}}}), "[" * 1000, "{}", "null",
        json.dumps({"version": 2**70, "layers": []}), "\x00\xff", json.dumps({"schedules": {"x": 1}})]))
    return Case("records", ["compile", str(model), "-o", str(work / "out"), "--tuning", str(tuning)],
                [model, tuning], describe=tuning.read_text(errors="replace")[:80])


ALIAS_COMMANDS = [   # (argv with {out}, the input {out} aliases); inputs: m.tflite, f.tflite, c.npz, t.npz
    (["compile", "m.tflite", "--format", "mlf", "-o", "{out}", "--force"], "m.tflite"),
    (["compile", "m.tflite", "-o", "o", "--plot-memory", "{out}", "--force"], "m.tflite"),
    (["compile", "m.tflite", "-o", "{out}", "--force"], "m.tflite"),
    (["quantize", "f.tflite", "--calib", "c.npz", "-o", "{out}", "--force"], "c.npz"),
    (["quantize", "f.tflite", "--calib", "c.npz", "--eval", "t.npz", "-o", "{out}"], "t.npz"),
    (["quantize", "f.tflite", "--calib", "c.npz", "-o", "{out}"], "f.tflite"),
    (["bench", "m.tflite", "--plot", "{out}"], "m.tflite"),
    (["tune", "m.tflite", "--tuning", "{out}"], "m.tflite"),
    (["project", "m.tflite", "--board", "mps2/an386", "-o", "{out}", "--force"], "m.tflite"),
    (["compile", "sub/m2.tflite", "-o", "{out}", "--force"], "sub"),
]


def aliases_case(rng: random.Random, work: Path) -> Case:
    models = ROOT / "models"
    for name, source in (("m.tflite", "digits_cnn_int8.tflite"), ("f.tflite", "digits_cnn_float.tflite"),
                         ("c.npz", "digits_calib.npz"), ("t.npz", "digits_test.npz")):
        shutil.copy(models / source, work / name)
    (work / "sub").mkdir()
    shutil.copy(models / "digits_cnn_int8.tflite", work / "sub" / "m2.tflite")
    argv, victim = rng.choice(ALIAS_COMMANDS)
    spelling = rng.randrange(7)
    if spelling == 0:
        out = victim
    elif spelling == 1:
        out = f"./{victim}"
    elif spelling == 2:
        out = f"sub/../{victim}"
    elif spelling == 3:
        out = str(work / victim)
    elif spelling == 4:
        os.symlink(work / victim, work / "alias")
        out = "alias"
    elif spelling == 5 and (work / victim).is_file():
        os.link(work / victim, work / "hard")
        out = "hard"
    else:
        os.symlink(work, work / "sub" / "up")
        out = f"sub/up/{victim}" if rng.random() < 0.5 else "sub/up"
    inputs = [work / n for n in ("m.tflite", "f.tflite", "c.npz", "t.npz", "sub")]
    allowed = ALLOWED | ({3, 4} if argv[0] in ("bench", "tune") else set())
    return Case("aliases", [a.format(out=out) for a in argv], inputs, frozenset(allowed), describe=f"{argv[0]} -> {out}")


def urls_case(rng: random.Random, work: Path) -> Case:
    model = work / "m.tflite"
    model.write_bytes(tiny_model(("a", "b", "y")))
    host = rng.choice(["", "127.0.0.1", "[::1", "[::1]", "localhost", "h" * 300, "a b", "::1", "x@y", "é"])
    port = rng.choice(["", ":", ":0", ":1", ":65536", ":99999999", ":notaport", ":-1", ":20408/x", ":1?x", ":1#y"])
    lab = rng.choice(["labgrid://", "labgrid:/", "LABGRID://", "labgrid"]) + (host + port if rng.random() < 0.9 else "")
    argv = ["bench", str(model), "--lab", lab, "--lab-timeout", "1"]
    return Case("urls", argv, [model], frozenset({2, 3, 4}), describe=repr(lab))


NUMBERS = ["-1", "0", "1", "32", "33", "1e3", "nan", "inf", "-inf", "0x10", "99999999999999999999", "", " 5", "1_000",
           "٣", "1.5", "-0", "2147483647", "2147483648"]


def numbers_case(rng: random.Random, work: Path) -> Case:
    value = rng.choice(NUMBERS)
    option, command = rng.choice([
        ("--stack-bytes", ["project", str(FAKE), "--board", "qemu_cortex_m3", "-o", str(work / "app")]),
        ("-n", ["run", str(work / "missing.tflite")]),
        ("-n", ["bench", str(work / "missing.tflite")]),
        ("--lab-timeout", ["bench", str(work / "missing.tflite")]),
        ("--max-ram", ["compile", str(work / "missing.tflite"), "-o", str(work / "o")]),
        ("--max-recompute", ["compile", str(work / "missing.tflite"), "-o", str(work / "o")]),
        ("--timeout", ["run", str(work / "missing.tflite")]),
        ("--mean", ["quantize", str(work / "missing.tflite"), "--calib", str(work / "c.npz")]),
        ("--scale", ["quantize", str(work / "missing.tflite"), "--calib", str(work / "c.npz")]),
        ("--flash-per-instruction", ["tune", str(work / "missing.tflite")]),
    ])

    def check() -> str | None:
        conf = work / "app" / "prj.conf"
        if conf.exists() and not re.search(r"^CONFIG_MAIN_STACK_SIZE=\d{4,10}$", conf.read_text(), re.M):
            return "prj.conf took a stack size that is no positive number"
        return None
    return Case("numbers", [*command, f"{option}={value}"], [], check=check, describe=f"{option}={value!r}")


FAMILIES: dict[str, tuple[float, Callable[[random.Random, Path], Case]]] = {
    "names": (2, names_case), "project names": (2, project_names_case), "strings": (2, strings_case),
    "records": (2, records_case), "metadata": (1, metadata_case), "tuning": (1, tuning_case),
    "aliases": (3, aliases_case), "urls": (1, urls_case), "numbers": (2, numbers_case),
}


def make_case(campaign_seed: int, case: int, work: Path) -> Case:
    rng = random.Random(f"cli-inputs:{campaign_seed}:{case}")
    names = list(FAMILIES)
    family = rng.choices(names, weights=[FAMILIES[n][0] for n in names])[0]
    return FAMILIES[family][1](rng, work)


# ---- running mtk --------------------------------------------------------------------------------

Mtk = Callable[[list[str], Path, float], tuple[int, str]]   # (argv, folder, timeout) -> (exit status, stderr)


def _toolkit_env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(ROOT / "toolkit"))


def fresh_mtk(argv: list[str], cwd: Path, timeout: float) -> tuple[int, str]:
    """`python -m mtk ARGV` in a new interpreter; raises subprocess.TimeoutExpired past `timeout`."""
    proc = subprocess.run([sys.executable, "-m", "mtk", *argv], cwd=cwd, capture_output=True, timeout=timeout,
                          env=_toolkit_env(), stdin=subprocess.DEVNULL)
    return proc.returncode, proc.stderr.decode(errors="replace")


class ForkedMtk:
    """`python -m mtk ARGV` in a process forked from this one, which imported mtk and every command's
    modules once (call it before any thread starts). The child runs as a fresh interpreter would:
    its own process group, folder, stdin from /dev/null, stdout and stderr as new files, mtk's
    `__main__` run by runpy as `-m` does, an uncaught exception printed as a traceback with exit 1,
    the exit functions registered in it run at its end. Finalizers and exit functions of this
    process (its temporary folders) are not the child's: detached there."""


    def __init__(self) -> None:
        os.environ.update(_toolkit_env())
        sys.path.insert(0, str(ROOT / "toolkit"))
        import mtk.commands
        for module in ("mtk.cli", "mtk.compiler", "mtk.pipeline", "mtk.quantize"):
            importlib.import_module(module)
        for command in pkgutil.iter_modules(mtk.commands.__path__):
            importlib.import_module(f"mtk.commands.{command.name}")

    def __call__(self, argv: list[str], cwd: Path, timeout: float) -> tuple[int, str]:
        with tempfile.TemporaryFile() as stdout, tempfile.TemporaryFile() as stderr:
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                self._child(argv, cwd, stdout.fileno(), stderr.fileno())
            status = self._wait(pid, timeout)
            stderr.seek(0)
            return status, stderr.read().decode(errors="replace")

    @staticmethod
    def _child(argv: list[str], cwd: Path, stdout: int, stderr: int) -> None:
        code = 1
        try:
            os.setpgid(0, 0)
            for finalizer in list(weakref.finalize._registry):   # noqa: SLF001 (the parent's, not the child's)
                finalizer.detach()
            atexit._clear()   # noqa: SLF001
            os.chdir(cwd)
            stdin = os.open(os.devnull, os.O_RDONLY)
            for fd, target in ((stdin, 0), (stdout, 1), (stderr, 2)):
                os.dup2(fd, target)
            sys.stdin = sys.__stdin__ = open(0, closefd=False)
            sys.stdout = sys.__stdout__ = open(1, "w", closefd=False)
            sys.stderr = sys.__stderr__ = open(2, "w", buffering=1, closefd=False, errors="backslashreplace")
            sys.argv = [str(ROOT / "toolkit" / "mtk" / "__main__.py"), *argv]
            try:
                runpy.run_module("mtk", run_name="__main__", alter_sys=True)
                code = 0
            except SystemExit as end:
                code = end.code if isinstance(end.code, int) else (0 if end.code is None else 1)
                if not isinstance(end.code, (int, type(None))):
                    print(end.code, file=sys.stderr)
            except BaseException:   # noqa: BLE001 (as the interpreter does with an uncaught exception)
                traceback.print_exc()
            atexit._run_exitfuncs()   # noqa: SLF001
            sys.stdout.flush()
            sys.stderr.flush()
        except BaseException:   # noqa: BLE001 (the harness failed: shown as a traceback of the case)
            traceback.print_exc()
        finally:
            os._exit(code)

    @staticmethod
    def _wait(pid: int, timeout: float) -> int:
        """The child's exit status; past `timeout`, its process group killed and TimeoutExpired raised."""
        child = os.pidfd_open(pid)
        try:
            ended, _, _ = select.select([child], [], [], timeout)
        finally:
            os.close(child)
        if not ended:
            try:
                os.killpg(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        status = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
        if not ended:
            raise subprocess.TimeoutExpired(["mtk"], timeout)
        return status


_PROJECTS: dict[str, Path] = {}


def rendered_project(board: str) -> Path:
    """FAKE rendered by `mtk project` for `board`, once (cases copy it; `forget_projects` removes it)."""
    if board not in _PROJECTS:
        app = Path(tempfile.mkdtemp(prefix="mtk-fuzz-project-")) / "app"
        subprocess.run([sys.executable, "-m", "mtk", "project", str(FAKE), "--board", board, "-o", str(app)],
                       capture_output=True, env=_toolkit_env(), timeout=300, check=True)
        _PROJECTS[board] = app
    return _PROJECTS[board]


def forget_projects() -> None:
    while _PROJECTS:
        shutil.rmtree(_PROJECTS.popitem()[1].parent, ignore_errors=True)


def run_case(case: Case, work: Path, timeout: float, mtk: Mtk = fresh_mtk) -> tuple[str, str]:
    """(outcome, detail): "ok", or "hang", "traceback", "exit N", "input changed", "check: ..."."""
    before = snapshot(case.inputs)
    try:
        returncode, stderr = mtk(case.argv, work, timeout)
    except subprocess.TimeoutExpired:
        return "hang", case.describe
    last = (stderr.strip().splitlines() or [""])[-1][:200]
    if "Traceback" in stderr:
        return "traceback", f"{case.describe}: {last}"
    if returncode not in case.allowed:
        return f"exit {returncode}", f"{case.describe}: {last}"
    if snapshot(case.inputs) != before:
        return "input changed", case.describe
    problem = case.check() if case.check else None
    if problem:
        return "check", f"{case.describe}: {problem}"
    return "ok", ""


def campaign(cases: range, campaign_seed: int, timeout: float, max_seconds: float | None = None,
             mtk: Mtk = fresh_mtk) -> dict:
    """Run the cases (each in a fresh folder) until done or past `max_seconds`; counts per family and outcome."""
    import collections
    counts: collections.Counter = collections.Counter()
    details: dict[str, list[str]] = collections.defaultdict(list)
    start = time.time()
    done = 0
    try:
        for case_number in cases:
            if max_seconds is not None and time.time() - start > max_seconds:
                break
            with tempfile.TemporaryDirectory(prefix="mtk-fuzz-cli-inputs-") as tmp:
                work = Path(tmp)
                try:
                    case = make_case(campaign_seed, case_number, work)
                except (OSError, subprocess.SubprocessError) as err:   # e.g. a file name the file system refuses
                    counts["setup skipped"] += 1
                    details["setup skipped"].append(f"case {case_number}: {err}"[:200])
                    continue
                outcome, detail = run_case(case, work, timeout, mtk)
            done += 1
            counts[f"{case.family}: {outcome}"] += 1
            if outcome != "ok" and len(details[outcome]) < 50:
                details[outcome].append(f"case {case_number} [{case.family}] {detail}")
                print(f"{outcome}: case {case_number} [{case.family}] {detail}", file=sys.stderr, flush=True)
            if done % 50 == 0:
                print(f"{done} CLI input cases (to case {case_number}), {time.time() - start:.0f} s: {dict(counts)}",
                      file=sys.stderr, flush=True)
    finally:
        forget_projects()
    return {"cases": f"{cases.start}..{cases.start + done - 1}", "run": done, "seed": campaign_seed,
            "seconds": round(time.time() - start), "counts": dict(counts), "details": dict(details)}
