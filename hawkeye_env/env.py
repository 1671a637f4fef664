"""``hawkeye/KernelOpt-v3``: write or edit a Triton kernel for one task, judged by the one evaluator.

Each step turns the action text into candidate source (``hawkeye_env.edits.to_candidate``), judges it
with ``Evaluator.evaluate`` (a fresh sandboxed worker per new candidate) and returns the verdict's
reward and feedback. The observation text is built in ``hawkeye_env.observation``. Example::

    import gymnasium, hawkeye_env
    env = gymnasium.make("hawkeye/KernelOpt-v3", tasks=["vector_add_fp32"], store=":memory:")
    obs, info = env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step(my_llm(obs["prompt"]))
"""

from __future__ import annotations

import math
import multiprocessing
import os
from collections.abc import Sequence

import gymnasium
import numpy as np
import torch
from gymnasium import spaces

from hawkeye_env.edits import EditError, to_candidate
from hawkeye_env.judge.parent.decide.finish import no_source_verdict
from hawkeye_env.judge.parent.evaluator import Evaluator, resolve_device
from hawkeye_env.judge.parent.store import ResultStore
from hawkeye_env.judge.shared.verdict import Stage, Verdict
from hawkeye_env.observation import CHARSET, CONTEXT_BUDGET_CHARS, MAX_TEXT_CHARS, make_observation, render_task
from hawkeye_env.profile_action import NOTHING_TO_PROFILE, REPLY_OPTION, is_profile_request, profile_feedback
from hawkeye_env.tasks.registry import get_task
from hawkeye_env.tasks.selection import select_tasks
from hawkeye_env.tasks.spec import TaskSpec
from reward import REWARD_VERSION, REWARDS
from units.lib.index import CONTEXT_MODES, unit_context, units_for_tags

#: Smallest ``max_text_chars``: the system prompt, reply format and a task's reference must fit.
MIN_TEXT_CHARS = 16_384
#: Unit metrics the env can compute from a verdict's timing, and the task count each one divides.
_TIMED_METRICS = {"achieved_tbps": "bytes_moved", "achieved_tflops": "flops"}
#: ``units.lib.harness`` GPU reports per unit, shared by the envs of a process (the expert's figure is fixed).
_UNIT_REPORTS: dict[str, dict] = {}


class KernelOptEnv(gymnasium.Env):
    """Optimise a PyTorch reference into a Triton kernel over a few judged turns.

    ## Description
    Each episode is one task of the suite (``hawkeye tasks list``): a KernelBench-style ``Model`` to
    replace by a ``ModelNew`` whose work runs in Triton kernels. Every step submits a whole module or
    edits to the current one; the judge (``hawkeye_env.judge.Evaluator``) checks it in a
    sandboxed worker (float64 correctness over several shapes and distributions, reward-hack guards,
    CUDA timing against eager and torch.compile) and its verdict is the step's reward and feedback.

    ## Action Space
    ``Text(max_text_chars, min_length=0, charset=CHARSET)``; any ``str`` is accepted (the charset
    only bounds what ``sample()`` draws): a whole module, a fenced LLM reply, or SEARCH/REPLACE
    blocks against the current source. Text that yields no source (empty, prose, a malformed or
    non-matching SEARCH block, NUL bytes, lone surrogates) is never an exception: it gets a
    ``no_source`` verdict built without running anything, reward -1.0, the edit error as feedback.

    ## Observation Space
    ``Dict``: ``task`` (description, reference source, shapes, dtypes, device/GPU, allowed ops,
    tolerances, baseline times once a timed verdict reported them), ``units`` (unit context,
    ``units.unit_context(task.tags, context, context_budget_chars)``), ``source`` (current kernel
    source), ``feedback`` (last verdict's feedback plus env notes), ``prompt`` (system instructions,
    task, units, source, feedback and the exact reply format), ``messages`` (the same as JSON chat
    messages ``[system, user]``): each ``Text(max_text_chars, min_length=0, charset=CHARSET)``;
    ``turn`` ``Discrete(max_turns + 1)``; ``best_speedup`` ``Box(0, inf, (1,), float32)``, the best
    timed speedup over the fastest baseline this episode, 0 when nothing was timed. Strings are
    sanitized by ``observation.sanitize``: characters outside ``CHARSET`` (printable ASCII and its
    whitespace, plus ``observation.EXTRA_CHARS``) are written as ``\\xNN``/``\\uNNNN``/``\\UNNNNNNNN``,
    text over the limit is cut in the middle with a marker, so ``observation_space.contains(obs)``
    always holds.

    ## Rewards
    ``verdict.reward`` (reward v4, ``reward/score.py``): -1.0 violation or no source, -0.5 compile,
    runtime or correctness failure, 0.0 a CPU verdict the interpreter cannot check (``failure``
    ``not_checkable_on_cpu``), 0.2 correct and untimed (CPU, or a timing that missed the
    timer's precision), ``0.2 + 0.8 s / (1 + s)`` correct and timed with ``s`` the speedup of
    device time (the host launch kept out, reported in ``timing`` and the feedback) over the
    fastest judge baseline. Unit metrics in the feedback (CUDA, when ``units.lib.harness`` has
    ``measure_unit_gpu``) are diagnostic only: weight 0 in v3. ``reward="sol-v1"`` pays by the
    fraction of the task's speed of light instead (``0.2 + 0.8 f``; a timed verdict whose kernels
    never issue the task's precision, ``Verdict.instructions``, paid 0.2): every version of
    ``reward.REWARDS`` is selectable by its exact name, and ``info["reward_version"]`` names it.

    ## Starting State
    ``reset(seed=None, options=None)``: ``options["task"]`` picks the task, otherwise it is drawn
    from ``tasks`` with ``self.np_random`` (same seed, same task); ``options["source"]`` starts from
    that source (default empty). ``feedback`` is empty and ``turn`` is 0.

    ## Episode End
    Terminated when the verdict is correct and ``best_speedup >= target_speedup``; with
    ``target_speedup=None`` the first correct verdict terminates (on any device). CPU verdicts are
    untimed (``best_speedup`` stays 0), so on CPU a numeric target never terminates: pass ``None``
    there to stop at the first correct kernel. Truncated after ``max_turns`` steps otherwise.

    ## Arguments
    ``tasks`` (ids to draw from, a split such as ``"split:train"``, or a list mixing both; default all
    registered), ``evaluator`` (an ``Evaluator`` to share)
    or ``store`` (a results-store path or ``":memory:"`` for a new one; pass a path, not an
    evaluator, through ``gymnasium.make`` when the spec is re-made, since specs deep-copy kwargs),
    ``device`` (``auto``, ``cpu``, ``cuda``), ``context`` (``none``, ``docs``, ``units``, ``full``),
    ``context_budget_chars`` (``observation.CONTEXT_BUDGET_CHARS``, 12000), ``max_turns`` (4),
    ``target_speedup`` (1.0 or None),
    ``max_text_chars`` (200000), ``render_mode`` (None or ``"ansi"``: last feedback and a status line),
    ``reward`` (a ``reward.REWARDS`` version; default the current, v4), ``allow_profile`` (False: the
    ``PROFILE`` action, ``hawkeye_env.profile_action``, re-submits the current source and adds its
    kernels' profile to the feedback; off by default, so the default episode is the one its id names).

    Vector envs: ``gymnasium.make_vec("hawkeye/KernelOpt-v3", num_envs=N,
    vectorization_mode="vector_entry_point", ...)`` gives ``hawkeye_env.vector.KernelOptVectorEnv``,
    which judges a step's candidates of all N envs in one ``evaluate_many`` batch (duplicates once,
    correctness checks in parallel, timed sections one per GPU). ``SyncVectorEnv`` needs nothing
    special but judges one env after another. Use ``AsyncVectorEnv(fns,
    shared_memory=False, daemon=False)``: ``Text`` spaces have no shared-memory form, and each
    judged step starts worker processes, which a daemonic process may not. Any start method works
    (``fork``, ``forkserver``, ``spawn``); a forked env judges through ``spawn``-started workers.

    ## Version History
    * v2: reward v3 (speedups of device time alone, the host launch reported and not paid); on
      CUDA outputs and times come from the trusted replay of the candidate's launch plan.
    * v1: reward v2 (speedups of device time, or of the host launch when longer; an imprecise
      measurement is paid as untimed); candidates run in the OS sandbox.
    * v0: reward v1; observation fields ``task``, ``units``, ``source``, ``feedback``, ``prompt``,
      ``messages``, ``turn``, ``best_speedup``.
    """

    metadata = {"render_modes": ["ansi"], "render_fps": 1}

    def __init__(
        self,
        tasks: Sequence[str] | None = None,
        evaluator: Evaluator | None = None,
        store: str | os.PathLike | None = None,
        device: str = "auto",
        context: str = "docs",
        context_budget_chars: int = CONTEXT_BUDGET_CHARS,
        max_turns: int = 4,
        target_speedup: float | None = 1.0,
        max_text_chars: int = MAX_TEXT_CHARS,
        render_mode: str | None = None,
        reward: str = REWARD_VERSION,
        allow_profile: bool = False,
    ):
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None or one of {self.metadata['render_modes']}")
        if evaluator is not None and store is not None:
            raise ValueError("pass an evaluator or a store path, not both")
        if context not in CONTEXT_MODES:
            raise ValueError(f"context must be one of {CONTEXT_MODES}, not {context!r}")
        if max_turns < 1 or max_text_chars < MIN_TEXT_CHARS:
            raise ValueError(f"need max_turns >= 1 and max_text_chars >= {MIN_TEXT_CHARS}")
        if multiprocessing.current_process().daemon:
            raise RuntimeError(
                "KernelOptEnv judges candidates in worker processes, which a daemonic process cannot "
                "start; build vector envs with AsyncVectorEnv(..., shared_memory=False, daemon=False)"
            )
        self.tasks = select_tasks(tasks)  # ids, "split:train" (tasks/selection.py) or None: every task
        self._owns_store = evaluator is None
        self.evaluator = evaluator if evaluator is not None else Evaluator(ResultStore(store))
        self.device = resolve_device(device)
        self.gpu = torch.cuda.get_device_name() if self.device == "cuda" else ""
        self.context, self.context_budget_chars = context, context_budget_chars
        self.max_turns, self.target_speedup, self.max_text_chars = max_turns, target_speedup, max_text_chars
        self.render_mode = render_mode
        if reward not in REWARDS:
            raise ValueError(f"reward must be one of {sorted(REWARDS)}, not {reward!r}")
        self.reward_version, self.allow_profile, self._profiling = reward, bool(allow_profile), False

        def text() -> spaces.Text:
            return spaces.Text(max_text_chars, min_length=0, charset=CHARSET)

        self.observation_space = spaces.Dict({
            "task": text(), "units": text(), "source": text(), "feedback": text(), "prompt": text(),
            "messages": text(), "turn": spaces.Discrete(max_turns + 1),
            "best_speedup": spaces.Box(0.0, np.inf, shape=(1,), dtype=np.float32),
        })
        self.action_space = text()
        self._units: dict[str, str] = {}
        self._task: TaskSpec | None = None
        self._source = self._feedback = ""
        self._turn, self._best, self._done = 0, 0.0, False
        self._baselines: dict[str, float] = {}
        self._last: Verdict | None = None

    @property
    def task_id(self) -> str | None:
        """The current episode's task id (None before the first ``reset``)."""
        return self._task.id if self._task is not None else None

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        options = dict(options or {})
        unknown = set(options) - {"task", "source"}
        if unknown:
            raise ValueError(f"unknown reset options {sorted(unknown)}; known: task, source")
        task_id = options.get("task")
        if task_id is None:
            task_id = self.tasks[int(self.np_random.integers(len(self.tasks)))]
        source = options.get("source") or ""
        if not isinstance(source, str):
            raise TypeError(f"options['source'] must be a str, not {type(source).__name__}")
        self._task = get_task(task_id)
        self._source, self._feedback = source, ""
        self._turn, self._best, self._done = 0, 0.0, False
        self._baselines, self._last = {}, None
        return self._observation(), {"task": self._task.id, "turn": 0, "best_speedup": 0.0,
                                     "reward_version": self.reward_version}

    def step(self, action: str):
        candidate, verdict = self.prepare_step(action)
        if verdict is None:
            verdict = self.evaluator.evaluate(self._task.id, candidate, self.device)
        return self.finish_step(candidate, verdict)

    def prepare_step(self, action: str) -> tuple[str, Verdict | None]:
        """First half of ``step``: advance the turn and turn ``action`` into candidate source.

        Returns ``(source, None)`` when the source needs judging, or ``("", verdict)`` with the
        ``no_source`` verdict of an action that yielded none. ``KernelOptVectorEnv`` judges the
        sources of all its envs in one ``evaluate_many`` batch between the two halves."""
        if self._task is None:
            raise RuntimeError("call reset() before step()")
        if self._done:
            raise RuntimeError("the episode is over; call reset()")
        if isinstance(action, bytes):
            action = action.decode("utf-8", errors="replace")
        if not isinstance(action, str):
            raise TypeError(f"an action is a str, not {type(action).__name__}")
        self._turn += 1
        self._profiling = self.allow_profile and is_profile_request(action)
        if self._profiling:  # re-submits the current source (profile_action.py)
            return (self._source, None) if self._source else ("", self._unjudged(EditError(NOTHING_TO_PROFILE)))
        try:
            return self._candidate(action), None
        except (EditError, ValueError, RecursionError) as exc:
            return "", self._unjudged(exc)

    def finish_step(self, candidate: str, verdict: Verdict):
        """Second half of ``step``: apply ``verdict`` of ``candidate``; the usual step tuple."""
        notes = []
        if verdict.compiled:
            self._source = candidate
        elif verdict.stage == Stage.NO_SOURCE:
            notes.append("The action gave no usable source, so the current source is unchanged.")
        else:
            why = "was rejected before it ran" if verdict.stage == Stage.REJECTED else "did not compile"
            notes.append(f"The candidate {why}, so the current source is still the previous one.")
        if verdict.timed:
            self._baselines = {k: v for k, v in verdict.times_ms.items() if k != "candidate"}
            s = verdict.best_speedup
            if verdict.correct and s is not None and math.isfinite(s) and s > 0:
                self._best = max(self._best, float(s))
        if verdict.correct:
            notes += unit_metric_lines(self._task, verdict)
        paid = float(verdict.reward) if self.reward_version == verdict.reward_version else \
            float(REWARDS[self.reward_version](verdict))
        if self.reward_version != verdict.reward_version:
            notes.append(f"Reward under {self.reward_version} (this env's): {paid:.3f}.")
        profile = {}
        if self._profiling and verdict.compiled:
            text, profile = profile_feedback(self.evaluator, self._task.id, candidate, self.device)
            notes.append(text)
        self._profiling = False
        self._feedback = "\n".join([verdict.feedback, *notes])
        self._last = verdict
        terminated = bool(verdict.correct and (self.target_speedup is None or self._best >= self.target_speedup))
        truncated = not terminated and self._turn >= self.max_turns
        self._done = terminated or truncated
        info = {
            "verdict": verdict.to_dict(), "source": candidate, "current_source": self._source,
            "task": self._task.id, "turn": self._turn, "best_speedup": self._best,
            "reward_version": self.reward_version,
        }
        if profile:
            info["profile"] = profile
        return self._observation(), paid, terminated, truncated, info

    def render(self) -> str | None:
        if self.render_mode != "ansi":
            return None
        return f"{self._feedback or '(no attempt yet)'}\n{self._status()}\n"

    def close(self) -> None:
        if self._owns_store:
            self.evaluator.store.close()

    def _candidate(self, action: str) -> str:
        """Source for ``action``; ``EditError`` for text the judge could not even parse."""
        source = to_candidate(self._source or None, action)
        if "\x00" in source:
            raise EditError("the source contains NUL characters (\\x00), which Python source cannot")
        try:
            source.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise EditError(f"the source is not valid UTF-8 text ({exc.reason} at character {exc.start})") from None
        return source

    def _unjudged(self, exc: Exception) -> Verdict:
        """The ``no_source`` verdict of an action that yielded no source; nothing is run or stored."""
        why = str(exc) if isinstance(exc, EditError) else f"{type(exc).__name__}: {exc}"
        return no_source_verdict(self._task.id, self.device, why)

    def _status(self) -> str:
        v = self._last
        verdict = f"{v.stage.value}, reward {v.reward:.3f}" if v else "no verdict yet"
        lines = self._source.count("\n") + bool(self._source and not self._source.endswith("\n"))
        return (f"[{self._task.id if self._task else '-'}] turn {self._turn}/{self.max_turns} | {verdict} | "
                f"best speedup {self._best:.2f}x | source {lines} lines")

    def _observation(self) -> dict:
        task = self._task
        if task.id not in self._units:
            self._units[task.id] = unit_context(task.tags, self.context, self.context_budget_chars)
        return make_observation(
            render_task(task, self.device, self.gpu, self._baselines), self._units[task.id], self._source,
            self._feedback, context=self.context, turn=self._turn, max_turns=self.max_turns,
            best_speedup=self._best, max_length=self.max_text_chars,
            reply_options=REPLY_OPTION if self.allow_profile else "",
        )


def unit_metric_lines(spec: TaskSpec, verdict: Verdict) -> list[str]:
    """Feedback lines comparing a timed, correct candidate with its units' expert metric.

    Only on CUDA. The candidate's figure is computed from the verdict (task bytes or FLOPs at the
    timed shape over its median time), so no candidate code runs outside the judge's worker; the
    unit solution's figure comes from ``hawkeye_env.units_verify`` measuring the unit at its own GPU shape in
    a subprocess (this process never initialises CUDA), once per process. Metrics that need a
    profiler on the candidate (Nsight counters) are listed as not measured.
    """
    if verdict.device != "cuda" or not verdict.timed or not verdict.times_ms.get("candidate"):
        return []
    from hawkeye_env.units_verify import verify_in_subprocess
    shape = dict(spec.gpu_shapes[0])
    seconds = verdict.times_ms["candidate"] * 1e-3
    lines = []
    for unit in units_for_tags(spec.tags):
        metric = unit.metric
        if metric is None or metric.name not in _TIMED_METRICS:
            lines.append(f"- {unit.name}: {metric.name if metric else 'no metric'} is not measured by the env")
            continue
        value = getattr(spec, _TIMED_METRICS[metric.name])(**shape) / seconds / 1e12
        try:
            if unit.name not in _UNIT_REPORTS:
                _UNIT_REPORTS[unit.name] = verify_in_subprocess([unit.name], "gpu")[0]
            expert = _UNIT_REPORTS[unit.name]["values"].get("solution")
        except Exception as exc:  # diagnostics are optional: a harness failure never fails a step
            lines.append(f"- {unit.name}: not measured ({type(exc).__name__}: {exc})")
            continue
        if not expert:
            lines.append(f"- {unit.name}: the unit solution's {metric.name} is unavailable")
            continue
        verdict_word = "meets" if metric.passes(value, expert) else "misses"
        lines.append(
            f"- {unit.name}: {value:.3f} {metric.unit} at {shape} vs the unit solution's {expert:.3f} "
            f"{metric.unit} at {dict(unit.gpu_shapes[0])} ({value / expert:.0%}; {verdict_word} the "
            f"{metric.pass_fraction:.0%} pass rule)"
        )
    return ["Unit metrics (diagnostic, weight 0 in reward v3):", *lines] if lines else []


__all__ = ["KernelOptEnv", "unit_metric_lines"]
