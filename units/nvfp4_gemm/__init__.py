"""nvfp4_gemm: bf16 activations times an NVFP4 weight (e2m1 values, e4m3 scales per 16, fp32 tensor scale).

``kernel.py`` decodes the 4-bit codes in registers inside the K loop and feeds bf16 MMAs;
``naive.py`` decodes the weight to global memory first; ``reference.py`` holds the format
(encoder, explicit decoder) in PyTorch; ``meta.py`` the taxonomy entry; ``README.md`` the guide.
"""
