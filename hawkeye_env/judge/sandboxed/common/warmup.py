"""What a standby worker loads before its candidate arrives (``standby.py``).

Everything a fresh worker would pay inside its candidate's time that trusted code can pay
earlier, in two parts:

* ``warm_host``: the torch modules the judge's first calls import (the input builder's
  meta-device probe, ``inputs.probe_inputs``, which keeps torch's sympy-backed symbolic shapes
  unimported). Host work only, so it runs before the worker asks for its
  GPU's lane lock. The judge's processes set the deterministic-algorithms flag without importing
  ``torch._inductor`` (``serve_loop.deterministic``), so no standby pays that import.
* ``warm_device``: one tiny Triton kernel (Triton's runtime, driver helpers and launcher; the
  interpreter on CPU), and on a GPU the cuBLAS GEMMs the float64 reference and the baselines use
  and the random-number, cast and reduction kernels the input builder and the comparison run
  first. On CUDA it runs under the shared lane lock, in steps with a ``checkpoint`` between
  them where the worker gives the lock back and asks for it again, so a timed section queued on
  the GPU goes first rather than waiting seconds for the exclusive lock behind a replacement
  standby's whole warm-up, imports included.

Both return the seconds each step took, which the worker reports in its verdict's profile.
"""

from __future__ import annotations

import time

import torch
import triton
import triton.language as tl

from hawkeye_env.judge.shared.inputs import probe_inputs

WARM_N = 256


class _ProbeTask:
    """A task module's ``get_inputs`` for ``warm_host``'s probe."""

    @staticmethod
    def get_inputs(n: int) -> list:
        return [torch.randn(n, n), torch.rand(n)]


@triton.jit
def _scale_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2.0, mask=mask)


def warm_host() -> dict[str, float]:
    """Imports a fresh worker otherwise pays inside its candidate's first call; touches no GPU.
    Returns ``{"imports_s": seconds}``."""
    started = time.monotonic()
    # The input builder's shape probe: a draw on the meta device (``inputs.probe_inputs``).
    probe_inputs(_ProbeTask, {"n": 2})
    return {"imports_s": time.monotonic() - started}


def _triton(device: str) -> None:
    x = torch.arange(WARM_N, dtype=torch.float32, device=device)
    y = torch.empty_like(x)
    _scale_kernel[(triton.cdiv(WARM_N, 128),)](x, y, WARM_N, BLOCK=128)
    if not torch.equal(y, 2 * x):
        raise RuntimeError("warm-up kernel computed a wrong result")


def _cublas(device: str) -> None:
    for dtype in (torch.bfloat16, torch.float32, torch.float64):
        a = torch.ones(64, 64, dtype=dtype, device=device)
        (a @ a).sum().item()


def _rng_and_casts(device: str) -> None:
    g = torch.Generator(device=device).manual_seed(0)
    r = torch.randn(WARM_N, generator=g, device=device) + torch.rand(WARM_N, generator=g, device=device)
    for dtype in (torch.bfloat16, torch.float16, torch.float64):
        r.to(dtype).double().abs().max().item()


# (profile key, step, devices it runs on), in order.
STEPS = (
    ("triton_s", _triton, ("cpu", "cuda")),
    ("cublas_s", _cublas, ("cuda",)),
    ("rng_casts_s", _rng_and_casts, ("cuda",)),
)


def warm_device(device: str, checkpoint=lambda: None) -> dict[str, float]:
    """Run the warm-up kernels on ``device`` (``cpu``: the Triton interpreter only), calling
    ``checkpoint()`` between steps; frees what they allocated. Returns ``{"<step>_s": seconds,
    "<step>_cpu_s": this process's CPU seconds in the step}``.

    Raises ``RuntimeError`` when the tiny kernel computes a wrong value (a broken GPU or
    toolchain): the standby is then discarded and the candidate gets a fresh worker.
    """
    steps = [(name, step) for name, step, devices in STEPS if device in devices]
    spent: dict[str, float] = {}
    for i, (name, step) in enumerate(steps):
        if i:
            checkpoint()
        started, cpu = time.monotonic(), time.process_time()
        step(device)
        if device == "cuda":
            torch.cuda.synchronize()
        spent[name] = time.monotonic() - started
        spent[name[:-2] + "_cpu_s"] = time.process_time() - cpu
    if device == "cuda":
        torch.cuda.empty_cache()
    return spent


__all__ = ["STEPS", "warm_device", "warm_host"]
