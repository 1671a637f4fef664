"""The candidate's file lives only as long as its worker: nothing piles up across candidates."""

from __future__ import annotations

import os
import re

from hawkeye_env.judge.parent.evaluator import EvalConfig, Evaluator
from hawkeye_env.judge.parent.store import ResultStore
from hawkeye_env.judge.shared.verdict import Stage

# Static checks off: reading __file__ is forbidden to candidates, but this one only reports it.
REPORTS_ITS_PATH = """
import torch
from torch import nn


class ModelNew(nn.Module):
    def forward(self, a, b):
        raise RuntimeError("candidate file: " + __file__)
"""


def test_candidate_folder_is_removed_after_the_verdict():
    ev = Evaluator(ResultStore(":memory:"), EvalConfig(seed=0, static_checks=False))
    v = ev.evaluate("vector_add_fp32", REPORTS_ITS_PATH, "cpu")
    assert v.stage is Stage.RUNTIME_ERROR, v.feedback
    path = re.search(r"candidate file: (\S+\.py)", v.error).group(1)
    assert os.path.basename(os.path.dirname(path)).startswith("hawkeye-worker-")
    assert not os.path.exists(os.path.dirname(path))
