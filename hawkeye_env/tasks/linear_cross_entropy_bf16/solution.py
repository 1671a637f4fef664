"""Expert Triton solution for ``linear_cross_entropy_bf16``: fused linear + cross-entropy forward
and backward, ``(loss, grad_hidden, grad_weight)`` of bfloat16 ``hidden [T, H]``, int64
``labels [T]`` and the parameter ``weight [V, H]`` (bfloat16), without ever holding the ``[T, V]``
logits.

The tokens go in chunks of ``C`` rows, ``C`` chosen so a chunk's logits hold about as many
elements as ``hidden`` (``C = next_pow2(cdiv(T, cdiv(V, H)))``, at least ``MIN_CHUNK``: 128 rows at
T=4096, H=4096, V=128256, so the chunk buffers are 100 MB where the unfused path's logits are
GBs). Per chunk:

1. ``_gemm_kernel``: ``logits[C, V] = hidden_c @ weight^T``, bfloat16 operands, float32 out.
2. ``_cross_entropy_rows_kernel``: one program per token streams its logits twice: an online
   max / sum of exponentials gives ``lse`` and ``loss = lse - logits[label]``; then
   ``d logits = (exp(logits - lse) - onehot(label)) / T`` is stored in bfloat16.
3. ``_gemm_kernel``: ``grad_hidden_c = d logits @ weight``, stored bfloat16.
4. ``_gemm_kernel``: ``grad_w += d logits^T @ hidden_c`` into a float32 ``[V, H]`` accumulator
   (the first chunk stores instead of adding).

Last, ``_cast_kernel`` rounds the accumulator to the bfloat16 ``grad_weight``. One GEMM kernel
serves all three products through its strides (``weight^T`` and ``d logits^T`` are views), with a
grouped tile order so tiles that share operand rows run together and hit L2.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl
from torch import nn

MIN_CHUNK = 16  # a tl.dot tile's least M
BLOCK_V = 1024  # vocabulary columns per step of the cross-entropy stream (GPU)
CPU_BLOCK_V = 512  # the interpreter's: several steps even at its small vocabularies


@triton.jit
def _gemm_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                 ACCUMULATE: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                 GROUP_M: tl.constexpr):
    """``C (+)= A @ B`` for bfloat16 A ``[M, K]`` and B ``[K, N]`` of any strides, float32
    accumulation, C in its own dtype."""
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    in_group = GROUP_M * tiles_n
    first_m = (pid // in_group) * GROUP_M
    group_rows = min(tiles_m - first_m, GROUP_M)
    pid_m = first_m + (pid % in_group) % group_rows
    pid_n = (pid % in_group) // group_rows
    rm = pid_m.to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)  # [BLOCK_M]
    rn = pid_n.to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)  # [BLOCK_N]
    rk = tl.arange(0, BLOCK_K)  # [BLOCK_K]
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + rk
        a = tl.load(a_ptr + rm[:, None] * stride_am + kk[None, :] * stride_ak,
                    mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)  # [BLOCK_M, BLOCK_K]
        b = tl.load(b_ptr + kk[:, None] * stride_bk + rn[None, :] * stride_bn,
                    mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)  # [BLOCK_K, BLOCK_N]
        acc = tl.dot(a.to(tl.bfloat16), b.to(tl.bfloat16), acc)
    c_ptrs = c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn
    ok = (rm[:, None] < M) & (rn[None, :] < N)
    if ACCUMULATE:
        acc += tl.load(c_ptrs, mask=ok, other=0.0).to(tl.float32)
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=ok)


@triton.jit
def _cross_entropy_rows_kernel(logits_ptr, labels_ptr, dlogits_ptr, loss_ptr, n_vocab, stride_lm,
                               stride_label, stride_dm, inv_tokens, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    src = logits_ptr + row * stride_lm
    cols = tl.arange(0, BLOCK)  # [BLOCK]
    run_max = tl.full([BLOCK], -1.0e30, dtype=tl.float32)
    run_sum = tl.zeros([BLOCK], dtype=tl.float32)
    for v0 in range(0, n_vocab, BLOCK):
        x = tl.load(src + v0 + cols, mask=v0 + cols < n_vocab, other=float("-inf"))
        new_max = tl.maximum(run_max, x)
        run_sum = run_sum * tl.exp(run_max - new_max) + tl.exp(x - new_max)
        run_max = new_max
    row_max = tl.max(run_max, axis=0)
    lse = row_max + tl.log(tl.sum(run_sum * tl.exp(run_max - row_max), axis=0))
    label = tl.load(labels_ptr + row * stride_label)
    tl.store(loss_ptr + row, lse - tl.load(src + label))
    dst = dlogits_ptr + row * stride_dm
    for v0 in range(0, n_vocab, BLOCK):
        ok = v0 + cols < n_vocab
        x = tl.load(src + v0 + cols, mask=ok, other=0.0)
        grad = (tl.exp(x - lse) - tl.where(v0 + cols == label, 1.0, 0.0)) * inv_tokens
        tl.store(dst + v0 + cols, grad.to(tl.bfloat16), mask=ok)


@triton.jit
def _cast_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    ok = offs < n
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=ok).to(tl.bfloat16), mask=ok)


def _gemm(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor, accumulate: bool = False) -> None:
    (m, k), n = a.shape, b.shape[1]
    on_gpu = a.device.type == "cuda"
    if on_gpu:
        bm, bn, bk = 128, 128, 64
    else:  # the interpreter: tiles no larger than the problem, so few masked lanes are computed
        bm, bn, bk = (max(16, min(cap, triton.next_power_of_2(d))) for d, cap in ((m, 128), (n, 128), (k, 128)))
    grid = (triton.cdiv(m, bm) * triton.cdiv(n, bn),)
    _gemm_kernel[grid](a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
                       c.stride(1), ACCUMULATE=accumulate, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8,
                       num_warps=8 if on_gpu else 4, num_stages=3 if on_gpu else 1)


class ModelNew(nn.Module):
    def __init__(self, hidden_size: int, vocab_size: int):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(vocab_size, hidden_size, dtype=torch.bfloat16))

    def forward(self, hidden: torch.Tensor, labels: torch.Tensor):
        weight = self.weight
        (t, h), v = hidden.shape, weight.shape[0]
        dev = hidden.device
        block_v = BLOCK_V if dev.type == "cuda" else CPU_BLOCK_V
        chunk = min(t, max(MIN_CHUNK, triton.next_power_of_2(triton.cdiv(t, triton.cdiv(v, h)))))
        loss = torch.empty((t,), dtype=torch.float32, device=dev)
        grad_hidden = torch.empty((t, h), dtype=torch.bfloat16, device=dev)
        grad_w32 = torch.empty((v, h), dtype=torch.float32, device=dev)
        logits = torch.empty((chunk, v), dtype=torch.float32, device=dev)
        dlogits = torch.empty((chunk, v), dtype=torch.bfloat16, device=dev)
        for start in range(0, t, chunk):
            rows = min(chunk, t - start)
            h_c = hidden[start:start + rows]
            _gemm(h_c, weight.t(), logits[:rows])
            _cross_entropy_rows_kernel[(rows,)](
                logits, labels[start:start + rows], dlogits, loss[start:start + rows], v, logits.stride(0),
                labels.stride(0), dlogits.stride(0), 1.0 / t, BLOCK=block_v, num_warps=8,
            )
            _gemm(dlogits[:rows], weight, grad_hidden[start:start + rows])
            _gemm(dlogits[:rows].t(), h_c, grad_w32, accumulate=start > 0)
        grad_weight = torch.empty((v, h), dtype=torch.bfloat16, device=dev)
        n = v * h
        _cast_kernel[(triton.cdiv(n, 4096),)](grad_w32, grad_weight, n, BLOCK=4096, num_warps=8)
        return loss, grad_hidden, grad_weight
