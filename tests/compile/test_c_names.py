"""Names that reach the generated C: tensor and file names become
identifiers that cannot collide (after case folding, with keywords, the standard headers' macros or
mtk's own) and comments that cannot be closed; C that does not build is an internal error, never
"code unknown (no arm-none-eabi-gcc)"; duplicate model outputs are refused."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from mtk.cli import main
from mtk.codegen.code_size import measure_code
from mtk.compiler import compile_model
from mtk.errors import INTERNAL_ERROR_EXIT, InternalError
from mtk.names import c_comment, c_identifier, reserved_names
from mtk.target import get_cpu
from mtk.tflite_builder import ModelBuilder

HAVE_GCC = shutil.which("arm-none-eabi-gcc") is not None and shutil.which("arm-none-eabi-size") is not None


def add_model(a: str, b: str, y: str) -> bytes:
    builder = ModelBuilder()
    x1 = builder.tensor(a, (1, 4), "int8", scale=0.1, zero_point=0)
    x2 = builder.tensor(b, (1, 4), "int8", scale=0.1, zero_point=0)
    out = builder.tensor(y, (1, 4), "int8", scale=0.2, zero_point=0)
    builder.op("ADD", [x1, x2], [out])
    builder.inputs([x1, x2])
    builder.outputs([out])
    return builder.build()


def code_without_comments(text: str) -> str:
    return re.sub(r"/\*.*?\*/", " ", text, flags=re.S)


NAME_SETS = {
    "case folding and the arena macro": ("x", "X", "arena"),
    "comment injection": ("y */ int injected_global = 42; /* ", "b", "#error broken\n/*"),
    "keywords and macros": ("NULL", "asm", "typeof"),
    "typedef and stdint macro": ("int8_t", "INT8_MAX", "size_t"),
    "mtk's own names": ("TVMGEN_DEFAULT_H_", "MTK_LAYER_HOOK", "global_workspace_workspace_pool"),
    "non-ASCII and trigraph": ("ünïcode ??/", "ünïcode ??=", "x\x00y"),
}


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_GCC, reason="needs arm-none-eabi-gcc")
@pytest.mark.parametrize("case", sorted(NAME_SETS))
def test_hostile_tensor_names_give_c_that_builds(case, tmp_path):
    model = tmp_path / "m.tflite"
    model.write_bytes(add_model(*NAME_SETS[case]))
    compiled = compile_model(model, tmp_path / "out")
    assert compiled.memory.code_bytes is not None   # arm-none-eabi-gcc built it (it raises otherwise)
    members = [t.c_name for t in (*compiled.inputs, *compiled.outputs)]
    assert len({m.upper() for m in members}) == 3
    sources = "".join(p.read_text(encoding="ascii") for p in (tmp_path / "out").rglob("*.[ch]"))
    assert "int injected_global" not in code_without_comments(sources)
    assert "#error" not in code_without_comments(sources)


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_GCC, reason="needs arm-none-eabi-gcc")
def test_model_file_name_with_a_newline_stays_in_its_comment(tmp_path):
    model = tmp_path / "m\n#error x ??=.tflite"
    model.write_bytes(add_model("a", "b", "y"))
    compile_model(model, tmp_path / "out")
    run_c = (tmp_path / "out" / "src" / "tvmgen_default.c").read_text(encoding="ascii")
    assert "#error" not in code_without_comments(run_c) and "??=" not in run_c


def test_duplicate_model_outputs_are_refused(tmp_path, capsys):
    builder = ModelBuilder()
    x = builder.tensor("x", (1, 4), "int8", scale=0.1, zero_point=0)
    y = builder.tensor("y", (1, 4), "int8", scale=0.1, zero_point=0)
    builder.op("RELU", [x], [y])
    builder.inputs([x])
    builder.outputs([y, y])
    model = tmp_path / "m.tflite"
    model.write_bytes(builder.build())
    code = main(["compile", str(model), "-o", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2 and "'y' is listed twice as a model output" in err


@pytest.mark.skipif(not HAVE_GCC, reason="needs arm-none-eabi-gcc")
def test_c_that_does_not_build_is_an_internal_error_not_a_missing_compiler(tmp_path):
    with pytest.raises(InternalError, match="does not build with arm-none-eabi-gcc") as err:
        measure_code({"src/broken.c": "int x = ;\n"}, get_cpu("cortex-m4"), "x")
    assert err.value.exit_code == INTERNAL_ERROR_EXIT


@pytest.mark.parametrize("name, ident", [
    ("NULL", "t_NULL"), ("asm", "t_asm"), ("typeof", "t_typeof"), ("int8_t", "t_int8_t"),
    ("UINT16_MAX", "t_UINT16_MAX"), ("tvmgen_default_run", "t_tvmgen_default_run"), ("9lives", "t_9lives"),
    ("", "t"), ("input_1", "input_1"), ("conv/Relu;bias", "conv_Relu_bias"),
    ("errno", "t_errno"), ("linux", "t_linux"), ("M_PI", "t_M_PI"), ("class", "t_class"), ("xor_eq", "t_xor_eq"),
    ("CONFIG_MAIN_STACK_SIZE", "t_CONFIG_MAIN_STACK_SIZE"), ("ENOTAVAILABLE", "t_ENOTAVAILABLE"), ("SIGFOO", "t_SIGFOO"),
    ("embedding", "embedding"), ("Identity", "Identity"), ("signal", "signal"), ("error", "error"),
])
def test_c_identifier(name, ident):
    assert c_identifier(name) == ident


def test_a_long_tensor_name_is_read_back_as_written():
    """TFLM's SEANet models name tensors with 300+ characters: the metadata mtk writes is read back."""
    from mtk.names import identifier_read_back
    name = "streamable_model_10/unet_0/decoder_4/conv2d_3x3/conv/conv2d_203/Conv2D;" * 5
    assert identifier_read_back(c_identifier(name), "c_name") == c_identifier(name)


def test_c_comment_cannot_close_or_leave_its_line():
    text = c_comment("a */ b /* c\nd\x00 é ??/")
    assert "*/" not in text and "/*" not in text and "\n" not in text and "??" not in text
    assert text.isascii() and text.isprintable()


RESERVED_SETS = {   # I/O names that are macros or keywords somewhere the generated C or its header goes
    "C library macros": ("errno", "stdout", "EOF"),
    "compiler macros": ("linux", "unix", "i386"),
    "complex and limits": ("I", "complex", "CHAR_BIT"),
    "stdlib and math": ("RAND_MAX", "M_PI", "NAN"),
    "C++ keywords and iso646": ("class", "and", "new"),
    "Zephyr's Kconfig and mtk's own": ("CONFIG_MAIN_STACK_SIZE", "state", "arena"),
}
USER_HEADERS = ("errno.h", "stdio.h", "complex.h", "math.h", "stdlib.h", "limits.h", "iso646.h")


def user_file(compiled) -> str:
    """A user's C file that includes the C library before the model's header and uses every member."""
    uses = [f"  in.{t.c_name} = buffer;" for t in compiled.inputs] + [f"  out.{t.c_name} = buffer;" for t in compiled.outputs]
    return "".join(f"#include <{h}>\n" for h in USER_HEADERS) + f"""#include "tvmgen_default.h"
static unsigned char buffer[64];
int use(void) {{
  struct tvmgen_default_inputs in;
  struct tvmgen_default_outputs out;
{chr(10).join(uses)}
  return tvmgen_default_run(&in, &out) + errno + (int)creal(I) + EOF;
}}
"""


def compilers() -> list[tuple[list[str], bool]]:
    """(command, builds the Cortex-M kernels too) of every C compiler here, in C99 and GNU dialects."""
    found = []
    if shutil.which("arm-none-eabi-gcc"):
        cpu = get_cpu("cortex-m4").gcc_flags
        found += [(["arm-none-eabi-gcc", *cpu, f"-std={std}", *specs], True)
                  for std in ("c99", "gnu11") for specs in ([], ["--specs=picolibc.specs"])]
    found += [([cc, f"-std={std}"], False) for cc in ("gcc", "clang", "clang-14") if shutil.which(cc)
              for std in ("c99", "gnu11")]
    return found


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_GCC, reason="needs arm-none-eabi-gcc")
@pytest.mark.parametrize("case", sorted(RESERVED_SETS))
def test_io_names_that_are_macros_or_keywords_build_everywhere(case, tmp_path):
    model = tmp_path / "m.tflite"
    model.write_bytes(add_model(*RESERVED_SETS[case]))
    compiled = compile_model(model, tmp_path / "out", cpu="cortex-m4")
    folder = tmp_path / "out"
    (folder / "src" / "user.c").write_text(user_file(compiled))
    for command, kernels in compilers():
        sources = sorted((folder / "src").glob("*.c")) if kernels else [folder / "src" / "tvmgen_default.c",
                                                                          folder / "src" / "user.c"]
        for source in sources:
            done = subprocess.run([*command, "-Wall", "-Wextra", "-Werror", "-fsyntax-only", "-I", str(folder / "include"),
                                   str(source)], capture_output=True, text=True)
            assert done.returncode == 0, f"{' '.join(command)} {source.name}:\n{done.stderr}"
    if shutil.which("g++"):   # the header in C++ (extern "C"): C++ keywords are no member names
        done = subprocess.run(["g++", "-std=c++17", "-Wall", "-Werror", "-fsyntax-only", "-x", "c++", "-I",
                               str(folder / "include"), "-"], input='#include "tvmgen_default.h"\n',
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stderr


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_GCC, reason="needs arm-none-eabi-gcc")
def test_an_input_named_state_beside_a_state_region_defines_each_macro_once(tmp_path):
    import modelgen
    model = modelgen.svdf_keyword_spotter()
    renamed = model.replace(b"\x05\x00\x00\x00frame\x00", b"\x05\x00\x00\x00state\x00")
    assert renamed != model
    (tmp_path / "m.tflite").write_bytes(renamed)
    compiled = compile_model(tmp_path / "m.tflite", tmp_path / "out")
    header = (tmp_path / "out" / "include" / "tvmgen_default.h").read_text()
    assert compiled.inputs[0].c_name == "state_2" and compiled.state
    assert header.count("#define TVMGEN_DEFAULT_STATE_SIZE ") == 1 and "TVMGEN_DEFAULT_STATE_2_SIZE" in header


def test_reserved_names_hold_what_the_installed_compilers_and_c_libraries_define(tmp_path):
    """c_reserved_names.txt against the compilers here: every macro they predefine, and every macro of
    the C standard headers of their C libraries (newlib, picolibc, glibc), without a leading underscore."""
    headers = ("assert.h complex.h ctype.h errno.h fenv.h float.h inttypes.h iso646.h limits.h locale.h math.h "
               "setjmp.h signal.h stdalign.h stdarg.h stdbool.h stddef.h stdint.h stdio.h stdlib.h "
               "stdnoreturn.h string.h tgmath.h time.h uchar.h wchar.h wctype.h")   # threads.h: broken in newlib.split()
    source = tmp_path / "all.c"
    source.write_text("".join(f"#if __has_include(<{h}>)\n#include <{h}>\n#endif\n" for h in headers))
    commands = [c for c, _ in compilers()]
    if not commands:
        pytest.skip("no C compiler")
    found = set()
    for command in commands:
        for defines in ([], ["-D_GNU_SOURCE"], ["-D_DEFAULT_SOURCE"]):
            done = subprocess.run([*command, *defines, "-dM", "-E", str(source)], capture_output=True, text=True)
            assert done.returncode == 0, done.stderr
            found |= {m for m in re.findall(r"^#define (\w+)", done.stdout, flags=re.M) if not m.startswith("_")}
    missing = sorted(found - reserved_names())
    assert not missing, f"add to toolkit/mtk/c_reserved_names.txt: {' '.join(missing)}"
