"""Unit ``software_pipelining``: a tiled bf16 GEMM whose K loop keeps several tile loads in flight."""
