"""ws_fp8_gemm: a Gluon warp-specialized persistent FP8 e4m3 GEMM with per-tensor scales in the epilogue.

``kernel.py`` holds the Gluon solution (``fp8_gemm_per_tensor``; needs a Hopper GPU), ``naive.py``
the Triton-language fp8 GEMM of ``units.fp8_scaled_gemm`` (not specialized), ``reference.py`` the
PyTorch reference and ``meta.py`` the taxonomy entry; ``README.md`` is the usage guide.
"""
