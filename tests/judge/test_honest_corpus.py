"""The honest-code corpus (``tests/candidates/honest/``): tutorial-, KernelBench- and
library-style candidates that do all their work in their own Triton kernels.

``test_corpus_is_correct_outside_the_judge`` runs each candidate in this process against its
task's reference (``honest_corpus.check_outside``): the corpus is correct by construction.
``test_corpus_accepted_by_the_judge`` judges it through the real ``Evaluator`` on CPU
(``evaluate_many``, two workers; ``SAMPLE_TASKS`` by default, all with ``--honest-corpus=all``):
every candidate must be ``correct`` with no violation, whatever idiom its host Python uses.
"""

from __future__ import annotations

from collections import Counter

import pytest

from hawkeye_env.judge.parent.evaluator import EvalConfig, Evaluator, evaluate_many
from hawkeye_env.judge.parent.store import ResultStore
from hawkeye_env.judge.shared.verdict import Stage
from tests.conftest import registry_restored
from tests.judge.honest_corpus import KERNELBENCH_PREFIX, STYLES, check_outside, corpus, import_kernelbench_tasks

CANDIDATES = corpus()
# What the judged test takes by default: every candidate of these tasks, in all three styles (an
# elementwise, a row reduction, a norm, a GEMM, a KernelBench level-1 and a level-2 problem), so a
# run of the suite stays short; ``pytest --honest-corpus=all`` judges the whole corpus here, and
# ``python -m bench.honest_corpus`` judges it for BENCHMARKS.md ("Honest code accepted").
SAMPLE_TASKS = frozenset({"vector_add_fp32", "softmax_fp32", "rmsnorm_bf16", "gemm_bf16", "kb_level1_1_relu",
                          "kb_level2_1_gemm_relu"})


def judged(config) -> list:
    """The candidates the judged test takes (``--honest-corpus``)."""
    if config.getoption("--honest-corpus") == "all":
        return CANDIDATES
    return [c for c in CANDIDATES if c.task in SAMPLE_TASKS]


def pytest_generate_tests(metafunc):
    if "judged_candidate" in metafunc.fixturenames:
        metafunc.parametrize("judged_candidate", judged(metafunc.config), ids=lambda c: c.id)


@pytest.fixture(scope="module")
def kernelbench_tasks(tmp_path_factory):
    """The KernelBench-format problems the corpus targets, registered for this module only."""
    with registry_restored():
        import_kernelbench_tasks({c.task for c in CANDIDATES}, tmp_path_factory.mktemp("honest_kb_tasks"))
        yield


@pytest.fixture(scope="module")
def verdicts(kernelbench_tasks, pytestconfig):
    """The judged candidates' verdicts on CPU, judged in one batch, by candidate id."""
    chosen = judged(pytestconfig)
    jobs = [(c.task, c.path.read_text()) for c in chosen]
    evaluator = Evaluator(ResultStore(":memory:"), EvalConfig(seed=0))
    found = evaluate_many(evaluator, jobs, "cpu", workers=2, use_cache=False)
    return {c.id: v for c, v in zip(chosen, found)}


def test_the_sample_spans_every_style():
    sample = [c for c in CANDIDATES if c.task in SAMPLE_TASKS]
    assert {c.style for c in sample} == set(STYLES) and len(sample) >= 15
    assert SAMPLE_TASKS <= {c.task for c in CANDIDATES}


def test_corpus_spans_styles_and_tasks():
    by_style = Counter(c.style for c in CANDIDATES)
    assert all(by_style[s] >= 20 for s in STYLES), by_style
    assert len({c.task for c in CANDIDATES}) >= 16
    assert sum(c.task.startswith(KERNELBENCH_PREFIX) for c in CANDIDATES) >= 6
    for c in CANDIDATES:
        doc = c.path.read_text().split("\n", 1)[0]
        assert doc.startswith('"""') and doc.endswith('"""') and len(doc) > 6, f"{c.id}: one-line docstring"


@pytest.mark.parametrize("candidate", CANDIDATES, ids=lambda c: c.id)
def test_corpus_is_correct_outside_the_judge(candidate, kernelbench_tasks):
    assert check_outside(candidate.task, candidate.path) == []


def test_corpus_accepted_by_the_judge(judged_candidate, verdicts):
    v = verdicts[judged_candidate.id]
    found = [f"{x.code}: {x.message}" for x in v.violations]
    assert v.stage == Stage.CORRECT and not v.violations, f"{v.stage.value}: {found or v.error}"
