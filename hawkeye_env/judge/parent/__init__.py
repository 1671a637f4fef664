"""The trusted judging process. It never imports candidate code nor any module under ``sandboxed/``:
whatever a worker sends is untrusted bytes, decoded and checked here.

``evaluator`` (the one evaluator and its batch API; knobs in ``eval_config``), ``trial_plan`` and
``hidden_shapes`` (the trials a verdict runs, drawn from its secret seed), ``record_replay`` (a
verdict's record -> check -> replay sequence), ``baselines`` (which baselines, the store that caches
them, the baseline-only worker that measures the missing ones), ``store`` (SQLite), ``versions``
(what a verdict is keyed on), ``lanes`` (GPU lanes and locks). Subfolders: ``batch/`` (local pool,
Ray), ``static/`` (the fast filter on a candidate's source and the rules on the kernel modules the
parent writes from a CPU plan), ``validate/`` (decoding and checking every reply and plan),
``decide/`` (references, comparison, tolerances, structure, stale hypothesis, KernelBench's
protocol, roofline, reward, feedback), ``launch/`` (the OS boundary: sandbox policy, starting,
watching and feeding sandboxed workers).
"""
