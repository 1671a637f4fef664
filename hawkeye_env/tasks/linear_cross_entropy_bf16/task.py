"""Fused linear + cross-entropy, forward and backward: a language model's output projection and
loss with their gradients, bfloat16 in.

Inputs: ``hidden`` bfloat16 ``[T, H]`` (the last hidden states of ``T`` tokens) and ``labels``
int64 ``[T]`` in ``[0, V)``; the parameter ``weight`` is bfloat16 ``[V, H]`` (the output projection,
vocabulary ``V``, ``Model(hidden_size=H, vocab_size=V)``). With ``logits = hidden @ weight^T`` and
``loss[t] = logsumexp(logits[t]) - logits[t, labels[t]]``, the outputs are ``(loss, grad_hidden,
grad_weight)``: the per-token losses, float32 ``[T]``, and the gradients of their mean, bfloat16
``[T, H]`` and ``[V, H]``.

The reference is the plain PyTorch path, a bfloat16 matmul, ``F.cross_entropy`` on the float32
logits and autograd, which materialises ``[T, V]`` logits and their gradient (each 2.1 GB in
float32 at the timed shape, 4.2 GB in the judge's float64 run). Per-token losses rather than their
mean are returned so that the judge compares each token's loss: a scalar has no spread to check.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from hawkeye_env.tasks.shared.backward_common import upcast
from hawkeye_env.tasks.spec import BF16, Dim, ShapeFamily, TaskSpec, Tolerance

# The bfloat16 gradients are GEMMs over d logits rounded to bfloat16 (autograd of the bf16 matmul,
# as in every bf16 implementation), and a vocabulary row of grad_weight sums T such terms with
# cancellation. Over both CPU shapes and eight hidden ones, six distributions and six seeds (720
# gradients; CPU, 2026-12-05, torch 2.13) the native gradients reached rel L2 5.7e-3, and 7 of
# them failed the default bf16 element bound (a grad_weight row concentrating the error). Element
# bound 2.5x the default, as ATTENTION_BF16 (no native failure); rel_l2 1.2e-2, 2.1x that worst and
# under the 1.7e-2 the same gradients rounded to fp8 reached at the least.
GRAD_BF16 = Tolerance(
    rtol=4e-2, atol=4e-2, rel_l2=1.2e-2,
    source="CPU 2026-12-05: native bf16 gradients from bf16 d logits rel L2 <= 5.7e-3, 7 of 720 over the "
           "default element bound; fp8-rounded gradients >= 1.7e-2",
)


class Model(nn.Module):
    """The output projection ``weight`` [V, H] is the module's parameter, drawn with standard
    deviation ``H ** -0.5`` (``hawkeye_prepare_trial``), so unit-scale hidden states give
    unit-scale logits at every H, as a trained LM head does."""

    def __init__(self, hidden_size: int, vocab_size: int):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(vocab_size, hidden_size, dtype=torch.bfloat16))
        nn.init.normal_(self.weight, std=hidden_size**-0.5)  # in place: no float32 copy of [V, H]

    def hawkeye_prepare_trial(self, distribution: str, generator: torch.Generator, draw_like) -> None:
        """The judge's redraw of the parameters: ``distribution`` scaled by ``H ** -0.5``."""
        with torch.no_grad():
            w = draw_like(self.weight, distribution, generator).float() * self.weight.shape[1] ** -0.5
            self.weight.copy_(w.to(self.weight.dtype))

    def forward(self, hidden: torch.Tensor, labels: torch.Tensor):
        with torch.enable_grad():
            h = hidden.detach().requires_grad_()
            loss = F.cross_entropy(upcast(h @ self.weight.t()), labels, reduction="none")
            grad_hidden, grad_weight = torch.autograd.grad(loss.mean(), (h, self.weight))
        return loss.detach(), grad_hidden, grad_weight


def get_inputs(T: int = 4096, H: int = 4096, V: int = 128256):
    return [torch.randn(T, H, dtype=torch.bfloat16), torch.randint(0, V, (T,), dtype=torch.int64)]


def get_init_inputs(T: int = 4096, H: int = 4096, V: int = 128256):
    return [H, V]


SPEC = TaskSpec(
    id="linear_cross_entropy_bf16",
    family="reduction",
    description=(
        "Fused linear + cross-entropy, forward and backward. forward(hidden, labels) takes hidden "
        "(bfloat16 [T, H]) and labels (int64 [T], 0 <= label < V); the module's parameter `weight` "
        "(bfloat16 [V, H], a vocabulary of V; constructor Model(hidden_size=H, vocab_size=V)) is "
        "drawn with standard deviation H^-0.5, so logits are of unit scale. With logits = "
        "hidden @ weight^T, the loss of token t is logsumexp over v of logits(t, v) minus "
        "logits(t, label of t). Return "
        "(loss, grad_hidden, grad_weight): loss float32 [T], and the gradients of loss.mean() with "
        "respect to hidden (bfloat16 [T, H]) and weight (bfloat16 [V, H]). Memory budget: never hold "
        "the [T, V] logits (2.1 GB in float32 at T=4096, V=128256): process the tokens in chunks, "
        "and per chunk compute its logits with float32 accumulation, a logsumexp over the vocabulary, "
        "d logits = (softmax - onehot(label)) / T in bfloat16, then grad_hidden of the chunk "
        "(d logits @ weight) and grad_weight += d logits^T @ hidden chunk, accumulated in float32 "
        "across chunks."
    ),
    module="hawkeye_env.tasks.linear_cross_entropy_bf16.task",
    dtypes=("bfloat16", "float32", "int64"),
    cpu_shapes=({"T": 23, "H": 32, "V": 515}, {"T": 13, "H": 24, "V": 777}),
    # Llama 3 8B (hidden 4096, vocabulary 128256) and Llama 2 7B (32000) at 4096 and 8192 tokens.
    gpu_shapes=({"T": 4096, "H": 4096, "V": 128256}, {"T": 8192, "H": 4096, "V": 32000}),
    # Three GEMMs of T x V x H: the logits, grad_hidden and grad_weight.
    flops=lambda T, H, V, **_: 6.0 * T * V * H,
    # Read hidden, weight and labels; write the losses and both gradients.
    bytes_moved=lambda T, H, V, **_: 4.0 * T * H + 4.0 * V * H + 12.0 * T,
    tags=("tiled_mma", "online_softmax", "row_reduction"),
    solution="hawkeye_env.tasks.linear_cross_entropy_bf16.solution",
    # The unfused PyTorch path runs the same three GEMMs on cuBLAS plus a few passes over the
    # [T, V] logits; the chunked kernel's bar is to match it while holding no [T, V] tensor.
    targets={"eager": 1.0},
    shape_family=ShapeFamily(
        cpu={"T": Dim(1, 23), "H": Dim(16, 32, 8), "V": Dim(2, 777)},
        gpu={"T": Dim(16, 8192, 16), "H": Dim(1024, 8192, 1024), "V": Dim(32000, 152064, 64)},
    ),
    # The float32 losses come from bfloat16 logits (the reference's matmul rounds them), so they are
    # judged at bfloat16's bound: over both CPU shapes and four hidden ones, six distributions and
    # three seeds (CPU, 2026-12-05) the native loss reached rel L2 1.9e-3 and single tokens 4.2e-3 x
    # rms(loss), under BF16's 8e-3; logits rounded to fp8 reached 1.2e-2-1.6e-2 on heavy-tailed inputs.
    tolerances={"float32": BF16, "bfloat16": GRAD_BF16},
    layouts=("offset", "transposed"),
    value_distributions=("zeros", "repeated", "skewed_ids"),
)
