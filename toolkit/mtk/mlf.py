"""`mtk compile --format mlf`: a compiled model as a Model Library Format tarball, laid out as
microTVM's `tvmc compile --output-format mlf` wrote it (MLF version 7), so that what consumed
those (project templates compiling codegen/host/src/*.c against codegen/host/include, tools
reading metadata.json's workspace sizes) takes it:

  codegen/host/src/        the library's C sources and the kernels' headers
  codegen/host/include/    tvmgen_<module>.h
  metadata.json            modules.<module>: memory.functions.main (workspace, constants, I/O
                           sizes and types), operator_functions, target, executors ["aot"];
                           mtk's own metadata under "mtk"
  src/<model>.tflite       the model it was compiled from
  CMakeLists.txt, tvmgen_<module>.mk   the build fragments (buildfiles.py) for this layout

Unlike microTVM's, the tarball holds no C runtime: the library needs none.
"""

from __future__ import annotations

import io
import json
import tarfile
import time
from pathlib import Path, PurePosixPath
from typing import Any

from . import names
from .buildfiles import Layout, fragments
from .compiled import CompiledModel, IOTensor
from .fsutil import atomic_output_file

HOST_DEVICE = 1   # kDLCPU: microTVM's device type of the "host" target


def _mlf_path(rel: str) -> str:
    """A file of the compiled folder -> its place in the MLF."""
    folder, _, name = rel.partition("/")
    return f"{names.MLF_SOURCES if folder == 'src' else names.MLF_INCLUDE}/{name}"


def _io(tensors: tuple[IOTensor, ...]) -> dict[str, dict[str, Any]]:
    return {t.c_name: {"dtype": t.dtype, "size": t.bytes} for t in tensors}


def mlf_metadata(model: CompiledModel, files: list[str]) -> dict[str, Any]:
    """microTVM's metadata.json (version 7) for `model`; under "mtk", mtk's own, its files the MLF's."""
    kernels = dict.fromkeys(symbol for op in model.ops for symbol in
                            ([op.kernel] if isinstance(op.kernel, str) else op.kernel or []))
    target = "c -keys=arm_cpu,cpu" + (f" -mcpu={model.target.cpu}" if model.target.cpu else "")
    main = {"device": HOST_DEVICE, "workspace_size_bytes": model.memory.arena_bytes,
            "constants_size_bytes": model.memory.constant_bytes, "io_size_bytes": model.memory.io_bytes,
            "inputs": _io(model.inputs), "outputs": _io(model.outputs)}
    module = {
        "model_name": model.module, "style": "full-model", "executors": ["aot"], "target": [target],
        "export_datetime": time.strftime("%Y-%m-%d %H:%M:%SZ", time.gmtime()),
        "memory": {"functions": {"main": [main], "operator_functions": [
            {"function_name": symbol, "workspace": [{"device": HOST_DEVICE, "workspace_size_bytes": 0}]}
            for symbol in kernels]}},
    }
    return {"version": names.MLF_VERSION, "modules": {model.module: module}, "mtk": {**model.to_json(), "files": files}}


def mlf_members(model: CompiledModel, tflite: bytes) -> dict[str, bytes]:
    """Path in the tarball -> content, for the compiled folder at `model.path`."""
    library = [rel for rel in model.files if rel.startswith(("src/", "include/"))]
    members = {_mlf_path(rel): (model.path / rel).read_bytes() for rel in library}
    layout = Layout(tuple(_mlf_path(rel) for rel in library if rel.endswith(".c")),
                    tuple(_mlf_path(rel) for rel in library if rel.endswith(".h")), names.MLF_INCLUDE)
    members.update({name: text.encode() for name, text in fragments(model, layout).items()})
    members[f"src/{names.safe_label(model.model)}"] = tflite
    metadata = mlf_metadata(model, sorted([*members, "metadata.json"]))
    members["metadata.json"] = (json.dumps(metadata, indent=2, sort_keys=True) + "\n").encode()
    return members


def write_mlf(model: CompiledModel, tflite: bytes, tarball: Path) -> list[str]:
    """The tarball at `tarball`, written whole or not at all; members as tvmc wrote them (`./...`,
    root-owned). Returns the files' paths in it."""
    members = mlf_members(model, tflite)
    folders = sorted({str(parent) for name in members for parent in PurePosixPath(name).parents} - {"."})
    now = int(time.time())
    with atomic_output_file(tarball) as tmp, tarfile.open(tmp, "w") as tar:
        for name in ["."] + folders + sorted(members):
            info = tarfile.TarInfo("." if name == "." else f"./{name}")
            info.mtime, info.uname, info.gname = now, "root", "root"
            if name in members:
                info.size, info.mode = len(members[name]), 0o644
                tar.addfile(info, io.BytesIO(members[name]))
            else:
                info.type, info.mode = tarfile.DIRTYPE, 0o755
                tar.addfile(info)
    return sorted(members)
