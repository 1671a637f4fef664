"""The judge: candidate source in, ``Verdict`` out, across four kinds of process.

The folder a module sits in says which process runs it, and what it may import follows from that
folder alone (``tests/judge/test_trust_layout.py`` reads every import of every module, and imports
each process's entry modules in a fresh interpreter):

* ``shared/``: pure data and functions any process may import (verdict, launch plans, CPU kernel
  entries, inputs and layouts, timing plan fields); imports nothing else of the judge.
* ``parent/``: the TRUSTED judging process (the evaluator, trial plans, validation of every
  worker reply, the comparison, reward, feedback, store, batch backends, and the OS boundary it
  starts workers through). Never imports ``sandboxed/`` nor candidate code.
* ``zygote/``: the TRUSTED, unsandboxed forker of sandboxed workers; no candidate code reaches it.
* ``sandboxed/``: runs inside bubblewrap. ``common/`` (entry, serve loop, timing, the CPU
  interpreter's fixes), ``candidate/`` (UNTRUSTED: the only subtree that imports candidate code;
  it records launch plans), ``replay/`` (TRUSTED: runs the checked plans; cubins on the GPU,
  kernels rebuilt from checked source on CPU) and ``baseline/`` (TRUSTED: eager, compile and vendor
  baselines).

The public API is re-exported here lazily, so that a sandboxed process importing its own modules
never loads the parent's: ``Evaluator``, ``EvalConfig``, ``Verdict``, ``evaluate``,
``evaluate_many``.
"""

from __future__ import annotations

_PUBLIC = {
    "Evaluator": "hawkeye_env.judge.parent.evaluator",
    "EvalConfig": "hawkeye_env.judge.parent.eval_config",
    "evaluate": "hawkeye_env.judge.parent.evaluator",
    "evaluate_many": "hawkeye_env.judge.parent.evaluator",
    "Verdict": "hawkeye_env.judge.shared.verdict",
}


def __getattr__(name: str):
    if name not in _PUBLIC:
        raise AttributeError(f"module 'hawkeye_env.judge' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(_PUBLIC[name]), name)


__all__ = sorted(_PUBLIC)
