"""Builds reused across runs, under the user's cache folder ($XDG_CACHE_HOME/mtk, else ~/.cache/mtk).

firmware/<key>/: a bare-metal firmware with its compiled model (and the int8 model, when mtk
quantized it on the way), keyed by a hash of everything the build depends on: the model's bytes, the
calibration data, the board's whole definition (and the emulated board's), every option that reaches
the build, mtk's own files (sources, C kernels, templates), TVM's version and the cross compiler. A
second `mtk run` of the same model runs that firmware without compiling or building anything. Entries
are written whole (a folder renamed into place) and the least recently used beyond KEEP_ENTRIES are
removed.

zephyr/<key>/: a Zephyr application folder kept between runs for one board and set of firmware
options, so that `west build` only rebuilds what a new model changed (files whose content is
unchanged keep their times); one run at a time uses it.
"""

from __future__ import annotations

import dataclasses
import fcntl
import hashlib
import json
import os
import shutil
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

from .compiled import CompiledModel
from .paths import BAREMETAL_APP, FIRMWARE

if TYPE_CHECKING:
    from .boards import Board
    from .runoptions import RunOptions

KEEP_ENTRIES = 32          # firmware entries kept (a digits CNN's: about 0.5 MB)
INT8_MODEL = "model_int8.tflite"
ELF = "firmware.elf"
COMPILED = "compiled"


def cache_root() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "mtk"


def _hash_file(digest: Any, path: Path) -> None:
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)


def _hash_tree(digest: Any, root: Path) -> None:
    """Every file under `root` (or `root` itself), by relative name and content."""
    files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
    for path in files:
        if "__pycache__" not in path.parts:
            digest.update(str(path.relative_to(root)).encode() + b"\0")
            _hash_file(digest, path)


def _version(distribution: str) -> str:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "-"


@lru_cache(maxsize=1)
def toolkit_digest() -> str:
    """mtk's own files, TVM's version and the cross compiler: a change to any is a new build."""
    digest = hashlib.sha256()
    for folder in (Path(__file__).parent, BAREMETAL_APP, FIRMWARE):
        _hash_tree(digest, folder)
    digest.update(f"tvm {_version('apache-tvm')}".encode())
    gcc = shutil.which("arm-none-eabi-gcc")
    if gcc is not None:
        stat = os.stat(gcc)
        digest.update(f"{os.path.realpath(gcc)} {stat.st_size} {stat.st_mtime_ns}".encode())
    return digest.hexdigest()


def firmware_key(model: Path, options: RunOptions) -> str:
    """The hash of everything a run's firmware is built from."""
    digest = hashlib.sha256(toolkit_digest().encode())
    _hash_tree(digest, model)
    if options.calib is not None:
        _hash_tree(digest, Path(options.calib))
    tuning = options.tuning and {key: variant.to_json() for key, variant in sorted(options.tuning.variants.items())}
    digest.update(json.dumps({
        "board": board_definition(options.board), "emulate": options.emulate and board_definition(options.emulate),
        "platform": options.platform, "profile": options.profile, "semihosting": options.semihosting,
        "mlperf_tiny": options.mlperf_tiny, "max_ram": options.max_ram, "max_recompute": options.max_recompute,
        "tuning": tuning, "weights_in_ram": options.weights_in_ram}, sort_keys=True).encode())
    return digest.hexdigest()[:32]


def board_definition(board: Board) -> dict[str, Any]:
    """Every field of `board` as data: its definition comes from boards.yaml or the user's Zephyr workspace,
    neither among the files toolkit_digest hashes, and its memory, timing and core all reach the build."""
    return dataclasses.asdict(board)


@dataclass(frozen=True)
class CachedFirmware:
    int8: Path | None        # the int8 model mtk quantized, None: the model itself was int8
    compiled: CompiledModel
    elf: Path


def cached_firmware(key: str) -> CachedFirmware | None:
    entry = cache_root() / "firmware" / key
    if not (entry / ELF).is_file():
        return None
    os.utime(entry)   # recently used
    int8 = entry / INT8_MODEL
    return CachedFirmware(int8 if int8.is_file() else None, CompiledModel.load(entry / COMPILED), entry / ELF)


def store_firmware(key: str, int8: Path | None, compiled: CompiledModel, elf: Path) -> None:
    """Keep a firmware for `key`: copied into a new folder, renamed into place whole."""
    folder = cache_root() / "firmware"
    folder.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".new-", dir=folder))
    try:
        shutil.copytree(compiled.path, staging / COMPILED)
        shutil.copy2(elf, staging / ELF)
        if int8 is not None:
            shutil.copy2(int8, staging / INT8_MODEL)
        try:
            staging.rename(folder / key)
        except OSError:   # another run stored the same firmware first
            pass
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    entries = sorted((p for p in folder.iterdir() if not p.name.startswith(".")), key=lambda p: p.stat().st_mtime)
    for old in entries[:-KEEP_ENTRIES]:
        shutil.rmtree(old, ignore_errors=True)


def sync_tree(source: Path, target: Path, keep: tuple[str, ...] = ()) -> None:
    """Make `target` hold what `source` holds, replacing only the files whose content differs (the
    others keep their times, so that a build tool sees them unchanged); top-level `keep` entries stay."""
    wanted = {p.relative_to(source) for p in source.rglob("*") if p.is_file()}
    for name in sorted(wanted):
        new, old = source / name, target / name
        if old.is_file() and old.stat().st_size == new.stat().st_size and old.read_bytes() == new.read_bytes():
            continue
        old.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(new, old)
    for path in sorted(target.rglob("*"), reverse=True):   # files first, then the folders they leave empty
        name = path.relative_to(target)
        if name.parts[0] in keep or name in wanted:
            continue
        if path.is_dir() and not path.is_symlink():
            if not any(path.iterdir()):
                path.rmdir()
        else:
            path.unlink()


@contextmanager
def stable_application(options: RunOptions, icount_shift: int) -> Iterator[Path]:
    """The Zephyr application folder kept for this board and these firmware options (held by one run)."""
    key = hashlib.sha256(json.dumps({
        "board": options.board.name, "profile": options.profile, "semihosting": options.semihosting,
        "mlperf_tiny": options.mlperf_tiny, "icount_shift": icount_shift,
        "zephyr_base": os.environ.get("ZEPHYR_BASE")}, sort_keys=True).encode()).hexdigest()[:16]
    folder = cache_root() / "zephyr"
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / f"{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield folder / key
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)

