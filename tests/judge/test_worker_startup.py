"""What a judge's worker process loads before its candidate runs: no Gymnasium registration (the
judge marks its workers, ``registration.JUDGE_PROCESS_ENV``) and, after the trial's shape probe, no
sympy (``inputs.probe_inputs``); and the CPU split between start-up and job that every worker
reports in its verdict's profile (``worker.cpu_setup_s``, ``worker.cpu_job_s``)."""

from __future__ import annotations

import re

from hawkeye_env.judge.parent.evaluator import EvalConfig, Evaluator
from hawkeye_env.judge.parent.store import ResultStore
from hawkeye_env.judge.shared.verdict import Stage

# Static checks are off: they forbid ``import os`` and ``sys``, which this probe of its own process needs.
REPORTS = """
import os
import sys

import torch
from torch import nn


class ModelNew(nn.Module):
    def forward(self, a, b):
        raise RuntimeError("MARK=%s GYM=%s SYMPY=%s" % (os.environ.get("HAWKEYE_JUDGE_PROCESS"),
                                                         "gymnasium" in sys.modules, "sympy" in sys.modules))
"""


def test_a_worker_imports_neither_gymnasium_nor_sympy_before_its_candidate_runs():
    ev = Evaluator(ResultStore(":memory:"), EvalConfig(timeout_s=120, seed=0, static_checks=False))
    v = ev.evaluate("vector_add_fp32", REPORTS, "cpu", use_cache=False)
    assert v.stage == Stage.RUNTIME_ERROR, v.error
    found = re.search(r"MARK=(\w+) GYM=(\w+) SYMPY=(\w+)", v.error)
    assert found, v.error
    assert found.groups() == ("1", "False", "False")
    assert v.profile["worker.cpu_setup_s"] > 0.1  # at least the interpreter and torch's import
    assert v.profile["worker.cpu_job_s"] > 0.0  # its inputs were built and its forward called
