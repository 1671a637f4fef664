"""Benchmarks of the judge and of the suite, and BENCHMARKS.md: what the judge costs and how
precise it is (``calibrate``, ``recheck_trials``, ``search``, ``throughput``, ``replay``,
``judge``), the task benchmark (``tasks``), and the document rendered from their results
(``benchmarks_doc``, ``tables``, ``benchmarks_template.md``). The product's own evaluation of a
policy lives one level up, in ``evals``; kernel-development sweeps in ``bench.kerneldev``."""
