"""The names and text mtk puts in the files it writes: the C prefix and macros derived from the module
name, the CMake target, the Make variables and fragment, the Model Library Format's paths; and any
outside string (a file name, a tensor name, an argument) made safe for the syntax it lands in: a C
identifier, a comment, a label, a plain word. One place, so that making them safe is one change.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path, PurePosixPath

from .errors import MtkError

CMAKE_FRAGMENT = "CMakeLists.txt"
MLF_VERSION = 7                    # microTVM's last Model Library Format (metadata.json "version")
MLF_SOURCES = "codegen/host/src"
MLF_INCLUDE = "codegen/host/include"


MAX_MODULE = 64   # characters: tvmgen_<module>_<symbol> stays within a C compiler's significant characters


def module(name: str) -> str:
    """The module name as given by --module-name, made a C identifier fragment."""
    if len(name) > MAX_MODULE:
        raise MtkError(f"--module-name of {len(name)} characters: at most {MAX_MODULE}")
    return re.sub(r"[^A-Za-z0-9_]", "_", name) or "default"


def library(module: str) -> str:
    """tvmgen_<module>: the C prefix of every symbol, the CMake target, the library's name."""
    return f"tvmgen_{module}"


def macro(module: str, *parts: str) -> str:
    """TVMGEN_<MODULE>_<PART>_...: a preprocessor macro of the header, or a Make variable."""
    return "_".join([library(module), *parts]).upper()


def header(module: str) -> str:
    return f"{library(module)}.h"


def make_fragment(module: str) -> str:
    return f"{library(module)}.mk"


def run_function(module: str) -> str:
    return f"{library(module)}_run"


@lru_cache(maxsize=1)
def reserved_names() -> frozenset[str]:
    """C and C++ keywords, the compilers' predefined macros and the C libraries' macros (c_reserved_names.txt)."""
    text = (Path(__file__).parent / "c_reserved_names.txt").read_text(encoding="ascii")
    return frozenset(line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#"))


MTK_PATTERN = re.compile(r"^(tvmgen|mtk)_|_t$", re.I)   # mtk's macros and symbols; typedef names (POSIX's *_t)
LIBRARY_PATTERN = re.compile(   # the C library's macro namespaces (C11 7.31), stdint.h's, and Zephyr's Kconfig macros
    r"^(E[0-9A-Z]|SIG_?[A-Z]|LC_[A-Z]|FE_[A-Z]|PRI[a-zX]|SCN[a-zX]|CONFIG_)"
    r"|^U?INT\w*_(MAX|MIN|C|WIDTH)$|^(SIZE|PTRDIFF|SIG_ATOMIC|WCHAR|WINT)_\w+$")


def c_identifier(name: str) -> str:
    """A C identifier made from any string: invalid characters become '_', never a keyword (C or C++),
    a macro a compiler or a C library may define, one of mtk's own names, or empty."""
    ident = re.sub(r"[^A-Za-z0-9_]", "_", name).strip("_") or "t"
    ident = re.sub(r"_+", "_", ident)
    if (ident[0].isdigit() or ident in reserved_names() or MTK_PATTERN.search(ident)
            or LIBRARY_PATTERN.match(ident)):
        ident = "t_" + ident
    return ident


COMMENT_UNSAFE_PAIRS = ("*/", "/*", "??")   # comment delimiters, the start of a trigraph


def c_comment(text: str) -> str:
    """`text` as it may stand in a comment of any file mtk writes (C's /* */ and //, the # of CMake,
    Make, Kconfig, YAML, linker scripts and Jinja-read YAML): printable ASCII on one line, without
    comment delimiters, trigraphs, line continuations or template braces."""
    text = "".join(c if " " <= c <= "~" else "?" for c in text)
    text = text.replace("\\", "/").replace("{", "(").replace("}", ")")
    while any(pair in text for pair in COMMENT_UNSAFE_PAIRS):   # "???" takes two rounds
        for pair in COMMENT_UNSAFE_PAIRS:
            text = text.replace(pair, f"{pair[0]}_{pair[1]}")
    return text


def safe_label(name: str) -> str:
    """A model's file name as it may stand anywhere: in a C string, a comment, a file name of an
    archive, the protocol's `m-model-[...]`."""
    label = re.sub(r"[^A-Za-z0-9._+-]", "_", name)
    return "_" + label if label.startswith(".") or not label else label


C_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")   # as long as c_identifier makes it (real tensor names: 300+)
PLAIN_PART = re.compile(r"[A-Za-z0-9_+-][A-Za-z0-9_.+-]{0,199}")


def identifier_read_back(text: object, what: str) -> str:
    """A C identifier read from outside as it is (from metadata.json, which mtk wrote; a RAM region's name,
    which names linker sections, regions and symbols): ValueError if it is not one."""
    if not isinstance(text, str) or not C_IDENTIFIER.fullmatch(text):
        raise ValueError(f"{what} {text!r} is not a C identifier")
    return text


def is_plain_relative_path(name: object) -> bool:
    """`name` is a/b/c.ext of plain parts: relative, no `.` or `..`, no empty part, no odd character."""
    return isinstance(name, str) and bool(name) and all(PLAIN_PART.fullmatch(p) for p in name.split("/")) \
        and str(PurePosixPath(name)) == name


PLAIN_WORD = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+/-]{0,199}")


def plain_word(text: str, what: str) -> str:
    """`text` (an argument that lands in a generated file: a revision, an exporter's name) if it is a
    plain word of letters, digits and _ . + / -; else MtkError naming `what`."""
    if not PLAIN_WORD.fullmatch(text) or ".." in text:
        raise MtkError(f"{what} {text!r} is not a plain name: letters, digits and _ . + / - only")
    return text
