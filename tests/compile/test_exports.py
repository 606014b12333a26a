"""What `mtk compile` hands to other build systems: the header documents every
tensor and the return codes as macros; the CMakeLists.txt and Makefile fragments build the library
in a real host cmake + make build of a main.c that calls tvmgen_default_run; `--format mlf` is a
Model Library Format tarball laid out as microTVM's, which builds the same way. The host program's
outputs must be tflite-micro's, byte for byte."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tarfile
from pathlib import Path

import numpy as np
import pytest

from mtk.cli import main
from mtk.reference import run_reference

from checkout import REPO

pytestmark = pytest.mark.slow

MODEL = REPO / "models" / "digits_cnn_int8.tflite"
C_TYPES = {"int8": "int8_t", "uint8": "uint8_t", "int16": "int16_t", "int32": "int32_t", "float32": "float"}


@pytest.fixture(scope="module")
def compiled(tmp_path_factory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("compiled") / "digits"
    assert main(["compile", str(MODEL), "-o", str(out), "-q"]) == 0
    return out, json.loads((out / "metadata.json").read_text())


def host_main(meta: dict) -> str:
    """A program that reads the input from stdin, runs the model, writes the output to stdout and
    prints on stderr what the header's macros say about each tensor."""
    (inp,), (out,) = meta["inputs"], meta["outputs"]

    def macro(t: dict, part: str) -> str:
        return f"TVMGEN_DEFAULT_{t['c_name'].upper()}_{part}"

    describe = "\n".join(
        f'  {{ static const int shape[] = {macro(t, "SHAPE")};\n'
        f'    fprintf(stderr, "{t["c_name"]} %d %d %d %.9g %d", (int){macro(t, "SIZE")}, (int){macro(t, "ELEMENTS")},'
        f' (int){macro(t, "RANK")}, (double){macro(t, "SCALE")}, (int){macro(t, "ZERO_POINT")});\n'
        f'    for (int i = 0; i < {macro(t, "RANK")}; ++i) fprintf(stderr, " %d", shape[i]);\n'
        f'    fprintf(stderr, "\\n"); }}' for t in (inp, out))
    return f"""#include <stdio.h>
#include "tvmgen_default.h"

static {macro(inp, "TYPE")} input[{macro(inp, "ELEMENTS")}];
static {macro(out, "TYPE")} output[{macro(out, "ELEMENTS")}];

int main(void) {{
{describe}
  if (fread(input, 1, sizeof input, stdin) != sizeof input) return 10;
  struct tvmgen_default_inputs inputs = {{ .{inp["c_name"]} = input }};
  struct tvmgen_default_outputs outputs = {{ .{out["c_name"]} = output }};
  if (tvmgen_default_run(&inputs, &outputs) != TVMGEN_DEFAULT_OK) return 11;
  fwrite(output, 1, sizeof output, stdout);
  return 0;
}}
"""


def check_program(program: Path, meta: dict) -> None:
    """The program's outputs are tflite-micro's; its macros say what metadata.json says."""
    x = np.random.default_rng(7).integers(-128, 128, meta["inputs"][0]["shape"]).astype(np.int8)
    run = subprocess.run([str(program)], input=x.tobytes(), capture_output=True, timeout=60)
    assert run.returncode == 0, run.stderr
    expected = run_reference(MODEL, [x])[0]
    assert run.stdout == expected.tobytes()
    described = {line.split()[0]: line.split()[1:] for line in run.stderr.decode().splitlines()}
    for t in meta["inputs"] + meta["outputs"]:
        size, elements, rank, scale, zero_point, *shape = described[t["c_name"]]
        assert (int(size), int(elements), int(rank)) == (t["bytes"], int(np.prod(t["shape"])), len(t["shape"]))
        assert float(scale) == pytest.approx(t["scale"], rel=1e-7) and int(zero_point) == t["zero_point"]
        assert [int(d) for d in shape] == t["shape"]


def test_header_documents_tensors_and_return_codes(compiled):
    out, meta = compiled
    header = (out / "include" / "tvmgen_default.h").read_text()
    for t in meta["inputs"] + meta["outputs"]:
        prefix = f"TVMGEN_DEFAULT_{t['c_name'].upper()}"
        assert f"#define {prefix}_TYPE {C_TYPES[t['dtype']]}" in header
        assert f"#define {prefix}_SHAPE {{{', '.join(map(str, t['shape']))}}}" in header
        assert f"#define {prefix}_ZERO_POINT ({t['zero_point']})" in header
        assert re.search(rf"#define {prefix}_SCALE \S+f\b", header)
    assert "#define TVMGEN_DEFAULT_OK 0" in header and "#define TVMGEN_DEFAULT_ERROR (-1)" in header
    run_doc = header[:header.index("int32_t tvmgen_default_run(")]
    assert "TVMGEN_DEFAULT_OK" in run_doc.rsplit("*/", 2)[-2]   # the comment right above the run function


def test_cmake_fragment_in_a_host_cmake_build(compiled, tmp_path):
    out, meta = compiled
    assert {"CMakeLists.txt", "tvmgen_default.mk"} <= set(meta["files"])
    app = tmp_path / "app"
    app.mkdir()
    (app / "main.c").write_text(host_main(meta))
    (app / "CMakeLists.txt").write_text(f"""cmake_minimum_required(VERSION 3.13)
project(host_app C)
add_subdirectory("{out}" tvmgen_default)
add_executable(host_app main.c)
target_link_libraries(host_app PRIVATE tvmgen_default)
""")
    build = tmp_path / "build"
    for command in (["cmake", "-S", str(app), "-B", str(build), "-G", "Unix Makefiles"],
                    ["cmake", "--build", str(build)]):
        done = subprocess.run(command, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr
    assert (build / "tvmgen_default" / "libtvmgen_default.a").is_file()
    check_program(build / "host_app", meta)


def test_make_fragment_in_a_host_make_build(compiled, tmp_path):
    out, meta = compiled
    (tmp_path / "main.c").write_text(host_main(meta))
    (tmp_path / "Makefile").write_text(f"""CFLAGS = -O2 -Wall -std=c99
include {out}/tvmgen_default.mk
host_app: main.o $(TVMGEN_DEFAULT_LIB)
\t$(CC) -o $@ $^
main.o: CFLAGS += $(TVMGEN_DEFAULT_CFLAGS)
""")
    done = subprocess.run(["make", "-C", str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "build" / "tvmgen_default" / "libtvmgen_default.a").is_file()
    assert not list(out.rglob("*.o"))   # nothing built inside the compiled folder
    check_program(tmp_path / "host_app", meta)


def test_mlf_tarball_is_laid_out_as_microtvm_and_builds(compiled, tmp_path):
    _, meta = compiled
    tarball = tmp_path / "digits.tar"
    assert main(["compile", str(MODEL), "--format", "mlf", "-o", str(tarball), "-q"]) == 0
    with tarfile.open(tarball) as tar:
        names = tar.getnames()
        assert all(name == "." or name.startswith("./") for name in names)
        assert all(m.uid == 0 and m.uname == "root" for m in tar.getmembers())
        # extraction filters came in Python 3.11.4 (and Debian 12 ships 3.11.2)
        safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
        tar.extractall(tmp_path / "mlf", **safe)
    mlf = tmp_path / "mlf"
    files = sorted(str(p.relative_to(mlf)) for p in mlf.rglob("*") if p.is_file())
    assert "codegen/host/include/tvmgen_default.h" in files and "metadata.json" in files
    assert {f for f in files if f.startswith("codegen/host/src/") and f.endswith(".c")} == \
        {f"codegen/host/src/{Path(f).name}" for f in meta["files"] if f.startswith("src/") and f.endswith(".c")}
    assert (mlf / "src" / MODEL.name).read_bytes() == MODEL.read_bytes()
    metadata = json.loads((mlf / "metadata.json").read_text())
    module = metadata["modules"]["default"]
    main_function = module["memory"]["functions"]["main"][0]
    assert metadata["version"] == 7 and module["executors"] == ["aot"] and module["style"] == "full-model"
    assert main_function["workspace_size_bytes"] == meta["memory"]["arena_bytes"]
    assert main_function["constants_size_bytes"] == meta["memory"]["constant_bytes"]
    assert main_function["inputs"] == {t["c_name"]: {"dtype": t["dtype"], "size": t["bytes"]} for t in meta["inputs"]}
    # as microTVM's project templates built it: every codegen/host/src/*.c against codegen/host/include
    (tmp_path / "main.c").write_text(host_main(meta))
    gcc = shutil.which("gcc") or "cc"
    done = subprocess.run([gcc, "-O2", "-std=c99", "-I", str(mlf / "codegen/host/include"), str(tmp_path / "main.c"),
                           *map(str, sorted((mlf / "codegen/host/src").glob("*.c"))), "-o", str(tmp_path / "app")],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    check_program(tmp_path / "app", meta)
    # and with its own make fragment, written for this layout
    done = subprocess.run(["make", "-f", str(mlf / "tvmgen_default.mk"), "-C", str(tmp_path),
                           "build/tvmgen_default/libtvmgen_default.a"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr


def test_mlf_refuses_to_replace_a_file_without_force(tmp_path, capsys):
    tarball = tmp_path / "digits.tar"
    tarball.write_bytes(b"mine")
    assert main(["compile", str(MODEL), "--format", "mlf", "-o", str(tarball), "-q"]) == 2
    assert "--force" in capsys.readouterr().err and tarball.read_bytes() == b"mine"
