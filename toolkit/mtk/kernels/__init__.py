"""The kernels: the hand-written C under c/ and the files each instruction set builds (files.py)."""
