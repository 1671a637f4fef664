"""The messages between the judge's processes, as types: what the parent sends a worker (``Job``,
its ``Trial`` rows and ``TimingPlan``), what a worker or the replay sends back (``Reply``, its
``TrialRow`` rows, a recording's ``RecordedEntry`` plans) and the replay's job (``ReplayJob``).

These are ``TypedDict``s: the wire format stays plain dicts of plain values, pickled through
``torch.save`` (tensors inside), and every received one is still checked field by field by the
parent (``parent/validate/reply_check.py``, ``plan_check.py``), since a candidate that took over
its worker can send anything. The types say what each side writes and reads; they add no check.
"""

from __future__ import annotations

from typing import Literal, TypedDict

import torch

Device = Literal["cpu", "cuda"]
ReplyStage = Literal["ok", "compile_error", "runtime_error", "no_source"]


class Layout(TypedDict):
    """A non-contiguous input layout: one of ``shared/layouts.py``'s ``LAYOUTS``."""

    name: str


class Trial(TypedDict, total=False):
    """One correctness trial the parent plans (``parent/trial_plan.py``): the shape, the value
    distribution, the seed its inputs are drawn from, which of candidate and reference runs first,
    the layout (None: contiguous), whether the shape is hidden (not in the task spec), and for
    repeat trials the rerun and the call on fresh inputs, and ``carried``: how many unchecked calls
    on other inputs come between the first call and the call on fresh inputs, state carried
    (``parent/trial_plan.carried_calls``). ``protocol`` marks another benchmark's trial
    (``"kernelbench"``). ``warm`` marks a recording trial that records a model's second forward
    (``parent/record_replay.recording_trials``)."""

    shape: dict[str, int]
    distribution: str
    seed: int
    order: Literal["candidate_first", "reference_first"]
    layout: Layout | None
    hidden: bool
    rerun: bool
    carried: int
    protocol: str
    warm: bool


class TimingPlan(TypedDict, total=False):
    """How a GPU verdict times (``shared/timing_plan.py``): the seed of the kept and clock-check
    iterations, iterations per round, retry rounds, baselines (always empty for a candidate: they
    are timed by baseline-only workers) and KernelBench's own back-to-back timing."""

    seed: int
    iters: int
    retries: int
    baselines: list[str]
    kernelbench: dict


class Job(TypedDict, total=False):
    """What the parent sends a candidate worker: the task, the candidate's source, the device, the
    module name the source is imported as, the trials, the timing plan (None on CPU), the user task
    folders, and where and how large the reply may be (added by ``parent/launch/run_job.py``);
    ``record`` marks a recording job (``parent/record_replay.py``: plans, no outputs)."""

    task: str
    source: str
    device: Device
    module_name: str
    trials: list[Trial]
    timing: TimingPlan | None
    task_dirs: list[str]
    reply_limit_bytes: int
    workdir: str
    reply_path: str
    profile_dir: str
    record: bool


class RecordedEntry(TypedDict, total=False):
    """One recording trial's result: the launch plan (``shared/launch_plan.py``) and its kernels
    (GPU binaries, or on CPU source entries, ``shared/source_kernels.py``), or why the forward
    cannot be replayed (``refused``)."""

    plan: dict
    kernels: list[dict]
    refused: str


class ReplayJob(TypedDict, total=False):
    """What the parent sends the trusted replay: the job's trials and timing, and the checked plans
    of every recorded shape and layout (``launch_plan.to_job``); ``instructions`` asks for the
    kernels' machine-code facts beside the trials (a task whose precision is the point). A
    ``"profile"`` job (``sandboxed/replay/profile_job.py``) holds one checked plan, the ``shape``
    and ``seed`` of its forward, and whether to run Nsight Compute on it (``counters``, GPU)."""

    kind: Literal["replay", "profile"]
    task: str
    device: Device
    trials: list[Trial]
    timing: TimingPlan | None
    plans: list[dict]
    task_dirs: list[str]
    instructions: bool
    shape: dict[str, int]
    seed: int
    counters: bool


class FreshCall(TypedDict):
    """A repeat trial's call on fresh inputs: its outputs."""

    outputs: list[torch.Tensor]


class TrialRow(TypedDict, total=False):
    """One trial's outputs in a reply, in plan order; ``rerun`` and ``fresh`` exactly when the
    trial asks for repeats; ``error`` only for another protocol's trial (no outputs then);
    ``expected_dtypes`` the output dtypes the sender expects (the parent uses its own native
    reference's whenever it has one, ``parent/decide/checks.py``)."""

    outputs: list[torch.Tensor]
    expected_dtypes: list[str]
    rerun: list[torch.Tensor]
    fresh: FreshCall
    error: str


class Reply(TypedDict, total=False):
    """A worker's or the replay's final message: the stage it reached, its error text, the
    ``Failure`` it claims for a runtime error (only ``"not_checkable_on_cpu"``), the violations its
    guards saw as ``(code, message)`` pairs, the trial rows, the timing (GPU), its own step
    timings, and for a recording the plans (``RecordedEntry``, one per recording trial). The
    replay adds the kernels' machine-code facts (``kernels``: a profile; ``instructions``: a
    verdict's, ``{"kernels": [...]}`` or ``{"error": text}``) and a profile's Nsight Compute
    ``counters``."""

    kind: Literal["final"]
    stage: ReplyStage
    error: str
    failure: Literal["", "not_checkable_on_cpu"]
    violations: list[list[str]]
    trials: list[TrialRow]
    timing: dict
    profile: dict[str, float]
    plans: list[RecordedEntry]
    kernels: list[dict]
    instructions: dict
    counters: dict


__all__ = ["Device", "FreshCall", "Job", "Layout", "RecordedEntry", "Reply", "ReplayJob", "ReplyStage",
           "TimingPlan", "Trial", "TrialRow"]
