"""Weights & Biases logging of one best-of-N evaluation (``evals/best_of_n.py``).

One run per evaluation, written under ``out_dir`` (``dir=out_dir``): the config (``results.json``'s:
the policy's description with its model, endpoint and sampling parameters, the judge's and
reward's versions, the git commit), named after the policy and model; the overall and per-task
metrics, the policy's failures and the replies reused as the run summary, the curves (best-of-k
reward and speedup, pass@k, best reward by turn) as step series with ``k`` or ``turn`` on the x
axis, a table with every candidate and its verdict (or the policy's error), and the report's plots.

Modes: ``online`` (needs ``WANDB_API_KEY``; without it the run falls back to ``offline``),
``offline`` (files only; upload later with ``wandb sync <run dir>``, which is printed), and
``disabled`` (nothing, wandb not imported). W&B's own configuration decides unless a flag does
(``resolve_mode``): ``WANDB_MODE=disabled`` always wins, then an explicit mode, then
``WANDB_MODE``, then ``online`` when ``WANDB_API_KEY`` is set, else ``offline``. The run goes to
``$WANDB_DIR`` when it is set, else the evaluation's folder. wandb is optional: ``pip install
'hawkeye-env[dev]'``.
"""

from __future__ import annotations

import logging
import os
from dataclasses import asdict
from pathlib import Path

log = logging.getLogger(__name__)
INSTALL_HINT = "W&B logging needs wandb: pip install 'hawkeye-env[dev]' (or pip install wandb)"
MODES = ("online", "offline", "disabled")
PROJECT_ENV = "WANDB_PROJECT"
DEFAULT_PROJECT = "hawkeye-env"
TABLE_COLUMNS = ("task", "sample", "turn", "source_hash", "stage", "reward", "speedup", "violations", "compiled",
                 "correct", "timed", "cached", "edit_error", "policy_error")


#: W&B's own spellings of the modes (``WANDB_MODE`` accepts these too).
MODE_ALIASES = {"run": "online", "dryrun": "offline"}


def resolve_mode(mode: str | None = None) -> str:
    """The W&B mode of a run; ``mode`` is an explicit choice (None: W&B's configuration decides).

    ``WANDB_MODE=disabled`` wins over everything; then ``mode``; then ``WANDB_MODE``; then
    ``online`` with a ``WANDB_API_KEY``, else ``offline``. ``online`` without a key is ``offline``."""
    env_mode = os.environ.get("WANDB_MODE", "").strip().lower()
    env_mode = MODE_ALIASES.get(env_mode, env_mode)
    if env_mode and env_mode not in MODES:
        raise ValueError(f"WANDB_MODE must be one of {MODES}, not {env_mode!r}")
    if mode is not None and mode not in MODES:
        raise ValueError(f"wandb mode must be one of {MODES}, not {mode!r}")
    if env_mode == "disabled":
        return "disabled"
    mode = mode or env_mode or ("online" if os.environ.get("WANDB_API_KEY") else "offline")
    if mode == "online" and not os.environ.get("WANDB_API_KEY"):
        log.warning("WANDB_API_KEY is not set: logging the W&B run offline")
        return "offline"
    return mode


def _flatten(prefix: str, value, out: dict) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            _flatten(f"{prefix}/{k}" if prefix else str(k), v, out)
    elif isinstance(value, (int, float)) and not isinstance(value, bool) or value is None:
        out[prefix] = value


def run_name(cfg: dict) -> str:
    """``eval-<policy>[-<model>]-n<n>-t<turns>-<device>``; a model path or name by its last part."""
    model = str((cfg.get("policy_config") or {}).get("model") or "").rstrip("/").rsplit("/", 1)[-1]
    return f"eval-{cfg['policy']}{f'-{model}' if model else ''}-n{cfg['n']}-t{cfg['turns']}-{cfg['device']}"


def log_run(results: dict, candidates: list, plots: list[Path], out_dir: Path, mode: str | None = None) -> dict | None:
    """Log one evaluation; returns ``{"mode", "dir", "sync"}`` (``sync``: the upload command when
    offline) or None when disabled or wandb is missing."""
    mode = resolve_mode(mode)
    if mode == "disabled":
        return None
    try:
        import wandb
    except ImportError:
        log.warning(INSTALL_HINT)
        return None
    cfg = results["config"]
    run = wandb.init(
        project=os.environ.get(PROJECT_ENV, DEFAULT_PROJECT), dir=os.environ.get("WANDB_DIR") or str(out_dir),
        mode=mode, job_type="eval", name=run_name(cfg), config=cfg,
        settings=wandb.Settings(console="off", silent=True),
    )
    try:
        summary: dict = {}
        _flatten("", {"overall": {k: v for k, v in results["overall"].items() if not isinstance(v, list)},
                      "tasks": {t: {k: v for k, v in m.items() if not isinstance(v, list)}
                                for t, m in results["tasks"].items()},
                      "judge": results["judge"], "wall_s": results["wall_s"], "samples": results.get("samples", {}),
                      "warnings": len(results.get("warnings") or [])}, summary)
        run.summary.update({k: v for k, v in summary.items() if v is not None})
        for key, axis in (("best_of_k_reward", "k"), ("pass_at_k", "k"), ("best_of_k_speedup", "k"),
                          ("best_reward_by_turn", "turn")):
            run.define_metric(f"curve/{key}", step_metric=f"curve/{axis}")
            for i, value in enumerate(results["overall"].get(key) or [], 1):
                if value is not None:
                    run.log({f"curve/{axis}": i, f"curve/{key}": value})
        rows = []
        for c in candidates:
            row = asdict(c)
            row["speedup"] = ", ".join(f"{b}={s:.3f}" for b, s in sorted(row["speedup"].items()))
            row["violations"] = ", ".join(row["violations"])
            rows.append([row[col] for col in TABLE_COLUMNS])
        run.log({"candidates": wandb.Table(columns=list(TABLE_COLUMNS), data=rows)})
        run.log({f"plots/{p.stem}": wandb.Image(str(p)) for p in plots})
        run_dir = Path(run.dir).parent
    finally:
        run.finish()
    info = {"mode": mode, "dir": str(run_dir), "sync": f"wandb sync {run_dir}" if mode == "offline" else ""}
    if mode == "offline":
        print(f"W&B run saved offline; upload it with: wandb sync {run_dir}")
    return info
