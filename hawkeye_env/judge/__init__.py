"""The judge: candidate source in, ``Verdict`` out, across three kinds of process.

Which module runs where (``tests/judge/test_trust_layout.py`` checks that no process imports
another side's modules):

* **trusted parent** (never imports candidate code): ``evaluator`` (the one evaluator and the
  batch API; ``plan`` and ``versions`` plan its trials and key its verdicts), ``pool`` and
  ``lanes`` (batch scheduling, GPU locks), ``static_checks`` (the allowlist, a fast first filter;
  its lists in ``static_allowlist``), ``sandbox``, ``standby``,
  ``isolation`` and ``output_capture`` (starting and watching sandboxed workers),
  ``reply_check`` (every reply field against the parent's plan), ``references`` (float64 and
  native references from the trials' seeds), ``checks`` and ``correctness`` (the comparison),
  ``roofline``, ``feedback``, ``store``, the parent half of ``baselines`` (``measure_missing``,
  the store), ``backends`` and ``ray_backend``.
* **sandboxed candidate worker** (``worker_entry`` -> ``worker.serve``; imports the candidate):
  ``worker``, ``guards``, ``timing``, ``warmup``, ``cpu_backend``. What it reports is data the
  parent validates; nothing it computes is trusted except, on CPU, the outputs themselves (the
  interpreter runs kernels as Python, so a CPU verdict is a correctness filter).
* **baseline-only worker** (``worker_entry`` -> ``baselines.serve_baselines``; no candidate
  code, sandboxed too): ``baselines`` (timing half), ``timing``, ``warmup``.

Shared by all (pure data and functions, no state): ``verdict``, ``inputs``, ``hawkeye_env.tasks``.
"""
