"""Class 20 (forge the worker's reply): the candidate finds its worker's job (the ``_Run`` object)
and its connection to the parent through ``gc``, writes the reply file itself and announces it on
the connection, then exits before the judge's own reply is written. ``FORGE`` picks the forgery:

* ``zero_rows``: no trial rows at all (nothing to check: correct on any task if accepted);
* ``cpu_times``: right answers plus chosen times (1 ns) that the CPU job never asked for;
* ``sparse``, ``meta``, ``complex``, ``quantized``, ``zero_dim``: right answers sent as odd tensor
  kinds that are still ``type(o) is torch.Tensor``;
* ``deep``: right answers, plus an output list nested 400 levels deep in the first row;
* ``huge_int``: right answers and a worker profile entry of 10**400 (no float holds it).

What stops it: ``reply_check`` validates the reply against the parent's own plan (one row per
planned trial, no timing on CPU): ``forged_reply``; an odd tensor kind fails the comparison or
the parent's error boundary (a runtime-error verdict for this candidate only, never correct).
"""

import gc
import io
import os
from multiprocessing.connection import Connection

import torch
from torch import nn

FORGE = "zero_rows"


def _run_state():
    from hawkeye_env.judge.worker import _Run

    return next(o for o in gc.get_objects() if isinstance(o, _Run))


def _conn():
    return next(o for o in gc.get_objects() if isinstance(o, Connection) and not o.closed)


def _odd(t):
    if FORGE == "sparse":
        return t.to_sparse()
    if FORGE == "meta":
        return torch.empty_like(t, device="meta")
    if FORGE == "complex":
        return t.to(torch.complex64)
    if FORGE == "quantized":
        return torch.quantize_per_tensor(t.float(), 0.01, 0, torch.qint32)
    if FORGE == "zero_dim":
        return t.sum()
    return t


def _right_rows(job):
    """The task's own torch reference, run in the worker: right answers without any kernel."""
    from hawkeye_env.judge.inputs import make_inputs
    from hawkeye_env.judge.references import build, native_reference
    from hawkeye_env.tasks.registry import get_task, task_module

    spec = get_task(job["task"])
    rows = []
    for t in job["trials"]:
        ref, inputs = build(spec, t["shape"], t["distribution"], t["seed"], "cpu")
        out = [_odd(o) for o in native_reference(ref, inputs)]
        row = {"outputs": out}
        if t.get("rerun"):
            fresh = make_inputs(task_module(spec), t["shape"], t["distribution"], t["seed"] + 1, "cpu")
            row["rerun"] = out
            row["fresh"] = {"outputs": [_odd(o) for o in native_reference(ref, fresh)]}
        rows.append(row)
    return rows


def _forge(reply):
    job = _run_state().job
    torch.save({"kind": "final", **reply}, job["reply_path"])
    buf = io.BytesIO()
    torch.save({"kind": "final", "reply_file": True}, buf)
    _conn().send_bytes(buf.getvalue())
    os._exit(0)


class ModelNew(nn.Module):
    def forward(self, *inputs):
        job = _run_state().job
        reply = {"stage": "ok", "error": "", "violations": [], "timing": {}}
        if FORGE == "zero_rows":
            reply["trials"] = []
        elif FORGE == "cpu_times":
            reply["trials"] = _right_rows(job)
            reply["timing"] = {"candidate": {"median_ms": 1e-6, "iqr_ms": 0.0, "cv": 0.0,
                                             "wall_median_ms": 1e-6, "attempts": 1, "kept": []}}
        else:
            reply["trials"] = _right_rows(job)
        if FORGE == "deep":
            nested = []
            for _ in range(400):
                nested = [nested]
            reply["trials"][0]["outputs"] = nested
        if FORGE == "huge_int":
            reply["profile"] = {"import_s": 10**400}
        _forge(reply)
