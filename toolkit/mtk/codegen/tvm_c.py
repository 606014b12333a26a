"""TIR PrimFuncs to plain C99 through TVM's C backend, without the TVM-FFI packed API.

TVM 0.27's `tvm.compile(target="c")` wraps every function in the packed calling
convention (DLTensor checks, TVM headers). Instead each buffer parameter becomes a raw
pointer, the s_tir lowering passes run without AnnotateEntryFunc / SplitHostDevice /
MakePackedAPI, and the C source's TVM preamble is dropped.
"""

from __future__ import annotations

import re

import tvm
from tvm import ir, s_tir, tirx

from ..target import Cpu

_PASSES = [
    s_tir.transform.CanonicalizeLoop,
    s_tir.transform.LowerInitBlock,
    s_tir.transform.PlanAndUpdateBufferAllocationLocation,
    s_tir.transform.ConvertBlocksToOpaque,
    s_tir.transform.CompactBufferAllocation,
    s_tir.transform.LowerMatchBuffer,
    s_tir.transform.StmtSimplify,
    s_tir.transform.LowerOpaqueBlock,
    tirx.transform.FlattenBuffer,
    s_tir.transform.LoopPartition,
    tirx.transform.VectorizeLoop,
    tirx.transform.StorageRewrite,
    tirx.transform.UnrollLoop,
    s_tir.transform.RenormalizeSplitPattern,
    tirx.transform.StmtSimplify,
    tirx.transform.RemoveNoOp,
    s_tir.transform.RewriteUnsafeSelect,
    tirx.transform.CommonSubexprElim,
    tirx.transform.LowerIntrin,
]


def _instantiate(pass_factory):
    if pass_factory is tirx.transform.VectorizeLoop:
        return pass_factory(False)   # TVM's vectorized C is OpenCL-style: not valid C99
    return pass_factory()


def with_pointer_params(func: tirx.PrimFunc, name: str, target: tvm.target.Target) -> tirx.PrimFunc:
    """The same function taking raw pointers and returning an int32 status."""
    params, decls = [], []
    for p in func.params:
        if tirx.is_buffer_var(p):
            ptr = tirx.Var(p.name, ir.PointerType(ir.PrimType(p.dtype)))
            params.append(ptr)
            decls.append(tirx.DeclBuffer(p, data=ptr))
        else:
            params.append(p)
    body = tirx.SeqStmt(decls + [func.body, tirx.Return(tirx.const(0, "int32"))])
    new = tirx.PrimFunc(params, body, ret_type=ir.PrimType("int32"), attrs=func.attrs)
    return new.with_attr("global_symbol", name).with_attr("target", target)


def is_pointer(param) -> bool:
    """A buffer parameter: a pointer in the C (with_pointer_params)."""
    return tirx.is_buffer_var(param)


def target_for(cpu: Cpu) -> tvm.target.Target:
    return tvm.target.Target(cpu.tvm_target)


def build_c(funcs: dict[str, tirx.PrimFunc], cpu: Cpu) -> str:
    """C source defining every function in `funcs` (name -> PrimFunc) as `int32_t name(T* ...)`."""
    if not funcs:
        return ""
    target = target_for(cpu)
    mod = tvm.IRModule({name: with_pointer_params(f, name, target) for name, f in funcs.items()})
    passes = [_instantiate(p) for p in _PASSES]
    with tvm.transform.PassContext(opt_level=3, config={"tirx.disable_vectorize": True}):
        mod = tvm.ir.transform.Sequential(passes)(mod)
    source = tvm.get_global_func("target.build.c")(mod, target).inspect_source()
    return _strip_preamble(source)


def _strip_preamble(source: str) -> str:
    """Drop TVM's includes, export macros and FFI globals; keep the functions."""
    kept = []
    for line in source.splitlines():
        if line.startswith(("#include \"tvm/", "#define TVM_EXPORTS", "void* __tvm_ffi__library_ctx", "// tvm target")):
            continue
        if line in ("#ifdef __cplusplus", 'extern "C"', "#endif"):
            continue
        kept.append(line)
    text = "\n".join(kept)
    text = re.sub(r"^TVM_DLL int32_t (\w+)\(([^)]*)\);\n", "", text, flags=re.M)   # forward declarations
    text = re.sub(r"^TVM_DLL ", "", text, flags=re.M)
    return text.replace("#include <math.h>\n", "").replace("#include <stdbool.h>\n", "")
