"""Class 20 (forge the worker's reply): the candidate finds its worker's job (the ``_Run`` object)
and its connection to the parent through ``gc``, writes the reply file itself and announces it on
the connection, then exits before the judge's own reply is written. ``FORGE`` picks the forgery:

* ``zero_rows``: no trial rows at all (nothing to check: correct on any task if accepted);
* ``cpu_times``: right answers plus chosen times (1 ns) that the CPU job never asked for;
* ``sparse``, ``meta``, ``complex``, ``quantized``, ``zero_dim``: right answers sent as odd tensor
  kinds that are still ``type(o) is torch.Tensor``;
* ``deep``: right answers, plus an output list nested 400 levels deep in the first row;
* ``huge_int``: right answers and a worker profile entry of 10**400 (no float holds it);
* ``legacy``: right answers, written in torch's pre-zip format (several pickles in a row, of which
  a depth check of the first would see only the magic number);
* ``deflated``: right answers in a zip whose entries are deflate-compressed (a bomb inflates in
  the parent);
* ``decoy``: a zip with a shallow ``data.pkl`` in a subfolder, listed first, and a 400-deep one
  where torch reads it;
* ``none_output``: right answers but the first row's output is None;
* ``tensor_timing``: right answers and a tensor where the timing dict goes;
* ``colliding_keys``: right answers and a profile dict of 20,000 int keys that all hash to 0 (the
  parent would build it in time quadratic in its size, where no timeout reaches);
* ``frame_flood``: a frame on the connection that announces 1 GiB (the parent would hold it whole);
* ``oversized_file``: right answers in a reply file grown to 300 MiB (the parent reads it whole).

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
    from hawkeye_env.judge.sandboxed.candidate.worker import _Run

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
    from hawkeye_env.judge.parent.decide.references import build, native_reference
    from hawkeye_env.judge.shared.inputs import make_inputs
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


def _deep_pickle(depth):
    return (b"\x80\x02}" + b"X\x04\x00\x00\x00kind" + b"X\x05\x00\x00\x00final" + b"s"
            + b"N" + b"\x85" * depth + b"N" + b"s" + b".")


def _write(message, path):
    if FORGE == "legacy":
        torch.save(message, path, _use_new_zipfile_serialization=False)
        return
    if FORGE not in ("deflated", "decoy"):
        torch.save(message, path)
        return
    import zipfile

    buf = io.BytesIO()
    torch.save(message, buf)
    honest = zipfile.ZipFile(io.BytesIO(buf.getvalue()))
    entries = [(n, honest.read(n)) for n in honest.namelist()]
    if FORGE == "decoy":
        entries = [("archive/x/data.pkl", honest.read("archive/data.pkl")),
                   *[(n, _deep_pickle(400) if n == "archive/data.pkl" else d) for n, d in entries]]
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED if FORGE == "deflated" else zipfile.ZIP_STORED) as z:
        for name, data in entries:
            z.writestr(name, data)


def _flood():
    import struct
    import time

    os.write(_conn().fileno(), struct.pack("!i", -1) + struct.pack("!Q", 1 << 30) + bytes(1 << 20))
    time.sleep(60)


def _forge(reply):
    if FORGE == "frame_flood":
        _flood()
    job = _run_state().job
    _write({"kind": "final", **reply}, job["reply_path"])
    if FORGE == "oversized_file":
        os.truncate(job["reply_path"], 300 << 20)
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
        if FORGE == "none_output":
            reply["trials"][0]["outputs"] = [None]
        if FORGE == "tensor_timing":
            reply["timing"] = torch.ones(3)
        if FORGE == "colliding_keys":
            reply["profile"] = {k * (2**61 - 1): 0.0 for k in range(20000)}
        if FORGE == "huge_int":
            reply["profile"] = {"import_s": 10**400}
        _forge(reply)
