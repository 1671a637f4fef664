"""A generator of tasks: a grammar of operators kernel engineers meet, written out in the task format.

``hawkeye tasks generate --n N --seed S --out DIR`` (``hawkeye_env/cli_tasks.py``) drafts ``N``
tasks of seed ``S`` and keeps those that pass the gates (``hawkeye_env/task_gates/``, which sit
above the judge and use its comparison rule). The modules here are the task layer's part:

* ``families/``: the grammar, one module per family of ops (elementwise chains, reductions,
  norms, softmax, GEMM with epilogues, attention, scans and recurrences, gathers and scatters,
  quantization); ``ops`` the pointwise vocabulary; ``dims`` the shapes (model dimensions for the
  GPU, small odd sizes for the CPU);
* ``draft`` (what a drafted task is), ``counts`` (its roofline floors), ``backward`` (its
  gradient variant), ``sampler`` (draft ``i`` of seed ``S``, the same everywhere);
* ``writer`` (a draft as ``DIR/<task_id>/task.py``);
* ``graph`` (the reference's operator graph traced, hashed and costed) and ``splits`` (train,
  validation and test by graph, held-out graphs, a difficulty estimate).

A folder written here is registered like any user task folder (``HAWKEYE_TASK_DIRS``, a folder or
an archive of it; ``tasks/task_dirs.py``) and selected by split (``tasks/selection.py``).
"""
