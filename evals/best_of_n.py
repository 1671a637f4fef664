"""Best-of-N and multi-turn evaluation of a policy: sample, judge, score, report.

    hawkeye eval --policy search                       # the CLI front end (hawkeye_env/cli.py)
    python -c "from evals.best_of_n import run_eval; from policies import make_policy; \
               run_eval(make_policy('search'), ['vector_add_fp32'], n=3, out_dir='out/eval')"

Every trajectory is an episode of ``hawkeye/KernelOpt-v2`` (``max_turns=turns``), and all of them
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
source); its candidate row has stage ``policy_error`` and the error, ``results.json`` lists
every failure under ``policy_errors``, and ``hawkeye eval`` exits 1. A policy that keeps raw
replies (``policy.raw``) has them written to ``raw_replies.jsonl``.

Resumable: every verdict is cached in the results store under its source hash, so re-running an
eval (same policy, seed and store) judges nothing again.

Outputs under ``out_dir``: ``results.json`` (config, overall and per-task metrics),
``candidates.jsonl`` (one row per candidate), ``sources/<task>/<hash>.py``, ``raw_replies.jsonl`` (when
the policy keeps them), the plots and
``report.md`` (``evals/report.py``) and, unless disabled, a W&B run (``evals/wandb_log.py``).

Metrics (``evals/candidates.py``), per task and overall (pooled over candidates, or averaged over
tasks for curves): compile, correct and violation rates; fast_p at p in ``FAST_P`` against each
baseline found in the verdicts and against the fastest one (``best``); the geometric mean over tasks
of the best correct speedup; best-of-k curves (k = 1..n) of the trajectory's best reward and best
speedup; pass@k of correctness; the best reward reached by each turn. CPU verdicts are untimed, so
everything but the correct rate (fast_0) needs a GPU; ``results.json`` says so in ``timing_note``.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from gymnasium.vector.utils import iterate
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from evals.candidates import CPU_TIMING_NOTE, FAST_P, POLICY_ERROR, Candidate, judge_rate, summarise
from hawkeye_env.judge.backends import judge_device, judge_versions, make_judge
from hawkeye_env.judge.evaluator import EvalConfig, Evaluator
from hawkeye_env.judge.store import ResultStore, source_hash
from hawkeye_env.judge.verdict import Stage, Verdict
from hawkeye_env.observation import CONTEXT_BUDGET_CHARS
from hawkeye_env.tasks.registry import get_task, list_tasks
from hawkeye_env.vector import KernelOptVectorEnv
from policies.base import Policy

#: A trajectory's key: ``(task id, sample)``.
_Key = tuple[str, int]


@dataclass
class _Trajectory:
    index: int  # its sub-env in ``_EvalRun.envs``
    obs: dict
    candidates: list[Candidate] = field(default_factory=list)


@dataclass
class _EvalRun:
    """One evaluation as ``run_eval``'s helpers share it: its settings, the judge, the
    trajectories by ``(task, sample)`` and the tallies the turns keep (the policy's error
    records, seconds spent sampling and judging)."""

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
    trajs: dict[_Key, _Trajectory] = field(default_factory=dict)
    envs: KernelOptVectorEnv | None = None
    policy_errors: list[dict] = field(default_factory=list)
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


def _policy_failures(policy: Policy, seen: int, turn: int) -> tuple[dict[tuple[str, int], int], list[dict]]:
    """The policy's error records after the first ``seen``: ``{(task, trajectory): missing samples}``
    for ``turn`` and the new records."""
    records = list(getattr(policy, "errors", None) or [])[seen:]
    failed: dict[tuple[str, int], int] = {}
    for r in records:
        if isinstance(r, dict) and r.get("turn", turn) == turn:
            key = (r.get("task_id"), int(r.get("trajectory", 0)))
            failed[key] = failed.get(key, 0) + int(r.get("missing", 1))
    return failed, records


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
    """One turn of every trajectory: sample the replies, keep the policy's new error records, step
    the vector env on the replies (a lost one as no reply), and record the outcomes."""
    replies = _sample_replies(run, turn)
    failed, records = _policy_failures(run.policy, len(run.policy_errors), turn)
    run.policy_errors += records
    lost = {key for key in run.trajs if replies[key] == "" and _lost(failed, key, turn, run.n)}
    observations = _step(run, turn, [replies[key] for key in run.trajs], len(run.trajs) - len(lost), bars, progress)
    _record_turn(run, turn, observations, lost, records)


def _sample_replies(run: _EvalRun, turn: int) -> dict[_Key, str]:
    """The policy's reply for every trajectory at ``turn``, by key: at turn 0 one observation per
    task yields its ``run.n`` samples, later each trajectory sends its own observation for one
    reply. The seconds are added to ``run.sample_s``."""
    t0 = time.monotonic()
    if turn == 0:
        observations = [_policy_observation(run.trajs[task, 0], task, 0, run.context) for task in run.task_ids]
        sampled = run.policy.sample(observations, run.n)
        replies = {(task, j): sampled[i][j] for i, task in enumerate(run.task_ids) for j in range(run.n)}
    else:
        keys = list(run.trajs)
        observations = [_policy_observation(run.trajs[key], *key, run.context) for key in keys]
        replies = {key: r[0] for key, r in zip(keys, run.policy.sample(observations, 1))}
    run.sample_s += time.monotonic() - t0
    return replies


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


def _record_turn(run: _EvalRun, turn: int, observations: list[dict], lost: set[_Key], records: list[dict]) -> None:
    """Append every trajectory's candidate of ``turn`` and give it its next observation: a
    ``policy_error`` row for a ``lost`` reply, else the verdict of its source (``last_steps``);
    each non-empty source is saved under ``run.out / "sources"``."""
    for key, state in run.trajs.items():
        state.obs = observations[state.index]
        if key in lost:
            state.candidates.append(_policy_error_candidate(key, turn, records))
            continue
        source, verdict = run.envs.last_steps[state.index]
        state.candidates.append(_candidate(key[0], key[1], turn, source, verdict))
        if source:
            _save_source(run.out, key[0], source)


def _policy_error_candidate(key: _Key, turn: int, records: list[dict]) -> Candidate:
    """The candidate row of the reply at ``key`` the policy failed to produce at ``turn``, carrying
    the error of the first of this turn's ``records`` that names it (at turn 0, its task)."""
    why = next((r["error"] for r in records if r.get("task_id") == key[0]
                and (turn == 0 or r.get("trajectory", 0) == key[1])), "the policy reported a failure")
    return Candidate(
        task=key[0], sample=key[1], turn=turn, source_hash="", stage=POLICY_ERROR, reward=-1.0,
        speedup={}, violations=[], compiled=False, correct=False, timed=False, cached=False,
        policy_error=why)


def _results(run: _EvalRun, by_task: dict[str, list[list[Candidate]]], candidates: list[Candidate],
             backend: str, versions: dict, context_budget_chars: int) -> dict:
    """The ``results.json`` dict of a finished run (``by_task``: each task's trajectories of
    candidates; ``candidates``: all of them) but for the total wall time, the plots and W&B."""
    errors = run.policy_errors
    return {
        "config": {
            "policy": getattr(run.policy, "name", type(run.policy).__name__),
            "policy_seed": getattr(run.policy, "seed", None),
            "tasks": run.task_ids, "n": run.n, "turns": run.turns,
            "context": run.context, "context_budget_chars": context_budget_chars, "device": run.device,
            "workers": run.workers, "store": run.evaluator.store.path,
            "backend": backend, "gpus": run.gpus,
            "judge": run.evaluator.config.key(), "versions": versions,
        },
        **summarise(by_task, run.turns),
        "timing_note": CPU_TIMING_NOTE if not any(c.timed for c in candidates) else "",
        "policy_errors": errors,
        "error": f"the policy failed {len(errors)} time(s); first: {errors[0].get('error')}" if errors else "",
        "judge": judge_rate(candidates, run.judge_s, run.device, backend, run.gpus),
        "wall_s": {"sampling": run.sample_s, "judging": run.judge_s},
    }


def _write_rows(out: Path, candidates: list[Candidate], policy: Policy) -> None:
    """Write ``out/candidates.jsonl`` (one row per candidate) and, when the policy keeps its raw
    replies (``policy.raw``), ``out/raw_replies.jsonl``."""
    with open(out / "candidates.jsonl", "w", encoding="utf-8") as f:
        for c in candidates:
            f.write(json.dumps(asdict(c), sort_keys=True) + "\n")
    raw = getattr(policy, "raw", None)
    if raw:
        with open(out / "raw_replies.jsonl", "w", encoding="utf-8") as f:
            for row in raw:
                f.write(json.dumps(row, sort_keys=True, default=str) + "\n")


def _write_report(results: dict, candidates: list[Candidate], out: Path, wandb_mode: str | None) -> None:
    """Make the plots and the W&B run (their names and W&B's summary are added to ``results``),
    then write ``out/report.md`` and ``out/results.json``."""
    from evals import report, wandb_log

    plots = report.make_plots(results, candidates, out)
    results["plots"] = [p.name for p in plots]
    results["wandb"] = wandb_log.log_run(results, candidates, plots, out, wandb_mode)
    report.write_markdown(results, out)
    (out / "results.json").write_text(json.dumps(results, indent=1, sort_keys=True, default=str), encoding="utf-8")


def run_eval(
    policy: Policy, tasks: list[str] | None = None, n: int = 4, turns: int = 1, context: str = "docs",
    workers: int | None = None, out_dir: str | Path = "out/eval", device: str = "auto",
    store: ResultStore | str | Path | None = None, wandb_mode: str | None = None, progress: bool = True,
    config: EvalConfig | None = None, use_cache: bool = True, backend: str = "local",
    ray_address: str | None = None, gpus: int | None = None, context_budget_chars: int = CONTEXT_BUDGET_CHARS,
) -> dict:
    """Evaluate ``policy`` on ``tasks`` (default: every registered task) and write the report.

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
        backend: ``local`` (this machine's worker pool) or ``ray`` (``hawkeye_env/judge/ray_backend.py``).
        ray_address: Ray cluster address for ``backend="ray"`` (None: a local Ray).
        gpus: local backend: how many visible GPUs to judge on (default all).
        context_budget_chars: unit context budget (the env's default).

    Returns the ``results.json`` dict.
    """
    start = time.monotonic()
    task_ids = list(tasks) if tasks else [s.id for s in list_tasks()]
    for task in task_ids:
        get_task(task)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    evaluator = make_judge(backend, as_store(store), config or EvalConfig(), ray_address)
    device = judge_device(evaluator, device)
    versions = judge_versions(evaluator, device, task_ids[0])
    run = _EvalRun(policy=policy, evaluator=evaluator, task_ids=task_ids, n=n, turns=turns, context=context,
                   device=device, out=out, workers=workers, use_cache=use_cache, gpus=gpus)
    _start_trajectories(run, context_budget_chars)
    _prefetch_baselines(run)
    _run_turns(run, progress)
    by_task = {task: [run.trajs[task, j].candidates for j in range(n)] for task in task_ids}
    candidates = [c for trajs in by_task.values() for t in trajs for c in t]
    results = _results(run, by_task, candidates, backend, versions, context_budget_chars)
    _write_rows(out, candidates, policy)
    run.envs.close()
    results["wall_s"]["total"] = time.monotonic() - start
    _write_report(results, candidates, out, wandb_mode)
    return results


def _lost(failed: dict[tuple[str, int], int], key: tuple[str, int], turn: int, n: int) -> bool:
    """Whether the empty reply at ``key`` is one the policy failed to produce: at turn 0 one
    observation stands for the task's ``n`` samples, of which the last ``missing`` were lost."""
    if turn > 0:
        return key in failed
    missing = failed.get((key[0], 0), 0)
    return key[1] >= n - missing


def _save_source(out: Path, task: str, source: str) -> None:
    path = out / "sources" / task / f"{source_hash(source)[:16]}.py"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source, encoding="utf-8")


__all__ = ["FAST_P", "POLICY_ERROR", "Candidate", "as_store", "run_eval", "summarise"]
