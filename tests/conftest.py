"""Without a GPU, run Triton kernels in the CPU interpreter (set before triton is imported)."""

import os

import torch

if not torch.cuda.is_available():
    os.environ["TRITON_INTERPRET"] = "1"
