"""The hand-written C kernels as data: their table (table.py) and their C signatures (signature.py)."""
