"""Device memory a forward makes on its first call and keeps (threat model #29): the repeat trial
replays a model's second forward, where such memory is a constant of the plan. An honest candidate
that keeps a workspace and a static output buffer this way is correct (two copies, so two draws of trials), its
outputs judged as each call left them; the count bomb kept the same way
(``h30_lazy_buffer_call_count``) is incorrect (``test_adversarial.py``)."""

from __future__ import annotations

from pathlib import Path

from hawkeye_env.judge.parent.evaluator import EvalConfig, Evaluator, evaluate_many
from hawkeye_env.judge.parent.store import ResultStore
from hawkeye_env.judge.shared.verdict import Stage

KEPT = Path(__file__).parent.parent / "candidates" / "stateful" / "vector_add_kept_buffers.py"


def test_buffers_kept_from_the_first_forward_are_judged_by_what_each_call_computes():
    source = KEPT.read_text(encoding="utf-8")
    jobs = [("vector_add_fp32", source + f"\n# copy {s}\n") for s in (0, 1)]
    verdicts = evaluate_many(Evaluator(ResultStore(":memory:"), EvalConfig(seed=0)), jobs, "cpu", workers=2,
                             use_cache=False)
    for v in verdicts:
        assert v.stage is Stage.CORRECT and not v.violations, (v.stage, v.error[:400], v.violations)
