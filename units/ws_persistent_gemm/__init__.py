"""ws_persistent_gemm: a Gluon warp-specialized persistent bf16 GEMM (TMA producer warp, two wgmma consumer warpgroups).

``kernel.py`` holds the Gluon solution (``matmul``; needs a Hopper GPU), ``naive.py`` the same
tiles in the Triton language (compiler-pipelined, not specialized), ``reference.py`` the PyTorch
reference and ``meta.py`` the taxonomy entry; ``README.md`` is the usage guide.
"""
