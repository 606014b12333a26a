"""Building the cycle model's QEMU plugin: plugin.c compiled with the host's gcc into a cache folder
keyed by the source's hash, so that an edited source is rebuilt and an unchanged one never is."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from ..errors import TargetError, ToolMissing

SOURCE = Path(__file__).with_name("plugin.c")
CACHE_ENV = "MTK_CACHE_DIR"


def cache_dir() -> Path:
    """$MTK_CACHE_DIR, else $XDG_CACHE_HOME/mtk, else ~/.cache/mtk."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "mtk"


def plugin_path() -> Path:
    """Where the plugin built from the current plugin.c lives."""
    digest = hashlib.sha256(SOURCE.read_bytes()).hexdigest()[:16]
    return cache_dir() / "qemu-plugins" / f"libmtkcycles-{digest}.so"


def ensure_plugin() -> Path:
    """The plugin, built first if this source has not been built yet."""
    path = plugin_path()
    if path.is_file():
        return path
    gcc = shutil.which("gcc") or shutil.which("cc")
    if gcc is None:
        raise ToolMissing("the cycle model's QEMU plugin needs a host C compiler",
                               hint="apt-get install gcc (install.sh does)")
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=path.parent) as tmp:
        built = Path(tmp) / path.name
        result = subprocess.run([gcc, "-shared", "-fPIC", "-O2", "-Wall", "-o", str(built), str(SOURCE)],
                                capture_output=True, text=True)
        if result.returncode != 0:
            raise TargetError(f"building the cycle model's QEMU plugin failed:\n{result.stderr.strip()[-2000:]}")
        os.replace(built, path)   # atomic: a parallel build leaves one whole file
    return path
