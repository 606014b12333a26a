"""Names that reach the generated C (issue 15 families 4 and 5): tensor and file names become
identifiers that cannot collide (after case folding, with keywords, the standard headers' macros or
mtk's own) and comments that cannot be closed; C that does not build is an internal error, never
"code unknown (no arm-none-eabi-gcc)"; duplicate model outputs are refused."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from mtk.cli import main
from mtk.codegen.code_size import measure_code_bytes
from mtk.compiler import compile_model
from mtk.errors import INTERNAL_ERROR_EXIT, InternalError
from mtk.graph import c_comment, c_identifier
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
        measure_code_bytes({"src/broken.c": "int x = ;\n"}, get_cpu("cortex-m4"))
    assert err.value.exit_code == INTERNAL_ERROR_EXIT


@pytest.mark.parametrize("name, ident", [
    ("NULL", "t_NULL"), ("asm", "t_asm"), ("typeof", "t_typeof"), ("int8_t", "t_int8_t"),
    ("UINT16_MAX", "t_UINT16_MAX"), ("tvmgen_default_run", "t_tvmgen_default_run"), ("9lives", "t_9lives"),
    ("", "t"), ("input_1", "input_1"), ("conv/Relu;bias", "conv_Relu_bias"),
])
def test_c_identifier(name, ident):
    assert c_identifier(name) == ident


def test_c_comment_cannot_close_or_leave_its_line():
    text = c_comment("a */ b /* c\nd\x00 é ??/")
    assert "*/" not in text and "/*" not in text and "\n" not in text and "??" not in text
    assert text.isascii() and text.isprintable()
