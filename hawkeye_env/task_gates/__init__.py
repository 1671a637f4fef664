"""The gates a generated task passes before it is kept, and the pipeline that runs them.

Each gate is a function that raises ``failure.GateFailure(code, detail)`` on the task it drops:

* ``conformance``: the curated tasks' conformance checks (spec, shapes, counts, unit tags), the
  GPU and a hidden GPU shape built on the meta device;
* ``reference``: the reference deterministic and finite on every input distribution;
* ``informative``: outputs not near constant, the native output within the tolerance, and zeros,
  a constant, a pass-through input, a lower-precision answer and another input's answer all
  rejected by the judge's own rule;
* ``baselines``: eager and ``torch.compile`` run.

They build trials with the judge's own functions (``trials``), so this package sits above the
judge, beside the CLI. ``pipeline.generate`` drafts, writes, gates, dedupes, splits and indexes a
distribution (``hawkeye tasks generate``); ``report`` is what it records.
"""
