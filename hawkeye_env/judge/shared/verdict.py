"""The verdict: the one JSON contract every consumer of the evaluator reads.

``hawkeye check --json`` prints ``Verdict.to_json()``; the env's ``info``, the evals and the
training reward read the same object. It carries enough raw detail (times, errors per trial) to
recompute the reward without re-running anything.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from enum import Enum


class Stage(str, Enum):
    """How far a candidate got. Later stages imply the earlier ones passed."""

    REJECTED = "rejected"  # a violation (reward hack or forbidden construct) was detected
    NO_SOURCE = "no_source"  # empty text, prose, or no ``ModelNew``
    COMPILE_ERROR = "compile_error"  # syntax error, import error, constructor raised
    RUNTIME_ERROR = "runtime_error"  # forward raised, crashed, hung or ran out of memory
    INCORRECT = "incorrect"  # ran, but an output is wrong
    CORRECT = "correct"  # every check passed (timed on CUDA, untimed on CPU)


class Failure(str, Enum):
    """Why a verdict failed, where the stage alone does not say: what the retry, the store and the
    reward read instead of the error text. ``NONE`` for every verdict that is not such a failure."""

    NONE = ""
    JUDGE_ERROR = "judge_error"  # the judge itself failed or stalled: not stored, judged again next time
    TIMEOUT = "timeout"  # a worker ran past its time limit
    MEMORY = "memory"  # a worker went over its memory limit
    CRASH = "crash"  # a worker died (signal, ``os._exit``, device fault)
    BAD_REPLY = "bad_reply"  # a worker's message could not be decoded
    LANE_WAIT = "lane_wait"  # a worker never got its GPU lane
    NOT_CHECKABLE_ON_CPU = "not_checkable_on_cpu"  # kernels the CPU interpreter cannot run; the GPU judges them

    @classmethod
    def of(cls, name: str) -> Failure:
        """The member named ``name``; ``CRASH`` for a worker failure of any other name."""
        return cls(name) if name in cls._value2member_map_ else cls.CRASH


# A worker reports at most this many distinct violations (the first ones it saw); a reply with more
# was not written by the judge's worker (a million copies of one violation cost the parent tens of GB
# of verdict and feedback text).
MAX_VIOLATIONS = 64

# Violation codes: one per defence of docs/threat-model.md (its class number in the comment).
VIOLATION_CODES: dict[str, str] = {
    "forbidden_import": "imports a module that could escape the sandbox or patch the judge (#4, #6)",
    "forbidden_call": "calls a builtin or API that could patch, introspect or escape (#3, #4, #6)",
    "forbidden_attribute": "touches a private or patching attribute (#6)",
    "global_state": "writes module-level state from a function (global/nonlocal) (#7)",
    "torch_compute_op": "runs a torch compute op outside the task's allowlist (#8)",
    "no_kernel_launch": "forward launched no Triton kernel of its own or of a unit (#9)",
    "input_mutated": "forward changed an input tensor (#2)",
    "output_not_tensor": "an output is not an exact torch.Tensor with real storage (#5)",
    "threads_spawned": "forward left new threads or child processes behind (#4)",
    "judge_patched": "a timer or checker function was replaced (#6)",
    "stale_output": "the same model answered new inputs with a stale result (#7)",
    "stale_timed_output": "an output from the timed loop did not match its inputs (#7)",
    "impossible_time": "faster than the roofline floor allows (#15)",
    "timing_escape": "host wall clock far exceeds device events: work escaped the timed stream (#3)",
    "nondeterministic": "two runs on the same inputs disagree beyond tolerance (#16)",
    "forged_reply": "the worker's reply or messages do not fit the judge's plan: written by the candidate (#20)",
    "invalid_plan": "the recorded launch plan is malformed or breaks the task's rules (#20, #8)",
    "state_mutated": "forward changed a parameter or a tensor made before it: state that outlives the call (#7)",
}


@dataclass
class Violation:
    code: str
    message: str

    def __post_init__(self) -> None:
        if self.code not in VIOLATION_CODES:
            raise ValueError(f"unknown violation code {self.code!r}")


@dataclass
class Verdict:
    """Outcome of judging one candidate on one task on one device.

    ``speedup`` maps baseline name (``eager``, ``compile``, ``cublas``...) to baseline time over
    candidate time; it is empty when ``timed`` is false. ``times_ms`` holds the candidate's and the
    baselines' median times. ``vendor_baselines`` names the entries of both that come from the
    task's vendor libraries: reported, never scored (``scored_speedup`` leaves them out).
    ``baselines_unavailable`` maps a vendor baseline that could not run to the reason.
    ``trials`` has one row per correctness trial (shape, distribution, order, worst errors).
    ``protocols`` maps another benchmark's protocol, judged beside ours when the config asks for
    it, to its outcome (``"kernelbench"``: ``kernelbench_protocol.report``); a report, never
    read by the reward. ``instructions`` is the instruction evidence of a task whose precision is
    the point (``parent/decide/instructions.py``: ``required``, ``passed``, ``mma``, ``message``;
    empty for other tasks). ``timing`` holds, besides the candidate's timing fields, the speed of
    light of the timed shape (``sol_ms``, ``sol_fraction``: ``parent/decide/speed_of_light.py``).
    ``feedback`` is the text an agent reads.
    """

    task: str
    device: str
    stage: Stage
    compiled: bool = False
    correct: bool = False
    timed: bool = False
    violations: list[Violation] = field(default_factory=list)
    reward: float = 0.0
    reward_version: str = ""
    speedup: dict[str, float] = field(default_factory=dict)
    times_ms: dict[str, float] = field(default_factory=dict)
    timing: dict = field(default_factory=dict)
    trials: list[dict] = field(default_factory=list)
    error: str = ""
    feedback: str = ""
    source_hash: str = ""
    versions: dict[str, str] = field(default_factory=dict)
    wall_s: float = 0.0
    cached: bool = False
    profile: dict[str, float] = field(default_factory=dict)
    vendor_baselines: list[str] = field(default_factory=list)
    baselines_unavailable: dict[str, str] = field(default_factory=dict)
    protocols: dict[str, dict] = field(default_factory=dict)
    failure: Failure = Failure.NONE
    instructions: dict = field(default_factory=dict)

    @property
    def scored_speedup(self) -> dict[str, float]:
        """``speedup`` without the vendor baselines: the speedups the reward reads."""
        return {n: s for n, s in self.speedup.items() if n not in self.vendor_baselines}

    @property
    def best_speedup(self) -> float | None:
        """Speedup over the strongest (fastest) scored baseline, or None when untimed."""
        scored = self.scored_speedup
        return min(scored.values()) if scored else None

    def to_dict(self) -> dict:
        d = asdict(self)
        d["stage"] = self.stage.value
        d["failure"] = Failure(self.failure).value
        return d

    def to_json(self, **kwargs) -> str:
        return json.dumps(self.to_dict(), **kwargs)

    @classmethod
    def from_dict(cls, d: dict) -> Verdict:
        d = dict(d)
        d["stage"] = Stage(d["stage"])
        d["failure"] = Failure(d.get("failure", ""))
        d["violations"] = [Violation(**v) for v in d.get("violations", [])]
        return cls(**d)
