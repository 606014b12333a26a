"""The hand-written C kernels as data: their table (table.py), their C signatures (signature.py) and, per
instruction set, the C files each family builds (files.py, the C under c/)."""
