"""mxfp4_gemm: bf16 activations times an MXFP4 weight (e2m1 values, e8m0 scales per 32 along K).

``kernel.py`` decodes the 4-bit codes in registers inside the K loop and feeds bf16 MMAs;
``naive.py`` decodes the weight to global memory first; ``reference.py`` holds the format (table,
encoder, explicit decoder) in PyTorch; ``meta.py`` the taxonomy entry; ``README.md`` the guide.
"""
