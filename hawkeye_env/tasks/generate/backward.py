"""The backward variant of a generated task: given the forward's inputs and ``grad_out``, return
the gradients of the forward's floating inputs and parameters.

The reference is autograd of the forward reference: ``forward`` re-runs the forward body under
``torch.enable_grad()`` on detached leaves of its inputs and returns ``torch.autograd.grad(out,
(leaves..., parameters...), grad_out)``. In the judge's float64 evaluation every leaf, parameter
and ``grad_out`` is float64, so the gradients are exact; natively each gradient has its tensor's
dtype, and the tolerance of that dtype (calibrated, as for every output, by the native gradient's
own error) judges it.

Forwards with nothing to differentiate are skipped: FP8 operands, and quantizers (rounding has a
zero gradient almost everywhere, so their gradients are degenerate).

    >>> import random
    >>> from hawkeye_env.tasks.generate.families.norms import draw_row_norm
    >>> variant = backward_variant(draw_row_norm(random.Random(2)))
    >>> variant.backward, variant.inputs[-1].name, variant.body[-1].startswith("return torch.autograd.grad(")
    (True, 'grad_out', True)
"""

from __future__ import annotations

from hawkeye_env.tasks.generate.counts import size_expr
from hawkeye_env.tasks.generate.draft import TaskDraft, TensorArg

COMPUTE_BOUND = ("gemm", "attention")


def differentiable(draft: TaskDraft) -> bool:
    """Whether ``draft`` has a useful backward variant (module docstring)."""
    fp8 = any(t.dtype.startswith("float8") for t in draft.inputs)
    quantized = draft.family == "quantization" or any(g.startswith("quant") for g in draft.graph)
    return bool(draft.differentiable()) and not fp8 and not quantized and not draft.backward


def _bytes(draft: TaskDraft, leaves: list[TensorArg]) -> str:
    """Lower bound: read ``grad_out`` and the non-floating inputs, write every gradient."""
    parts = [size_expr(draft.out_shape, draft.out_dtype)]
    parts += [size_expr(t.shape, t.dtype) for t in draft.inputs if not t.differentiable]
    parts += [size_expr(t.shape, t.dtype) for t in (*leaves, *draft.params)]
    return " + ".join(parts)


def backward_variant(draft: TaskDraft) -> TaskDraft | None:
    """The backward task of ``draft``, or None when it has none (``differentiable``)."""
    if not differentiable(draft):
        return None
    leaves = [t for t in draft.inputs if t.differentiable]
    names = ", ".join(t.name for t in leaves)
    body = ["with torch.enable_grad():"]
    if leaves:
        body += [f"    leaves = [t.detach().requires_grad_() for t in ({names},)]",
                 f"    ({names},) = leaves" if len(leaves) == 1 else f"    {names} = leaves"]
    *forward, last = draft.body
    body += [f"    {line}" for line in forward] + [f"    out = {last.removeprefix('return ').strip()}"]
    targets = ["*leaves"] * bool(leaves) + [f"self.{p.name}" for p in draft.params]
    body.append(f"return torch.autograd.grad(out, ({', '.join(targets)},), grad_out)")
    wrt = ", ".join([t.name for t in leaves] + [p.name for p in draft.params])
    return draft.with_(
        stem=f"{draft.stem}_bwd", summary=f"Backward of: {draft.summary.rstrip('.')}. Given the forward's inputs "
        f"and grad_out (the gradient of the forward's output), return the gradients of ({wrt})",
        inputs=(*draft.inputs, TensorArg("grad_out", draft.out_shape, draft.out_dtype)), body=tuple(body),
        flops=f"2 * ({draft.flops})" if draft.family in COMPUTE_BOUND else draft.flops,
        bytes_moved=_bytes(draft, leaves), answer_is_copy=False, backward=True,
        hint=("Backward pass: recompute what the forward kept on chip rather than storing it, and fuse the "
              "gradient reductions (over rows for parameters) into as few passes as possible"),
        graph=(*draft.graph, "backward"),
    )
