"""Where the trusted parent compares a reply's outputs, and what it holds meanwhile: on CUDA the
lane's own GPU under its shared lock, with PyTorch's CUDA linear-algebra library loaded once."""

from __future__ import annotations

import logging
import threading
from contextlib import contextmanager

import torch

from hawkeye_env.judge.parent.lanes import Lane

log = logging.getLogger(__name__)

_CUDA_LINALG_LOCK = threading.Lock()
_cuda_linalg_loaded = False


def _linalg_probe(device: str) -> None:
    """One tiny CUDA linear-algebra call: it makes PyTorch load its CUDA linalg library (nothing to
    load without CUDA, as in tests that stand in a fake GPU lane)."""
    if not torch.cuda.is_available():
        return
    eye = torch.eye(2, device=device)
    torch.linalg.solve_triangular(eye, eye, upper=False)


def load_cuda_linalg(device: str) -> None:
    """Load PyTorch's CUDA linear-algebra library once per process, under a lock.

    PyTorch loads it on the first CUDA linalg call, and that load is not thread safe: two judge
    threads building delta-rule references (``solve_triangular``) at once can fail with "lazy
    wrapper should be called at most once", a runtime error the candidates would be charged with.
    Every CUDA comparison calls this first (``comparing_on``).
    """
    global _cuda_linalg_loaded
    if _cuda_linalg_loaded:
        return
    with _CUDA_LINALG_LOCK:
        if not _cuda_linalg_loaded:
            try:
                _linalg_probe(device)
            except Exception as exc:  # noqa: BLE001 - a failed load must not fail the comparison itself
                log.warning("loading PyTorch's CUDA linalg library failed: %s", exc)
            _cuda_linalg_loaded = True


@contextmanager
def comparing_on(lane: Lane | None, device: str):
    """Where the parent compares a reply's outputs, holding what that needs: on CUDA the lane's
    own GPU (GPU-shape comparisons are hundreds of MB of float64 work) under its shared lock, so
    a comparison never runs during another candidate's timed section on that GPU; on CPU the
    host, unlocked."""
    if device == "cuda":
        load_cuda_linalg(f"cuda:{lane.gpu}" if lane is not None and lane.gpu is not None else "cuda")
    if device != "cuda" or lane is None:
        yield device
        return
    lock = lane.new_lock()
    if lock is not None:
        lock.acquire("shared")
    try:
        yield f"cuda:{lane.gpu}" if lane.gpu is not None else "cuda"
    finally:
        # The parent's cached blocks (float64 references, widened outputs: GBs at attention
        # shapes) go back to the GPU, where the next workers need them.
        torch.cuda.empty_cache()
        if lock is not None:
            lock.release()


__all__ = ["comparing_on", "load_cuda_linalg"]
