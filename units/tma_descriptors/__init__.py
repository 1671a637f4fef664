"""Unit ``tma_descriptors``: a tiled bf16 GEMM that moves A, B and C tiles through TMA tensor descriptors."""
