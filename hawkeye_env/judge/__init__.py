"""The judge: candidate source in, ``Verdict`` out, across four kinds of process.

Which module runs where (``tests/judge/test_trust_layout.py`` checks that no process imports
another side's modules):

* **trusted parent** (never imports candidate code): ``evaluator`` (the one evaluator and the
  batch API; ``eval_config`` its knobs; ``plan`` and ``versions`` plan its trials and key its
  verdicts), ``pool`` and
  ``lanes`` (batch scheduling, GPU locks), ``static_checks`` (the fast filter on a candidate's
  source, and the allowlist the parent holds the kernel modules it writes from a CPU plan to,
  ``source_kernels``;
  its walk in ``static_checker`` with ``static_syntax``, the candidate's classes in
  ``static_classes``, the text's rules in ``static_kernels``, what a kernel's body may do in
  ``static_kernel_bodies``,
  its lists in ``static_allowlist`` and ``static_foreign``, Python's scoping in ``static_scopes``,
  the modules a candidate reaches in ``static_modules``), ``sandbox`` (one job in a worker, watched to the end),
  ``worker_start`` (starting a worker for an entry point), ``standby`` (workers started before
  their job), ``isolation`` (the OS sandbox's policy and ``bwrap`` command line), ``spawn``
  (starting sandboxed processes), ``forkserver`` (workers forked from a pre-imported zygote into
  a sandbox a ``bwrap`` holder built), ``scratch`` (their scratch folders), ``host_memory`` (the memory
  they hold), ``output_capture`` (their stdout and stderr), ``reply_decode`` and ``pickle_depth``
  (decoding their messages safely),
  ``reply_check`` (every reply field against the parent's plan), ``replayed`` (a GPU verdict's
  recording worker, plan checks (``plan_check``) and replay, in order), ``comparing`` (where, and under which
  lock, a reply is compared), ``references`` (float64 and
  native references from the trials' seeds), ``checks`` and ``correctness`` (the comparison),
  ``kernelbench_protocol`` (KernelBench's trials and ``torch.allclose``, reported beside ours),
  ``roofline``, ``feedback``, ``finish`` (a verdict's reward and feedback, set in one place),
  ``store``, the parent half of ``baselines`` (``measure_missing``, the store), ``backends`` and
  ``ray_backend``.
* **sandboxed candidate worker** (``worker_entry`` -> ``worker.serve``; imports the candidate):
  ``worker``, ``guards`` (with ``poison``: a strided allocation's whole storage poisoned),
  ``plan_recorder`` (the launch plan of one forward per shape and layout; on CPU with
  ``interpreter_recorder``: kernels as source, launches on an empty grid),
  ``timing``, ``back_to_back``, ``warmup``. What it reports is data the parent validates;
  nothing it computes is trusted.
* **trusted replay** (``worker_entry`` -> ``replay.serve``; sandboxed, never imports candidate
  Python nor the candidate worker's modules): ``replay`` (CUDA: the plans' cubins loaded with
  Triton's own loader, ``replay_kernels``; CPU: the kernels rebuilt from their checked source by
  ``source_rebuild``;
  every trial and the timing run from the plans on the verdict's seeds),
  ``timing``, ``back_to_back`` (KernelBench's own timing, for its protocol), ``warmup``. Its reply
  has the candidate worker's format and is checked the same way.
* **baseline-only worker** (``worker_entry`` -> ``baselines.serve_baselines``; no candidate
  code, sandboxed too): ``baselines`` (timing half), ``timing``, ``warmup``.

Every started process: ``worker_entry``, ``worker_process`` (set-up, lane lock, standby
warm-up, framed replies), ``zygote`` (the pre-imported, unsandboxed process that forks workers of
one kind: no candidate code runs in it) with ``ns_enter`` (joining a holder's namespaces,
dropping every privilege), ``cuda_schedule`` (how its host waits for the GPU; the parent only
validates the setting) and, on CPU, ``interpreter_fixes`` (the interpreter runs what a GPU runs:
``cpu_backend``'s bf16 arithmetic, ``interpreter_calls``, ``interpreter_gaps`` with
``interpreter_libdevice`` and ``not_checkable``) and ``interpreter_bounds`` (a kernel's memory
accesses within its launch's tensors). Shared by all (pure data and functions, no state):
``verdict``, ``inputs`` (with ``layouts``), ``launch_plan`` (what a launch plan is) and
``source_kernels`` (what a CPU plan's kernel entry is; the parent's check of it), ``timing_plan``,
``hawkeye_env.tasks``.
"""
