"""mtk: a microcontroller ML toolkit (TFLite int8 -> plain C through TVM -> Cortex-M).

As a library: `mtk.compile(...)`, `mtk.run(...)`, `mtk.quantize(...)` (see mtk.api); they are
imported on first use, so that `import mtk` (and the CLI's light commands) stay fast.
"""

__version__ = "0.1.0"

_API = ("compile", "run", "quantize")
_ERRORS = ("MtkError", "ModelError", "ToolMissing", "TargetError", "MismatchError")
__all__ = [*_API, *_ERRORS, "__version__"]


def __getattr__(name: str):
    if name in _API:
        from . import api
        return getattr(api, name)
    if name in _ERRORS:
        from . import errors
        return getattr(errors, name)
    raise AttributeError(f"module 'mtk' has no attribute '{name}'")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
