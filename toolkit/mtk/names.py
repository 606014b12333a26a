"""The names mtk derives from a compiled model's module name for the files it writes: the C
prefix and macros of the header, the CMake target, the Make variables and fragment, the
Model Library Format's paths. One place, so that making them safe for each language is one change.
"""

from __future__ import annotations

import re

CMAKE_FRAGMENT = "CMakeLists.txt"
MLF_VERSION = 7                    # microTVM's last Model Library Format (metadata.json "version")
MLF_SOURCES = "codegen/host/src"
MLF_INCLUDE = "codegen/host/include"


def module(name: str) -> str:
    """The module name as given by --module-name, made a C identifier fragment."""
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
