"""Unit ``grouped_tile_order``: a tiled bf16 GEMM whose programs visit output tiles in L2-aware groups."""
