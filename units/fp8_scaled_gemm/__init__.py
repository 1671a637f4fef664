"""fp8_scaled_gemm: FP8 e4m3 tensor-core GEMM with per-tensor, per-row and 128x128 block scales.

``kernel.py`` holds the solutions (``fp8_gemm_per_tensor``, ``fp8_gemm_per_row``,
``fp8_gemm_block``), ``naive.py`` the dequantize-then-bf16-GEMM baseline, ``reference.py`` the
PyTorch references and ``meta.py`` the taxonomy entry; ``README.md`` is the usage guide.
"""
