"""From lowered kernels to C: TVM's C backend for kernels, mtk's own AOT entry point and memory plan."""
