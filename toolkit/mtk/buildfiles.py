"""Build-system fragments for a compiled model's C library, written beside it by `mtk compile`:
a CMakeLists.txt (a static library target, for add_subdirectory or include) and a Makefile
fragment (variables and rules, for include). mlf.py writes them again for its own layout."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePosixPath

from . import names
from .compiled import CompiledModel


@dataclass(frozen=True)
class Layout:
    """Where the library's files are, relative to the folder the fragments sit in."""

    sources: tuple[str, ...]    # .c files
    headers: tuple[str, ...]    # every header, the interface's and the kernels'
    include: str                # the folder of tvmgen_<module>.h


def folder_layout(model: CompiledModel) -> Layout:
    """The layout of the folder `mtk compile` writes: include/ and src/."""
    return Layout(tuple(f for f in model.files if f.startswith("src/") and f.endswith(".c")),
                  tuple(f for f in model.files if f.endswith(".h")), "include")


def fragments(model: CompiledModel, layout: Layout) -> dict[str, str]:
    """File name -> text of both fragments."""
    return {names.CMAKE_FRAGMENT: cmake_fragment(model, layout),
            names.make_fragment(model.module): make_fragment(model, layout)}


def _about(model: CompiledModel) -> str:
    return f"{names.c_comment(model.model)} compiled by mtk {model.mtk_version} for {model.target.cpu or 'any Cortex-M'}"


def cmake_fragment(model: CompiledModel, layout: Layout) -> str:
    target = names.library(model.module)
    sources = "\n".join(f'  "${{CMAKE_CURRENT_LIST_DIR}}/{s}"' for s in layout.sources)
    return f"""# {_about(model)}:
# the static library {target} (plain C99, no runtime, no malloc). In your CMakeLists.txt:
#
#   add_subdirectory(path/to/this/folder {target})   # or: include(path/to/this/folder/CMakeLists.txt)
#   target_link_libraries(app PRIVATE {target})        # brings the include folder of {names.header(model.module)}
#
# In a Zephyr application, also build it with the board's compiler flags:
#   target_link_libraries({target} PRIVATE zephyr_interface)

add_library({target} STATIC
{sources}
)
target_include_directories({target} PUBLIC "${{CMAKE_CURRENT_LIST_DIR}}/{layout.include}")
target_compile_features({target} PRIVATE c_std_99)
"""


def make_fragment(model: CompiledModel, layout: Layout) -> str:
    def var(suffix: str) -> str:
        return names.macro(model.module, suffix)

    here, build = f"$({var('DIR')})", f"$({var('BUILD')})"
    objects = {source: f"{build}/{PurePosixPath(source).stem}.o" for source in layout.sources}
    rules = "".join(f"""
{obj}: {here}/{source} $({var('HEADERS')})
\t@mkdir -p $(@D)
\t$(CC) $(CPPFLAGS) $(CFLAGS) $({var('CFLAGS')}) -c $< -o $@
""" for source, obj in objects.items())
    return f"""# {_about(model)}:
# the library {names.library(model.module)} (plain C99, no runtime, no malloc). In your Makefile:
#
#   include path/to/this/folder/{names.make_fragment(model.module)}
#   app: main.o $({var('LIB')})
#   \t$(CC) $(LDFLAGS) -o $@ $^
#   main.o: CFLAGS += $({var('CFLAGS')})     # the include folder of {names.header(model.module)}
#
# Objects and the library are built with $(CC) $(CFLAGS) into $({var('BUILD')}) (default: build/{names.library(model.module)}).
# Including it leaves your Makefile's default goal as it was.

{var('DIR')} := $(patsubst %/,%,$(dir $(lastword $(MAKEFILE_LIST))))
{var('GOAL')} := $(.DEFAULT_GOAL)
{var('BUILD')} ?= build/{names.library(model.module)}
{var('CFLAGS')} := -I{here}/{layout.include}
{var('SRCS')} := {" ".join(f"{here}/{s}" for s in layout.sources)}
{var('HEADERS')} := {" ".join(f"{here}/{h}" for h in layout.headers)}
{var('OBJS')} := {" ".join(objects.values())}
{var('LIB')} := {build}/lib{names.library(model.module)}.a
{rules}
$({var('LIB')}): $({var('OBJS')})
\t$(AR) rcs $@ $^

.DEFAULT_GOAL := $({var('GOAL')})
"""
