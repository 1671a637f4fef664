"""``EvalConfig``: the knobs of one evaluation, every one of them part of the store key (the
evaluator, the CLI, the env and the batch API take one; ``evaluator.py`` re-exports it)."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from hawkeye_env.judge.parent.decide import kernelbench_protocol
from hawkeye_env.judge.parent.trial_plan import PROTOCOLS


@dataclass(frozen=True)
class EvalConfig:
    """Knobs of one evaluation; all of them are part of the store key.

    Attributes:
        timeout_s: hard wall-clock limit for the worker (interpreter runs are slow on CPU).
        memory_limit_gb: host memory cap of the worker; exceeding it is a failed candidate. The
            default, 8 GiB on CPU and 48 GiB on CUDA, covers a CUDA context (~2 GiB) plus the
            outputs and float32 references of the GPU shapes crossing the pipe.
        iters: timed iterations per measurement on CUDA.
        retries: extra timing attempts while the coefficient of variation exceeds 0.05.
        baselines: judge baselines (``eager``, ``compile``) the candidate is timed against; the
            reward reads the speedup over the fastest of them.
        vendor_baselines: also time the task's ``vendor_baselines`` (cuBLAS, cuDNN, FLA...) on
            CUDA; reported in ``times_ms`` and ``speedup``, never in the reward.
        static_checks: run the fast filter (``static_checks.fast_filter``; off only to test the
            worker's and the replay's own defences).
        seed: fixes the trial seeds when set; by default every evaluation draws fresh ones.
        protocol: ``hawkeye`` judges by our trials alone; ``kernelbench`` also runs KernelBench's
            and records its outcome in ``verdict.protocols`` (``kernelbench_protocol.py``), never
            in the reward. ``kernelbench_atol``/``kernelbench_rtol``: its ``torch.allclose``
            tolerances, 1e-2 as KernelBench v0.1 (``kernelbench_protocol.STRICT_TOLERANCE``: 1e-4).
    """

    timeout_s: float = 300.0
    memory_limit_gb: float | None = None
    iters: int = 50
    retries: int = 2
    baselines: tuple[str, ...] = ("eager", "compile")
    vendor_baselines: bool = True
    static_checks: bool = True
    seed: int | None = None
    protocol: str = "hawkeye"
    kernelbench_atol: float = kernelbench_protocol.ATOL
    kernelbench_rtol: float = kernelbench_protocol.RTOL

    def __post_init__(self) -> None:
        if self.protocol not in PROTOCOLS:
            raise ValueError(f"unknown protocol {self.protocol!r}; known: {', '.join(PROTOCOLS)}")

    def memory_limit_bytes(self, device: str) -> int:
        """The worker's memory cap in bytes on ``device``: ``memory_limit_gb`` or its default."""
        return int((self.memory_limit_gb or (8.0 if device == "cpu" else 48.0)) * 2**30)

    def key(self) -> dict:
        d = asdict(self)
        d.pop("seed")
        if self.protocol == "hawkeye":  # the default's key is unchanged: its stored verdicts still hit
            del d["protocol"], d["kernelbench_atol"], d["kernelbench_rtol"]
        return d
