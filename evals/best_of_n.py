"""Best-of-N and multi-turn evaluation of a policy: sample, judge, score, report.

    hawkeye eval --policy search                       # the CLI front end (hawkeye_env/cli.py)
    python -c "from evals.best_of_n import run_eval; from policies import make_policy; \
               run_eval(make_policy('search'), ['vector_add_fp32'], n=3, out_dir='out/eval')"

Every trajectory is an episode of ``hawkeye/KernelOpt-v3`` (``max_turns=turns``), and all of them
are the sub-envs of one ``KernelOptVectorEnv`` (``hawkeye_env/vector.py``): the policy reads the
env's observation, so an evaluated policy sees exactly the prompt and the turn format it sees in
the env, the served env and training. For every task the policy samples ``n`` replies at turn 0
(``n`` trajectories), then one reply per trajectory and turn; each turn is one step of the vector
env, which judges the turn's candidates together through ``evaluate_many`` (``workers`` worker
processes at once) and gives each trajectory its next observation (current source, the judge's
feedback, the reply format). A reply that yields no source gets the env's ``no_source`` verdict
(nothing runs). Episodes run all ``turns`` (the target speedup is infinite), so later turns can
still speed up a correct kernel.

Policy failures are loud: a reply the policy reports as failed (``policy.errors``, e.g. the
OpenAI-compatible client after its retries) is not judged (its trajectory's turn passes with no
source); its candidate row has stage ``policy_error``, the error and no reward, no metric counts
it (rates, rewards and curves are over the obtained replies; ``policy_failures`` counts the rest),
the report and the plots say how many failed, ``results.json`` lists every failure under
``policy_errors``, and ``hawkeye eval`` exits 1. A policy that keeps raw replies (``policy.raw``)
has them written to ``raw_replies.jsonl``. When the policy samples at a temperature above 0 and a
task's samples of a turn are all the same text, a warning says so (``results.json``'s ``warnings``
and the report).

Resumable: every reply is appended to ``samples.jsonl`` as it arrives and every verdict is cached
in the results store under its source hash, so re-running an eval into the same ``out_dir`` (same
policy description, store and judge) asks the policy only for the replies it lacks and judges
nothing again (``evals/samples.py``).

Attributable: ``results.json``'s ``config`` (also the report's header and the W&B run's config)
records the policy's description (``policies.base.describe``: model, endpoint, temperature,
max tokens, seed...), ``n``, turns, context, device, the judge's configuration and software
versions (``versions``: judge source hash, reward version, torch, Triton, GPU), the reward
version and the repository's git commit.

Outputs under ``out_dir``: ``results.json`` (config, overall and per-task metrics),
``candidates.jsonl`` (one row per candidate), ``samples.jsonl`` (every reply, as it arrived),
``sources/<task>/<hash>.py``, ``raw_replies.jsonl`` (when the policy keeps them), the plots and
``report.md`` (``evals/plots.py``, ``evals/report.py``) and, unless disabled, a W&B run (``evals/wandb_log.py``).

Metrics (``evals/candidates.py``), per task and overall (pooled over candidates, or averaged over
tasks for curves): compile, correct and violation rates; fast_p at p in ``FAST_P`` against each
baseline found in the verdicts and against the fastest one (``best``); the geometric mean over tasks
of the best correct speedup; best-of-k curves (k = 1..n) of the trajectory's best reward and best
speedup; pass@k of correctness; the best reward reached by each turn. CPU verdicts are untimed, so
everything but the correct rate (fast_0) needs a GPU; ``results.json`` says so in ``timing_note``.
"""

from __future__ import annotations

import json
import logging
import math
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from gymnasium.vector.utils import iterate
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from evals.candidates import CPU_TIMING_NOTE, FAST_P, POLICY_ERROR, Candidate, judge_rate, summarise
from evals.provenance import git_commit
from evals.samples import SAMPLES_FILE, Request, SampleLog, identical_samples, sample_turn
from hawkeye_env.judge.parent.batch.backends import judge_device, judge_versions, make_judge
from hawkeye_env.judge.parent.evaluator import EvalConfig, Evaluator
from hawkeye_env.judge.parent.store import ResultStore, source_hash
from hawkeye_env.judge.shared.verdict import Stage, Verdict
from hawkeye_env.observation import CONTEXT_BUDGET_CHARS
from hawkeye_env.tasks.registry import get_task
from hawkeye_env.tasks.selection import select_tasks
from hawkeye_env.vector import KernelOptVectorEnv
from policies.base import Policy, describe
from reward import REWARD_VERSION

log = logging.getLogger(__name__)

#: A trajectory's key: ``(task id, sample)``.
_Key = tuple[str, int]


@dataclass
class _Trajectory:
    index: int  # its sub-env in ``_EvalRun.envs``
    obs: dict
    candidates: list[Candidate] = field(default_factory=list)


@dataclass
class _EvalRun:
    """One evaluation as ``run_eval``'s helpers share it: its settings, the judge, the replies'
    log, the trajectories by ``(task, sample)`` and the tallies the turns keep (the policy's error
    records, warnings, replies reused from the log, seconds spent sampling and judging)."""

    policy: Policy
    evaluator: Evaluator
    task_ids: list[str]
    n: int
    turns: int
    context: str
    device: str
    out: Path
    workers: int | None
    use_cache: bool
    gpus: int | None
    samples: SampleLog
    trajs: dict[_Key, _Trajectory] = field(default_factory=dict)
    envs: KernelOptVectorEnv | None = None
    policy_errors: list[dict] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    reused: int = 0
    sample_s: float = 0.0
    judge_s: float = 0.0


def as_store(store: ResultStore | str | Path | None) -> ResultStore:
    return store if isinstance(store, ResultStore) else ResultStore(store)


def baselines_ms(evaluator: Evaluator, task: str, device: str, versions: dict) -> dict[str, float]:
    """Stored baseline medians (ms) at the task's timed shape; empty on CPU or before any timed verdict."""
    if device != "cuda":
        return {}
    stored = evaluator.store.get_baselines(task, dict(get_task(task).gpu_shapes[0]), device, versions)
    return {name: row["median_ms"] for name, row in stored.items()}


def _candidate(task: str, sample: int, turn: int, source: str, v: Verdict) -> Candidate:
    edit_error = v.error if v.stage == Stage.NO_SOURCE else ""
    return Candidate(
        task=task, sample=sample, turn=turn, source_hash=source_hash(source), stage=v.stage.value,
        reward=v.reward, speedup=dict(v.speedup), violations=[x.code for x in v.violations],
        compiled=v.compiled, correct=v.correct, timed=v.timed, cached=v.cached, edit_error=edit_error,
    )


def _policy_observation(traj: _Trajectory, task: str, j: int, context: str) -> dict:
    """The env's observation as ``policies/base.py`` reads it."""
    obs = dict(traj.obs, task_id=task, trajectory=j, context=context, turn=int(traj.obs["turn"]))
    obs["last_compiled_source"] = obs["source"]  # the env keeps only sources that compiled
    return obs



def _start_trajectories(run: _EvalRun, context_budget_chars: int) -> None:
    """Open ``run.n`` episodes per task (``run.turns`` turns, an infinite target speedup) as the
    sub-envs of ``run.envs``, one ``KernelOptVectorEnv``, into ``run.trajs``, each holding its
    reset observation."""
    keys = [(task, j) for task in run.task_ids for j in range(run.n)]
    run.envs = KernelOptVectorEnv(
        len(keys), workers=run.workers, evaluator=run.evaluator, use_cache=run.use_cache, gpus=run.gpus,
        tasks=run.task_ids, device=run.device, context=run.context, context_budget_chars=context_budget_chars,
        max_turns=run.turns, target_speedup=math.inf)
    batched, _ = run.envs.reset(options={"task": [task for task, _ in keys]})
    for i, (key, obs) in enumerate(zip(keys, iterate(run.envs.observation_space, batched))):
        run.trajs[key] = _Trajectory(i, obs)


def _prefetch_baselines(run: _EvalRun) -> None:
    """On CUDA, every task's baselines first, all GPUs in parallel, so no task's candidates wait
    for them; the seconds are added to ``run.judge_s``."""
    if run.device == "cuda" and hasattr(run.evaluator, "prefetch_baselines"):
        t0 = time.monotonic()
        run.evaluator.prefetch_baselines(run.task_ids, run.device, run.gpus)
        run.judge_s += time.monotonic() - t0


def _run_turns(run: _EvalRun, progress: bool) -> None:
    """Play all ``run.turns`` turns of every trajectory, one progress bar per turn (rich bars,
    disabled unless ``progress``)."""
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  disable=not progress, transient=False) as bars:
        for turn in range(run.turns):
            _run_turn(run, turn, bars, progress)


def _run_turn(run: _EvalRun, turn: int, bars: Progress, progress: bool) -> None:
    """One turn of every trajectory: get the replies, step the vector env on them (a lost one as
    no reply), and record the outcomes."""
    replies, lost = _sample_replies(run, turn)
    actions = [replies.get(key, "") for key in run.trajs]
    observations = _step(run, turn, actions, len(run.trajs) - len(lost), bars, progress)
    _record_turn(run, turn, observations, lost)


def _sample_replies(run: _EvalRun, turn: int) -> tuple[dict[_Key, str], dict[_Key, str]]:
    """The replies of every trajectory at ``turn`` by key, and the lost ones (key -> the policy's
    error): at turn 0 one observation per task stands for its ``run.n`` samples, later each
    trajectory sends its own observation for one reply; replies already in ``run.samples`` are
    reused (``evals/samples.py``). Keeps the policy's error records and the warnings of identical
    samples in ``run``; the seconds are added to ``run.sample_s``."""
    t0 = time.monotonic()
    if turn == 0:
        requests = [Request(_policy_observation(run.trajs[task, 0], task, 0, run.context),
                            [(task, j) for j in range(run.n)]) for task in run.task_ids]
    else:
        requests = [Request(_policy_observation(run.trajs[key], *key, run.context), [key]) for key in run.trajs]
    got = sample_turn(run.policy, run.samples, requests, turn)
    run.policy_errors += got.records
    run.reused += got.reused
    for warning in identical_samples(got.replies, turn, describe(run.policy).get("temperature")):
        log.warning(warning)
        run.warnings.append(warning)
    run.sample_s += time.monotonic() - t0
    return got.replies, got.lost


def _step(run: _EvalRun, turn: int, actions: list[str], judged: int, bars: Progress, progress: bool) -> list[dict]:
    """Step ``run.envs`` on ``actions`` (one per trajectory, in ``run.trajs`` order), advancing a
    progress bar of ``judged`` candidates as their verdicts arrive (a log file rather than a
    terminal gets one line per verdict). Returns each trajectory's next observation; the seconds
    are added to ``run.judge_s``."""
    keys = list(run.trajs)
    bar = bars.add_task(f"turn {turn + 1}/{run.turns}: judging", total=judged)

    def on_verdict(i: int, v: Verdict) -> None:
        bars.advance(bar)
        if progress and not bars.console.is_terminal:  # a log file: one line per verdict
            task, j = keys[i]
            bars.console.print(f"{task} sample {j} turn {turn}: {v.stage.value}"
                               f"{' (store)' if v.cached else ''} in {v.wall_s:.1f} s", highlight=False)

    t0 = time.monotonic()
    run.envs.on_verdict = on_verdict
    batched = run.envs.step(actions)[0]
    bars.update(bar, completed=judged)  # those the env decided without the judge (no source)
    run.judge_s += time.monotonic() - t0
    return list(iterate(run.envs.observation_space, batched))


def _record_turn(run: _EvalRun, turn: int, observations: list[dict], lost: dict[_Key, str]) -> None:
    """Append every trajectory's candidate of ``turn`` and give it its next observation: a
    ``policy_error`` row for a ``lost`` reply (key -> the policy's error), else the verdict of its
    source (``last_steps``); each non-empty source is saved under ``run.out / "sources"``."""
    for key, state in run.trajs.items():
        state.obs = observations[state.index]
        if key in lost:
            state.candidates.append(Candidate(
                task=key[0], sample=key[1], turn=turn, source_hash="", stage=POLICY_ERROR, reward=None, speedup={},
                violations=[], compiled=False, correct=False, timed=False, cached=False, policy_error=lost[key]))
            continue
        source, verdict = run.envs.last_steps[state.index]
        state.candidates.append(_candidate(key[0], key[1], turn, source, verdict))
        if source:
            _save_source(run.out, key[0], source)


def _results(run: _EvalRun, by_task: dict[str, list[list[Candidate]]], candidates: list[Candidate],
             backend: str, versions: dict, context_budget_chars: int) -> dict:
    """The ``results.json`` dict of a finished run (``by_task``: each task's trajectories of
    candidates; ``candidates``: all of them) but for the total wall time, the plots and W&B."""
    errors = run.policy_errors
    policy = describe(run.policy)
    return {
        "config": {
            "policy": policy["name"], "policy_seed": policy.get("seed"), "policy_config": policy,
            "tasks": run.task_ids, "n": run.n, "turns": run.turns,
            "context": run.context, "context_budget_chars": context_budget_chars, "device": run.device,
            "workers": run.workers, "store": run.evaluator.store.path,
            "backend": backend, "gpus": run.gpus,
            "judge": run.evaluator.config.key(), "versions": versions,
            "reward_version": versions.get("reward") or REWARD_VERSION, "git_commit": git_commit(),
        },
        **summarise(by_task, run.turns),
        "timing_note": CPU_TIMING_NOTE if not any(c.timed for c in candidates) else "",
        "policy_errors": errors,
        "error": f"the policy failed {len(errors)} time(s); first: {errors[0].get('error')}" if errors else "",
        "warnings": run.warnings,
        "samples": {"file": SAMPLES_FILE, "reused": run.reused, "logged": len(run.samples)},
        "judge": judge_rate(candidates, run.judge_s, run.device, backend, run.gpus),
        "wall_s": {"sampling": run.sample_s, "judging": run.judge_s},
    }


def _write_rows(out: Path, candidates: list[Candidate], policy: Policy) -> None:
    """Write ``out/candidates.jsonl`` (one row per candidate) and, when the policy keeps its raw
    replies (``policy.raw``), append them to ``out/raw_replies.jsonl`` (a resumed run adds the
    replies it asked for to those of the runs before)."""
    with open(out / "candidates.jsonl", "w", encoding="utf-8") as f:
        for c in candidates:
            f.write(json.dumps(asdict(c), sort_keys=True) + "\n")
    raw = getattr(policy, "raw", None)
    if raw:
        with open(out / "raw_replies.jsonl", "a", encoding="utf-8") as f:
            for row in raw:
                f.write(json.dumps(row, sort_keys=True, default=str) + "\n")


def _write_report(results: dict, candidates: list[Candidate], out: Path, wandb_mode: str | None) -> None:
    """Make the plots and the W&B run (their names and W&B's summary are added to ``results``),
    then write ``out/report.md`` and ``out/results.json``."""
    from evals import plots, report, wandb_log

    pngs = plots.make_plots(results, candidates, out)
    results["plots"] = [p.name for p in pngs]
    results["wandb"] = wandb_log.log_run(results, candidates, pngs, out, wandb_mode)
    report.write_markdown(results, out)
    (out / "results.json").write_text(json.dumps(results, indent=1, sort_keys=True, default=str), encoding="utf-8")


def run_eval(
    policy: Policy, tasks: str | list[str] | None = None, n: int = 4, turns: int = 1, context: str = "docs",
    workers: int | None = None, out_dir: str | Path = "out/eval", device: str = "auto",
    store: ResultStore | str | Path | None = None, wandb_mode: str | None = None, progress: bool = True,
    config: EvalConfig | None = None, use_cache: bool = True, backend: str = "local",
    ray_address: str | None = None, gpus: int | None = None, context_budget_chars: int = CONTEXT_BUDGET_CHARS,
) -> dict:
    """Evaluate ``policy`` on ``tasks`` (ids or ``split:NAME``, as the env takes them; default: every
    registered task) and write the report.

    Args:
        policy: any ``policies.base.Policy``.
        n: trajectories (samples) per task.
        turns: replies per trajectory; turn t > 0 sees the trajectory's source and feedback.
        context: unit context mode of the prompt (``none``, ``docs``, ``units``, ``full``).
        workers: candidates judged at once (default: 2 on CPU, 4 per GPU; timed sections never
            share a GPU whatever the number).
        out_dir: where results, candidates, sources, plots, report and the W&B run go.
        device: ``cpu``, ``cuda`` or ``auto``.
        store: results store (or its path); default ``$HAWKEYE_STORE`` or the user cache.
        wandb_mode: ``offline``, ``online``, ``disabled`` or None (W&B's own configuration decides;
            ``evals.wandb_log.resolve_mode``).
        progress: show rich progress bars.
        config: judge configuration (part of the store key).
        use_cache: answer repeated candidates from the store.
        backend: ``local`` (this machine's worker pool) or ``ray`` (``hawkeye_env/judge/parent/batch/ray_backend.py``).
        ray_address: Ray cluster address for ``backend="ray"`` (None: a local Ray).
        gpus: local backend: how many visible GPUs to judge on (default all).
        context_budget_chars: unit context budget (the env's default).

    Returns the ``results.json`` dict.
    """
    start = time.monotonic()
    task_ids = list(select_tasks(tasks or None))
    for task in task_ids:
        get_task(task)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    evaluator = make_judge(backend, as_store(store), config or EvalConfig(), ray_address)
    device = judge_device(evaluator, device)
    versions = judge_versions(evaluator, device, task_ids[0])
    run = _EvalRun(policy=policy, evaluator=evaluator, task_ids=task_ids, n=n, turns=turns, context=context,
                   device=device, out=out, workers=workers, use_cache=use_cache, gpus=gpus,
                   samples=SampleLog(out / SAMPLES_FILE, describe(policy)))
    try:
        _start_trajectories(run, context_budget_chars)
        _prefetch_baselines(run)
        _run_turns(run, progress)
    finally:
        run.samples.close()
        if run.envs is not None:
            run.envs.close()
    by_task = {task: [run.trajs[task, j].candidates for j in range(n)] for task in task_ids}
    candidates = [c for trajs in by_task.values() for t in trajs for c in t]
    results = _results(run, by_task, candidates, backend, versions, context_budget_chars)
    _write_rows(out, candidates, policy)
    results["wall_s"]["total"] = time.monotonic() - start
    _write_report(results, candidates, out, wandb_mode)
    return results


def _save_source(out: Path, task: str, source: str) -> None:
    path = out / "sources" / task / f"{source_hash(source)[:16]}.py"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source, encoding="utf-8")


__all__ = ["FAST_P", "POLICY_ERROR", "Candidate", "as_store", "run_eval", "summarise"]
