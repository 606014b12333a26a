"""mtk: a microcontroller ML toolkit (TFLite int8 -> plain C through TVM -> Cortex-M)."""

__version__ = "0.1.0"
