"""mtk-project.json: what `mtk project` wrote in an application, and rendering again over one.

The record is read back from disk, where anyone may have edited it: it is checked as data (size,
types, every path relative and plain, inside the application and not through a symlink) before
mtk reads or deletes a file it names. A record that fails is refused in one line naming the entry
(exit 2): mtk touches nothing then.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
from pathlib import Path, PurePosixPath
from typing import Callable

from .. import interrupts, ui
from ..boards import get_board
from ..errors import MtkError
from ..names import is_plain_relative_path

PROJECT_FILE = "mtk-project.json"
# What mtk owns in an application: replaced whenever it renders (edits are named, then replaced).
# Every other file it writes is the user's to edit once written: kept when edited, unless --force.
OWNED = ("model", "firmware", "src/model_glue.c", PROJECT_FILE)   # the two folders first
MAX_RECORD_BYTES = 1 << 20
MAX_FILES = 10_000
SHA256 = re.compile(r"[0-9a-f]{64}")
RECORD_FIELDS = {"platform": str, "board": str, "model": str, "files": dict, "owned": dict,
                 "mlperf_tiny": str, "energy": bool}


class BadRecord(MtkError):
    """The record names something mtk will not touch: refused whole, nothing is written."""


def digest(path: Path) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def is_owned(name: str) -> bool:
    return name in OWNED or PurePosixPath(name).parts[0] in OWNED


def inside(project: Path, name: str, what: str) -> Path:
    """project/name, for a `name` (from the record, or mtk's own) that is a plain relative path whose
    folders inside `project` are folders, not symlinks: what mtk writes or deletes there stays inside."""
    if not is_plain_relative_path(name):
        raise BadRecord(f"{project / PROJECT_FILE}: {what} {name!r} is not a plain path inside the application",
                        hint=f"remove {PROJECT_FILE} (or the entry) and render again")
    folder = project
    for part in name.split("/")[:-1]:
        folder = folder / part
        if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
            raise BadRecord(f"{folder} is a symlink or a file: mtk writes only inside the application {project}",
                            hint="make it a plain folder, or render into another folder")
    return project / name


def read_project(project: Path) -> dict:
    """The record `render` wrote in `project`, checked; MtkError if there is none or it is not sane."""
    path = Path(project) / PROJECT_FILE
    try:
        if path.is_symlink() or not path.is_file() or path.stat().st_size > MAX_RECORD_BYTES:
            raise ValueError(f"a regular file of at most {MAX_RECORD_BYTES:,} bytes expected")
        record = json.loads(path.read_bytes())
        if not isinstance(record, dict):
            raise ValueError("not a JSON object")
        for key, kind in RECORD_FIELDS.items():
            if key in record and not isinstance(record[key], kind):
                raise ValueError(f"'{key}' is not a {kind.__name__}")
        get_board(record["board"])
    except (OSError, ValueError, KeyError, RecursionError, MtkError) as err:
        raise MtkError(f"{project} is not a project rendered by `mtk project` (no valid {PROJECT_FILE}: {err})",
                       hint="render one with `mtk project model.tflite --board BOARD -o DIR`") from None
    for key in ("files", "owned"):
        entries = record.get(key, {})
        if len(entries) > MAX_FILES:
            raise BadRecord(f"{path}: '{key}' lists {len(entries):,} files (at most {MAX_FILES:,})")
        for name, sha in entries.items():
            inside(Path(project), name, f"'{key}' entry")
            if not isinstance(sha, str) or not SHA256.fullmatch(sha):
                raise BadRecord(f"{path}: '{key}' entry {name!r} has no sha256 (64 hex digits)")
            if (key == "files") == is_owned(name):
                raise BadRecord(f"{path}: '{key}' entry {name!r} is {'' if is_owned(name) else 'not '}mtk's own")
    return record


def written_files(folder: Path) -> dict[str, dict[str, str]]:
    """The record's "files" (the user's once written) and "owned" (mtk's): name -> sha256."""
    record: dict[str, dict[str, str]] = {"files": {}, "owned": {}}
    for p in sorted(folder.rglob("*")):
        name = p.relative_to(folder).as_posix()
        if p.is_file() and name != PROJECT_FILE:
            record["owned" if is_owned(name) else "files"][name] = digest(p)
    return record


def _regular_file(path: Path) -> bool:
    return path.is_file() and not path.is_symlink()


def _files_under(project: Path, folders: tuple[str, ...]) -> list[str]:
    """Every file or symlink under project/<folder> (symlinked folders not followed), as record names."""
    found = []
    for folder in folders:
        for root, dirs, files in os.walk(project / folder):
            found += [(Path(root) / f).relative_to(project).as_posix()
                      for f in files + [d for d in dirs if (Path(root) / d).is_symlink()]]
    return found


def refresh_project(project: Path, write: Callable[[Path], None], force: bool) -> None:
    """Render an application again over one mtk rendered before, touching only files mtk wrote:
    what mtk owns (OWNED) is replaced, naming the files the user edited; the user's files (the rest
    mtk writes) only where the user left them as mtk wrote them, or with `force`; files mtk wrote
    before and writes no more go if unedited (the user's edits of mtk's own files go too); files
    mtk never wrote (the build folder, the user's own sources, even inside model/) stay."""
    record = read_project(project)
    written_before, owned_before = record.get("files", {}), record.get("owned", {})
    staging = Path(tempfile.mkdtemp(prefix=f".{project.name}.", dir=project.parent))
    try:
        write(staging)
        now = read_project(staging)
        written_now, owned_now = now["files"], now["owned"]
        targets = {name: inside(project, name, "file")
                   for name in [*written_now, *written_before, *owned_now, *owned_before, PROJECT_FILE]}
        folders = [name for name in [*written_now, *owned_now] if targets[name].is_dir() and not targets[name].is_symlink()]
        if folders:
            raise BadRecord(f"{targets[folders[0]]} is a folder where mtk writes a file", hint="move it away")
        edited = [name for name, sha in written_now.items() if _regular_file(targets[name])
                  and digest(targets[name]) not in (written_before.get(name), sha)]
        replaced = [name for name, sha in owned_before.items()
                    if _regular_file(targets[name]) and digest(targets[name]) != sha]
        gone = [name for name, sha in written_before.items()   # e.g. the boards/ files of the previous board
                if name not in written_now and _regular_file(targets[name]) and digest(targets[name]) == sha]
        gone += [name for name in owned_before if name not in owned_now and _regular_file(targets[name])]
        interrupts.check()
        for name in gone:
            targets[name].unlink()
        for name in [*(n for n in written_now if n not in edited or force), *owned_now, PROJECT_FILE]:
            targets[name].parent.mkdir(parents=True, exist_ok=True)
            os.replace(staging / name, targets[name])
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    kept = sorted(name for name in _files_under(project, OWNED[:2]) if name not in owned_now)
    if kept:
        ui.info(f"kept files mtk did not write in {', '.join(f'{d}/' for d in OWNED[:2])}: {', '.join(kept[:5])}"
                + (f" and {len(kept) - 5} more" if len(kept) > 5 else ""))
    if edited:
        ui.info(f"{'replaced' if force else 'kept'} your edits of {', '.join(edited)}"
                + ("" if force else " (--force replaces them with mtk's)"))
    if replaced:
        ui.info(f"replaced your edits of {', '.join(replaced)}: mtk owns them (model/, firmware/, "
                "src/model_glue.c) and writes them whole at every render; keep changes in files of your own")
