"""Unit ``epilogue_fusion``: bias and GELU applied to the GEMM accumulator before the store."""
