"""mtk's cycle model: estimated cycles of a Cortex-M core for the code QEMU runs (a TCG plugin, plugin.c,
with per-core cost tables, tables.py, and per-board memory timing, memory.py). See model.py."""
