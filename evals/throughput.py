"""Where a batch of verdicts spends its time: verdicts per minute (per GPU-minute on CUDA), each
stage's share, and the GPU's busy fraction, for a batch of a user's own candidates.

Every verdict's ``Verdict.profile`` holds the parent's and its processes' own step timings
(``parent/evaluator.py``, ``parent/record_replay.py``, the workers' ``profile`` replies); ``STAGES``
groups them into the stages of a verdict, in order:

==============  =============================================================================
stage           profile keys (seconds, summed)
==============  =============================================================================
queueing        waits for a lane or the GPU's locks (``*lane_wait_s``, ``*lane_shared_wait_s``)
static          the fast filter on the source
process start   holding a sandboxed process for the recording and for the replay
recording       the candidate worker: import, compile, one recording call per shape and layout
plan check      the parent's checks of every plan and kernel entry
replay set-up   the replay's own set-up and loading the plans' kernels
correctness     the replay's correctness trials
timed section   the replay's timing (GPU only)
baselines       measuring baselines the store did not hold (in a baseline-only worker)
comparison      the parent's references and comparison
==============  =============================================================================

The GPU's busy fraction is sampled from NVML (``torch.cuda.utilization``) while the batch runs,
when NVML is there; without it, the timed sections' share of the batch's GPU time is given instead,
and the report says which it is.
"""

from __future__ import annotations

import statistics
import threading
import time
from collections.abc import Iterable

STAGES: dict[str, tuple[str, ...]] = {
    "queueing": ("lane_wait_s", "compare_lane_wait_s", "worker.lane_wait_s", "worker.lane_shared_wait_s",
                 "replay.lane_wait_s", "replay.lane_shared_wait_s"),
    "static": ("static_s",),
    "process start": ("worker_start_s", "replay_start_s"),
    "recording": ("worker.worker_setup_s", "worker.import_s", "worker.trials_small_shape_s",
                  "worker.trials_large_shape_s"),
    "plan check": ("plan_check_s",),
    "replay set-up": ("replay.worker_setup_s", "replay.load_s"),
    "correctness": ("replay.trials_s",),
    "timed section": ("replay.timing_s",),
    "baselines": ("baseline_wait_s",),
    "comparison": ("compare_s",),
}


def stage_seconds(profile: dict[str, float]) -> dict[str, float]:
    """``profile`` (one verdict's) summed into ``STAGES``; keys it lacks count 0."""
    return {stage: sum(float(profile.get(k, 0.0)) for k in keys) for stage, keys in STAGES.items()}


class UtilizationSampler:
    """Samples every visible GPU's utilization (NVML, through ``torch.cuda.utilization``) every
    ``period_s`` in a background thread between ``start()`` and ``stop()``; ``fraction`` is the mean
    over samples and GPUs in [0, 1], or None when NVML could not be read."""

    def __init__(self, period_s: float = 0.5):
        self.period_s, self.samples, self._stop = period_s, [], threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="hawkeye-gpu-sampler")

    def _run(self) -> None:
        import torch

        while not self._stop.is_set():
            try:
                self.samples += [torch.cuda.utilization(i) / 100.0 for i in range(torch.cuda.device_count())]
            except Exception:  # noqa: BLE001 - no NVML (pynvml missing, a container without it)
                return
            self._stop.wait(self.period_s)

    def start(self) -> UtilizationSampler:
        self._thread.start()
        return self

    def stop(self) -> float | None:
        self._stop.set()
        self._thread.join(5)
        return statistics.fmean(self.samples) if self.samples else None


def report(verdicts: Iterable, wall_s: float, gpus: int, device: str, sampled_busy: float | None) -> dict:
    """The batch's figures: ``verdicts``, ``wall_s``, verdicts per minute and per GPU-minute (CUDA),
    each stage's total, median per verdict and share of the verdicts' summed stage time, and the
    GPU busy fraction with its ``busy_source`` (``"nvml"`` or ``"timed sections"``)."""
    verdicts = list(verdicts)
    per = [stage_seconds(v.profile) for v in verdicts if not v.cached]
    totals = {s: sum(p[s] for p in per) for s in STAGES}
    all_stages = sum(totals.values()) or 1.0
    out = {"device": device, "gpus": gpus, "verdicts": len(verdicts), "judged_fresh": len(per),
           "wall_s": wall_s, "verdicts_per_minute": 60.0 * len(verdicts) / wall_s if wall_s > 0 else None,
           "stages": {s: {"total_s": totals[s], "median_s": statistics.median(p[s] for p in per) if per else 0.0,
                          "share": totals[s] / all_stages} for s in STAGES},
           "stages_by_outcome": {}}
    for v in verdicts:
        out["stages_by_outcome"][v.stage.value] = out["stages_by_outcome"].get(v.stage.value, 0) + 1
    if device == "cuda":
        out["verdicts_per_gpu_minute"] = out["verdicts_per_minute"] / gpus if out["verdicts_per_minute"] else None
        if sampled_busy is not None:
            out["gpu_busy"], out["busy_source"] = sampled_busy, "nvml"
        else:
            out["gpu_busy"] = min(1.0, totals["timed section"] / (wall_s * gpus)) if wall_s > 0 else None
            out["busy_source"] = "timed sections"
    return out


def judge_batch(evaluator, jobs: list[tuple[str, str]], device: str, workers: int | None, gpus: int) -> dict:
    """Judge ``jobs`` (``(task, source)`` pairs) with ``evaluate_many``, the verdict cache bypassed,
    and ``report`` on it."""
    from hawkeye_env.judge import evaluate_many

    sampler = UtilizationSampler().start() if device == "cuda" else None
    started = time.monotonic()
    verdicts = evaluate_many(evaluator, jobs, device, workers=workers, use_cache=False,
                             gpus=gpus if device == "cuda" else None)
    wall = time.monotonic() - started
    busy = sampler.stop() if sampler is not None else None
    return report(verdicts, wall, gpus, device, busy)


__all__ = ["STAGES", "UtilizationSampler", "judge_batch", "report", "stage_seconds"]
