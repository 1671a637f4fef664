"""Shared pieces of the curated backward tasks: float32 arithmetic that stays float64 in the
judge's exact run, and the reference gradients as autograd of a forward.

A backward task's ``Model.forward`` takes the forward's inputs and ``grad_out`` and returns the
gradients. Its reference is autograd of the forward: natively the forward computes in float32 and
rounds its output to the inputs' dtype once, so each gradient is float32 arithmetic rounded once
to its tensor's dtype; in the judge's float64 run every tensor is float64 and the gradients are
exact.

    >>> x = torch.tensor([1.0, 2.0], dtype=torch.float64)
    >>> gradients(lambda t: (upcast(t) ** 2).to(t.dtype), (x,), (), torch.ones(2, dtype=torch.float64))
    (tensor([2., 4.], dtype=torch.float64),)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch


def upcast(t: torch.Tensor) -> torch.Tensor:
    """float32 arithmetic, or float64 when the judge evaluates the reference exactly."""
    return t if t.dtype == torch.float64 else t.float()


def gradients(forward: Callable[..., torch.Tensor], inputs: Sequence[torch.Tensor],
              params: Sequence[torch.Tensor], grad_out: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """``d forward(*inputs) / d (inputs, params)`` for ``grad_out``, under ``enable_grad`` (the
    judge calls references under ``no_grad``).

    Args:
        forward: the forward, called on detached copies of ``inputs`` that require grad.
        inputs: floating tensors the gradient is taken for, passed to ``forward``.
        params: tensors ``forward`` reads by closure (a module's parameters), requiring grad.
        grad_out: the gradient of ``forward``'s output, its shape and dtype.

    Returns:
        One gradient per input, then one per parameter, each in its tensor's dtype.
    """
    with torch.enable_grad():
        leaves = [t.detach().requires_grad_() for t in inputs]
        out = forward(*leaves)
        return torch.autograd.grad(out, (*leaves, *params), grad_out)
