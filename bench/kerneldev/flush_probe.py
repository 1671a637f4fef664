"""How the L2 state a timed call starts from moves a memory-bound GEMM's time, expert and vendor
side by side. CUDA only.

    python -m bench.kerneldev.flush_probe linear_decode_bf16:cublas gemm_skinny_bf16:cublas --out probe.json

The judge flushes the L2 before every timed call by writing twice its size (``timing.py``,
threat model #14), so each call starts with the L2 full of *dirty* lines that are written back to
DRAM while the call reads its operands. Each ``TASK:VENDOR`` pair (built as the judge builds them,
``launch_share.runners``) is timed under ``FLUSH_MODES``:

* ``dirty``: the judge's flush (``zero_`` of 2x the L2);
* ``clean``: the same write, then a read of another 2x-L2 buffer, so the L2 holds clean lines
  and nothing is written back during the call;
* ``warm``: no flush (the operands may stay in the L2 from the previous call).

Each mode: ``ITERS`` calls, each preceded by its flush and a synchronize, timed by CUDA events
around the call alone (behind a GPU spin, so launch time is hidden), over ``REPEATS`` repeats;
the JSON row holds each repeat's median (ms), the median of those, and the operand bytes over
that time (TB/s). Ratios between modes say how much of a kernel's time is the write-back; ratios
between expert and vendor within a mode say whether the gap follows the flush.
"""

from __future__ import annotations

import argparse
import json
import statistics

import torch

from bench.kerneldev.launch_share import runners
from bench.kerneldev.vendor_profile import pairs_on_cuda
from bench.provenance import provenance
from hawkeye_env.tasks.registry import get_task

FLUSH_MODES = ("dirty", "clean", "warm")
ITERS = 50  # the judge's iterations per timing round (timing.py)
REPEATS = 3
L2_FACTOR = 2  # as the judge's L2_FLUSH_FACTOR
# A GPU spin queued before each timed call, so the call's kernels are enqueued before its start
# event fires and the events time the kernels, not the Python launch (as the judge's hidden launch):
# 400k cycles is ~0.2 ms at the H200's 1.98 GHz, past any expert's launch (tens of microseconds).
SPIN_CYCLES = 400_000


def flusher(mode: str, l2_bytes: int, device: str = "cuda"):
    """A no-argument callable that leaves the L2 in ``mode``'s state (``FLUSH_MODES``); raises
    ``ValueError`` for an unknown mode. ``dirty`` and ``clean`` allocate ``L2_FACTOR`` x
    ``l2_bytes`` (uint8) once, ``clean`` twice that."""
    if mode not in FLUSH_MODES:
        raise ValueError(f"unknown flush mode {mode!r}; expected one of {', '.join(FLUSH_MODES)}")
    if mode == "warm":
        return lambda: None
    size = max(L2_FACTOR * l2_bytes, 1 << 20)
    written = torch.empty(size, dtype=torch.uint8, device=device)
    if mode == "dirty":
        return written.zero_
    read = torch.ones(size // 4, dtype=torch.int32, device=device)

    def clean() -> None:
        written.zero_()
        read.sum()  # evicts the written lines (written back now, outside the timed call)
    return clean


def time_mode(fn, inputs: list, flush) -> list[float]:
    """``REPEATS`` medians (ms) of ``ITERS`` event-timed calls of ``fn(*inputs)``, each after
    ``flush()`` and a synchronize."""
    medians = []
    for _ in range(REPEATS):
        times = []
        for _ in range(ITERS):
            flush()
            torch.cuda.synchronize()
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            torch.cuda._sleep(SPIN_CYCLES)
            start.record()
            fn(*inputs)
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end))
        medians.append(statistics.median(times))
    return medians


def l2_bytes() -> int:
    """The L2 size of CUDA device 0."""
    return torch.cuda.get_device_properties(0).L2_cache_size


def probe(task: str, vendor: str) -> list[dict]:
    """One row per (owner, mode): ``task``, ``owner`` (``expert`` or the vendor), ``mode``,
    ``repeat_ms``, ``median_ms``, ``tb_s`` (the task's operand bytes over ``median_ms``)."""
    spec = get_task(task)
    fns, unavailable, inputs, shape = runners(task, vendors=[vendor])
    if vendor not in fns:
        raise RuntimeError(f"{task}:{vendor} cannot run here: {unavailable.get(vendor, 'unavailable')}")
    moved = spec.bytes_moved(**shape)
    rows = []
    with torch.no_grad():
        for mode in FLUSH_MODES:
            flush = flusher(mode, l2_bytes())
            for owner in ("expert", vendor):
                for _ in range(3):  # compile and pick algorithms outside the timed calls
                    fns[owner](*inputs)
                ms = time_mode(fns[owner], inputs, flush)
                med = statistics.median(ms)
                rows.append({"task": task, "shape": shape, "owner": owner, "mode": mode, "repeat_ms": ms,
                             "median_ms": med, "tb_s": moved / (med * 1e-3) / 1e12})
            del flush
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pairs", nargs="+", help="TASK:VENDOR, e.g. linear_decode_bf16:cublas")
    parser.add_argument("--out", required=True, help="JSON file for the rows")
    args = parser.parse_args(argv)
    pairs = pairs_on_cuda(args.pairs, "flush_probe")
    if pairs is None:
        return 2
    rows = [row for task, vendor in pairs for row in probe(task, vendor)]
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump({**provenance("cuda", __spec__.name, argv), "l2_bytes": l2_bytes(), "rows": rows}, f, indent=1)
    for row in rows:
        print(f"{row['task']:24s} {row['owner']:8s} {row['mode']:6s} {row['median_ms'] * 1e3:8.1f} us "
              f"{row['tb_s']:5.2f} TB/s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
