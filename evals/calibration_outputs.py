"""The outputs ``evals.calibrate`` and ``evals.recheck_trials`` judge besides the expert's: the
expert's module loaded from its source, and three outputs no honest kernel produces (the reference
at a lower precision, rows zeroed, elements zeroed)."""

from __future__ import annotations

import copy
import importlib.util
import sys
import tempfile
from pathlib import Path

import torch

from hawkeye_env.judge import references

FP8 = getattr(torch, "float8_e4m3fn", None)


def load_solution(source: str, name: str):
    """``source`` imported as module ``name`` from a file of its own (a trusted expert solution,
    run in this process)."""
    folder = Path(tempfile.mkdtemp(prefix="hawkeye-calibrate-"))
    path = folder / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def lower_precision(ref: torch.nn.Module, inputs: list) -> list:
    """The reference at a lower precision than the task allows: fp32 in bf16, bf16 and fp16 with
    floating operands and weights rounded through fp8 e4m3; outputs cast back."""
    expected = [o.dtype for o in references.as_list(ref(*inputs))]
    low = torch.bfloat16 if expected[0] == torch.float32 else FP8

    def down(x):
        if not (isinstance(x, torch.Tensor) and x.is_floating_point()):
            return x
        return x.to(torch.bfloat16) if low == torch.bfloat16 else x.to(low).to(x.dtype)

    model = copy.deepcopy(ref)
    with torch.no_grad():
        for p in list(model.parameters()) + list(model.buffers()):
            if p.is_floating_point():
                p.copy_(down(p).to(p.dtype))
        if low == torch.bfloat16:
            model = model.to(torch.bfloat16)
        outs = references.as_list(model(*[down(x) for x in inputs]))
    return [o.to(d) for o, d in zip(outs, expected)]


def zero_rows(outs: list, fraction: float) -> list:
    """Outputs with the last ``fraction`` of their rows (first dimension after flattening the
    rest) set to zero: a kernel that skips work."""
    zeroed = []
    for o in outs:
        o = o.clone()
        flat = o.reshape(o.shape[0], -1) if o.dim() > 1 else o.reshape(-1, 1)
        n = max(1, int(round(fraction * flat.shape[0])))
        flat[-n:] = 0
        zeroed.append(o)
    return zeroed


def zero_elements(outs: list, fraction: float, seed: int) -> list:
    """Outputs with ``fraction`` of their elements (at least one; chosen by ``seed``) set to zero."""
    zeroed = []
    g = torch.Generator(device="cpu").manual_seed(seed)
    for o in outs:
        o = o.clone()
        flat = o.reshape(-1)
        n = max(1, int(fraction * flat.numel()))
        flat[torch.randperm(flat.numel(), generator=g)[:n].to(flat.device)] = 0
        zeroed.append(o)
    return zeroed


__all__ = ["load_solution", "lower_precision", "zero_elements", "zero_rows"]
