"""Unit ``warp_specialization``: a TMA GEMM whose K loop is split into producer and consumer warp groups."""
