"""TFLM + CMSIS-NN under mtk's cycle model: instructions and estimated cycles of TFLM's Invoke() on the QEMU boards.

    python bench/tflm_harness/tflm_cycles.py --tflite-micro ~/src/tflite-micro --json tflm_cycles.json
    python bench/tflm_harness/tflm_cycles.py --tflite-micro DIR --cmsis-nn DIR --flatbuffers DIR --gemmlowp DIR \\
        --ruy DIR --board mps2/an386 --model kws
    python bench/peer_compare.py --tflm-cycles tflm_cycles.json    # TFLM's estimated cycles beside mtk's

TFLM is not shipped with mtk and this script fetches nothing: pass checkouts of tflite-micro and CMSIS-NN, and
the flatbuffers, gemmlowp and ruy headers TFLM includes (after TFLM's own `make` has run once, its downloads folder
tensorflow/lite/micro/tools/make/downloads holds all four, and they are the defaults). TFLM's library sources
(its sources.inc list, read with make), its cmsis_nn kernels in place of the reference ones, and every int8 source
of CMSIS-NN are compiled once per core into --work with the flags of TFLM's cortex_m_generic target and
BUILD_TYPE=release_with_logs, at -O2 throughout, with the board's -mcpu flags (mtk's for that core, the same as the
peer file's). main.cc runs the model once on mtk's bare-metal startup and port; the cycle model (mtk.cycles, the
board's core table) measures the call of tflm_invoke(), which is TFLM's Invoke() and nothing else: its exact
instructions and its estimated cycles. The peer file ../shared/peer/tflm_qemu.json counted the instructions
between two marker functions around Invoke(): the figures agree within the marker calls and the TFLM/CMSIS-NN
versions; the table prints how close. The outputs' FNV-1a is checked against tflite-micro's Python interpreter on
the same fixed input (byte k of the inputs = (31 k + 7) mod 256).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from baremetal_harness import render_board_files, run_measured  # noqa: E402
from mtk.boards import Board, get_board  # noqa: E402
from mtk.cycles.model import UNIT  # noqa: E402
from mtk.cycles.plugin import cache_dir  # noqa: E402
from mtk.paths import BAREMETAL_APP, FIRMWARE  # noqa: E402
from mtk.reader import read_model  # noqa: E402
from mtk.reference import run_reference  # noqa: E402

HERE = Path(__file__).resolve().parent
SHARED = HERE.parents[2] / "shared"
MODELS = {"kws": "kws_dscnn_int8", "ic": "ic_resnet8_int8", "ad": "ad_fc_int8"}
BOARDS = ("mps2/an386", "mps2/an500", "mps2/an505", "mps3/corstone300/an547")
PEER_CPU = {"cortex-m3": "m3", "cortex-m4": "m4", "cortex-m7": "m7", "cortex-m33": "m33", "cortex-m55": "m55"}
INVOKE_SYMBOL = "tflm_invoke"
ARENA_BYTES = 96 * 1024
STACK_BYTES = 16 * 1024
TIMEOUT_S = 300.0
# TFLM's kernel files (name, and name_common) of the operators main.cc registers, and the CMSIS-NN sources they call
KERNELS = ("add", "conv", "depthwise_conv", "dequantize", "fully_connected", "kernel_util", "pooling", "quantize",
           "reshape", "softmax")
CMSIS_NN_FOLDERS = ("BasicMathFunctions", "ConvolutionFunctions", "FullyConnectedFunctions", "NNSupportFunctions",
                    "PoolingFunctions", "SoftmaxFunctions")
TEST_HELPERS = ("fake_micro_context", "mock_micro_graph", "test_helpers", "test_helper_custom_ops")
DOWNLOADS = Path("tensorflow/lite/micro/tools/make/downloads")
# what identifies each checkout: a file every version of it has
CHECKOUT_MARKS = {"tflite_micro": "tensorflow/lite/micro/micro_interpreter.h",
                  "cmsis_nn": "Include/arm_nnfunctions.h",
                  "flatbuffers": "include/flatbuffers/flatbuffers.h",
                  "gemmlowp": "fixedpoint/fixedpoint.h",
                  "ruy": "ruy/profiler/instrumentation.h"}
# TFLM's cortex_m_generic target, OPTIMIZED_KERNEL_DIR=cmsis_nn, BUILD_TYPE=release_with_logs (its Makefile's
# COMMON_FLAGS, ADDITIONAL_DEFINES and PLATFORM_FLAGS)
COMMON_FLAGS = ("-O2", "-fno-unwind-tables", "-fno-asynchronous-unwind-tables", "-ffunction-sections",
                "-fdata-sections", "-fmessage-length=0", "-DTF_LITE_STATIC_MEMORY", "-DTF_LITE_DISABLE_X86_NEON",
                "-DCMSIS_NN", "-DNDEBUG", "-DTF_LITE_MCU_DEBUG_LOG", "-mlittle-endian", "-funsigned-char",
                "-fomit-frame-pointer", "-DARM_NN_ENABLE_F16=0", "-DARM_NN_ENABLE_F32=0", "-DFLATBUFFERS_LOCALE_INDEPENDENT=0")
CXX_FLAGS = ("--specs=picolibcpp.specs", "-std=c++17", "-fno-rtti", "-fno-exceptions", "-fno-threadsafe-statics")
C_FLAGS = ("--specs=picolibc.specs", "-std=c17")


@dataclass(frozen=True)
class Checkouts:
    tflite_micro: Path
    cmsis_nn: Path
    flatbuffers: Path
    gemmlowp: Path
    ruy: Path

    @classmethod
    def of(cls, tflite_micro: Path, **given: Path | None) -> Checkouts:
        """The checkouts given, the others from tflite-micro's downloads folder; SystemExit naming one that is
        not what it should be."""
        downloads = tflite_micro / DOWNLOADS
        paths = {"tflite_micro": tflite_micro, **{name: given.get(name) or downloads / name
                                                  for name in CHECKOUT_MARKS if name != "tflite_micro"}}
        for name, path in paths.items():
            if not (path / CHECKOUT_MARKS[name]).is_file():
                raise SystemExit(f"{path}: not a {name.replace('_', '-')} checkout (no {CHECKOUT_MARKS[name]}); "
                                 f"pass --{name.replace('_', '-')}")
        return cls(**{name: path.resolve() for name, path in paths.items()})

    def includes(self) -> list[str]:
        return [f"-I{p}" for p in (self.tflite_micro, self.cmsis_nn, self.cmsis_nn / "Include",
                                   self.flatbuffers / "include", self.gemmlowp, self.ruy)]

    def library_sources(self) -> list[Path]:
        """TFLM's library sources (its sources.inc; tests, benchmarks and test helpers left out; kernels only those
        of KERNELS, the cmsis_nn ones in place of the reference ones; the cortex_m_generic debug log) and the
        CMSIS-NN sources of CMSIS_NN_FOLDERS."""
        script = ("TENSORFLOW_ROOT :=\ninclude tensorflow/lite/micro/tools/make/sources.inc\n"
                  "$(info $(filter-out $(MICROLITE_TEST_SRCS) $(MICROLITE_BENCHMARK_SRCS),"
                  "$(MICROLITE_CC_BASE_SRCS)) $(MICROLITE_CC_KERNEL_SRCS))\nall: ;\n")
        done = subprocess.run(["make", "-s", "-f", "-", "-C", str(self.tflite_micro)], input=script,
                              capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"{self.tflite_micro}: reading TFLM's sources.inc failed: {done.stderr.strip()[-300:]}")
        micro = self.tflite_micro / "tensorflow/lite/micro"
        specialized = {**{p.name: p for p in (micro / "kernels/cmsis_nn").glob("*.cc")},
                       "debug_log.cc": micro / "cortex_m_generic/debug_log.cc"}
        tflm = []
        for source in map(Path, done.stdout.split()):
            folder = source.parent.name
            if source.stem in TEST_HELPERS or folder == "kernels" and source.stem.removesuffix("_common") not in KERNELS:
                continue
            tflm.append(specialized.get(source.name, self.tflite_micro / source) if folder in ("kernels", "micro")
                        else self.tflite_micro / source)
        cmsis = [s for folder in CMSIS_NN_FOLDERS for s in sorted((self.cmsis_nn / "Source" / folder).glob("*.c"))
                 if not s.stem.endswith(("_f16", "_f32"))]
        return tflm + cmsis


def compile_flags(board: Board, source: Path) -> list[str]:
    return [*board.cpu.gcc_flags, *COMMON_FLAGS, *(CXX_FLAGS if source.suffix == ".cc" else C_FLAGS)]


def _run(command: list[str]) -> str:
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command[:3])} ... failed:\n{done.stderr.strip()[-2000:]}")
    return done.stdout


class TflmBuild:
    """libtflm.a per core (compiled on first use, kept in `work`) and one harness ELF per model and board."""

    def __init__(self, checkouts: Checkouts, work: Path, jobs: int):
        self.checkouts = checkouts
        self.work = work
        self.jobs = jobs

    def library(self, board: Board) -> Path:
        """libtflm.a for the board's core; objects are compiled again only when their source is newer."""
        flags = (compile_flags(board, Path("x.cc")), compile_flags(board, Path("x.c")), self.checkouts)
        out = self.work / f"lib-{board.cpu.name}-{hashlib.sha256(repr(flags).encode()).hexdigest()[:12]}"
        out.mkdir(parents=True, exist_ok=True)
        includes = self.checkouts.includes()

        def compile_one(source: Path) -> str:
            obj = out / f"{'_'.join(source.parts[-3:])}.o"
            if not obj.is_file() or obj.stat().st_mtime < source.stat().st_mtime:
                compiler = "arm-none-eabi-g++" if source.suffix == ".cc" else "arm-none-eabi-gcc"
                partial = f"{obj}.{os.getpid()}"
                _run([compiler, *compile_flags(board, source), *includes, "-c", str(source), "-o", partial])
                os.replace(partial, obj)
            return str(obj)

        with ThreadPoolExecutor(max_workers=self.jobs) as pool:
            objects = list(pool.map(compile_one, self.checkouts.library_sources()))
        archive = out / "libtflm.a"
        archive.unlink(missing_ok=True)
        _run(["arm-none-eabi-ar", "rcs", str(archive), *objects])
        return archive

    def harness(self, model: Path, board: Board) -> Path:
        out = self.work / "harness" / board.name.replace("/", "_") / model.stem
        out.mkdir(parents=True, exist_ok=True)
        render_board_files(board, out, STACK_BYTES)
        (out / "model_data.h").write_text(model_header(model.read_bytes()))
        objects = []
        for source in (HERE / "main.cc", BAREMETAL_APP / "startup.c", BAREMETAL_APP / "mtk_port_baremetal.c"):
            objects.append(str(out / f"{source.stem}.o"))
            compiler = "arm-none-eabi-g++" if source.suffix == ".cc" else "arm-none-eabi-gcc"
            _run([compiler, *compile_flags(board, source), f"-I{out}", f"-I{FIRMWARE}", *self.checkouts.includes(),
                  "-c", str(source), "-o", objects[-1]])
        elf = out / "harness.elf"
        _run(["arm-none-eabi-g++", *compile_flags(board, HERE / "main.cc"), "-nostartfiles", "-Wl,--gc-sections",
              "-T", str(out / "linker.ld"), *objects, str(self.library(board)), "-o", str(elf)])
        return elf


def model_header(flatbuffer: bytes) -> str:
    rows = ",\n".join(", ".join(f"0x{b:02x}" for b in flatbuffer[i:i + 16]) for i in range(0, len(flatbuffer), 16))
    return (f"#define TFLM_ARENA_BYTES {ARENA_BYTES}\n"
            f"alignas(16) static const unsigned char tflm_model[{len(flatbuffer)}] = {{\n{rows}\n}};\n")


def fixed_inputs(model: Path) -> list[np.ndarray]:
    """main.cc's input: byte k of the inputs, in order, is (31 k + 7) mod 256."""
    graph = read_model(model)
    inputs, k = [], 0
    for tensor in (graph.tensors[i] for i in graph.inputs):
        dtype = np.dtype(tensor.dtype)
        raw = ((np.arange(k, k + int(np.prod(tensor.shape)) * dtype.itemsize) * 31 + 7) % 256).astype(np.uint8)
        inputs.append(raw.view(dtype).reshape(tensor.shape))
        k += raw.size
    return inputs


def fnv1a(outputs: list[np.ndarray]) -> str:
    value = 0x811C9DC5
    for byte in b"".join(np.ascontiguousarray(o).tobytes() for o in outputs):
        value = ((value ^ byte) * 0x01000193) & 0xFFFFFFFF
    return f"{value:#x}"


@dataclass(frozen=True)
class HarnessLine:
    status: int
    fnv: str
    arena_used_bytes: int


def parse_line(line: str | None) -> HarnessLine | None:
    """main.cc's console line `tflm STATUS FNV ARENA_USED`, or None when the line is not one."""
    fields = (line or "").split()
    if len(fields) != 4 or fields[0] != "tflm" or not fields[1].isdigit() or not fields[3].isdigit():
        return None
    try:
        return HarnessLine(int(fields[1]), f"{int(fields[2], 16):#x}", int(fields[3]))
    except ValueError:
        return None


def run_harness(elf: Path, board: Board) -> tuple[HarnessLine, int, int]:
    """The harness's line and the measured Invoke(): (line, instructions, estimated cycles)."""
    text, status, measured = run_measured(elf, board, (INVOKE_SYMBOL,), TIMEOUT_S)
    line = parse_line(text)
    if line is None or status != 0 or line.status != 0 or len(measured) != 1:
        raise SystemExit(f"{elf}: TFLM harness failed on {board.name} (exit {status}, {len(measured)} Invoke "
                         f"calls measured): {text!r}")
    return line, measured[0].insns, measured[0].cycles


def peer_instructions(peer: Path) -> dict[tuple[str, str], int]:
    """(cpu, model) -> the peer file's TFLM + CMSIS-NN -O2 instructions per inference."""
    rows = json.loads(peer.read_text())["rows"]
    return {(r["cpu"], r["model"]): r["insns_per_inference"] for r in rows
            if r["kernels"] == "cmsis" and r["opt"] == "O2"}


def measure(build: TflmBuild, model: Path, board: Board, peers: dict[tuple[str, str], int]) -> dict:
    line, instructions, cycles = run_harness(build.harness(model, board), board)
    expected = fnv1a(run_reference(model, fixed_inputs(model)))
    peer = peers.get((PEER_CPU.get(board.cpu.name, ""), model.stem))
    return {"model": model.stem, "board": board.name, "cpu": board.cpu.name,
            "instructions": instructions, "estimated_cycles": cycles, "cycles_unit": UNIT,
            "clock_hz": board.clock_hz, "arena_used_bytes": line.arena_used_bytes,
            "fnv": line.fnv, "exact": line.fnv == expected,
            "peer_instructions": peer,
            "instructions_vs_peer": None if peer is None else round(instructions / peer - 1, 6)}


WHAT = ("TFLM + CMSIS-NN (TFLM's cortex_m_generic flags, release_with_logs, -O2) running each model once bare metal "
        "on mtk's startup under QEMU 7.2 with mtk's cycle model: instructions = the exact instructions of the call "
        "of TFLM's Invoke(), estimated_cycles = the cycle model's for the board's core and memory; exact = the "
        "outputs' FNV-1a is tflite-micro's reference on the same fixed input; peer_instructions = "
        "../shared/peer/tflm_qemu.json's for the board's cpu, instructions_vs_peer the relative difference")


def commit_of(checkout: Path) -> str | None:
    """The checkout's git commit, if it is a git checkout."""
    done = subprocess.run(["git", "-C", str(checkout), "rev-parse", "HEAD"], capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 else None


def print_table(rows: list[dict]) -> None:
    print(f"{'model':16} {'board':22} {'instructions':>12} {'peer file':>12} {'diff':>8} {'est. cycles':>12} "
          f"{'cyc/insn':>8} {'arena':>6} exact")
    for r in rows:
        peer = r["peer_instructions"]
        diff = "-" if peer is None else f"{100 * r['instructions_vs_peer']:+.3f}%"
        print(f"{r['model']:16} {r['board']:22} {r['instructions']:12,} {peer or 0:12,} {diff:>8} "
              f"{r['estimated_cycles']:12,} {r['estimated_cycles'] / r['instructions']:8.3f} "
              f"{r['arena_used_bytes']:6} {'yes' if r['exact'] else 'NO'}")
    print("instructions: the call of TFLM's Invoke() (exact); peer file: ../shared/peer/tflm_qemu.json's for the "
          "board's cpu (between marker calls around Invoke()); est. cycles: mtk's cycle model, the board's core "
          "table and memory; exact: the outputs' FNV-1a is tflite-micro's")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("--tflite-micro", type=Path, required=True, metavar="DIR", help="a tflite-micro checkout")
    for name in ("cmsis-nn", "flatbuffers", "gemmlowp", "ruy"):
        parser.add_argument(f"--{name}", type=Path, metavar="DIR",
                            help=f"a {name} checkout (default: tflite-micro's downloads/{name.replace('-', '_')})")
    parser.add_argument("--board", action="append", choices=BOARDS, help=f"default: {', '.join(BOARDS)}")
    parser.add_argument("--model", action="append", choices=sorted(MODELS), help="model(s) (default all three)")
    parser.add_argument("--models-dir", type=Path, default=SHARED / "models")
    parser.add_argument("--peer", type=Path, default=SHARED / "peer" / "tflm_qemu.json")
    parser.add_argument("--work", type=Path, default=cache_dir() / "tflm-harness",
                        help="where TFLM's libraries and the harnesses are built (kept: a second run reuses them)")
    parser.add_argument("--jobs", type=int, default=2, help="compilers run at once (default 2)")
    parser.add_argument("--json", type=Path, help="write the rows here (bench/peer_compare.py --tflm-cycles reads it)")
    args = parser.parse_args()

    checkouts = Checkouts.of(args.tflite_micro, cmsis_nn=args.cmsis_nn, flatbuffers=args.flatbuffers,
                             gemmlowp=args.gemmlowp, ruy=args.ruy)
    build = TflmBuild(checkouts, args.work, args.jobs)
    peers = peer_instructions(args.peer) if args.peer.is_file() else {}
    rows = [measure(build, args.models_dir / f"{MODELS[key]}.tflite", get_board(board), peers)
            for board in args.board or BOARDS for key in args.model or list(MODELS)]
    print_table(rows)
    if args.json:
        with tempfile.NamedTemporaryFile("w", dir=args.json.resolve().parent, delete=False) as f:
            json.dump({"what": WHAT, "tflite_micro": commit_of(checkouts.tflite_micro),
                       "cmsis_nn": commit_of(checkouts.cmsis_nn), "rows": rows}, f, indent=1)
        os.replace(f.name, args.json)
    return 0 if all(r["exact"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
