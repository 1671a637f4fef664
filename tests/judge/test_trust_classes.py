"""Judge-trust classes (docs/threat-model.md #19-#25) attempted by a candidate that controls its whole
worker process: each candidate under ``tests/candidates/trust/`` is judged end to end on CPU
with the static rules off (as a candidate that escaped them would run) and must not get a better
verdict than its kernels earn, nor change anything outside its own verdict.

These are the attempts the judge defeats. Attempts that succeeded when this module was written
(torch compute hidden from the recorder on CPU, a forged reply with right answers computed by
torch, a stalled or endless message stream that hangs the parent, scratch writes that bypass the
memory cap) are reported to the judge's owners instead of being pinned here.
"""

from __future__ import annotations

import json
import re
import site
import socket
import sqlite3
from pathlib import Path

import pytest

from hawkeye_env.judge.parent.evaluator import EvalConfig, Evaluator, evaluate_many
from hawkeye_env.judge.parent.launch import isolation
from hawkeye_env.judge.parent.store import ResultStore
from hawkeye_env.judge.shared.verdict import Stage, Verdict
from hawkeye_env.tasks.registry import get_task, solution_source
from reward.score import REWARD_COMPILE_ERROR, REWARD_VIOLATION

pytestmark = pytest.mark.skipif(
    isolation.mode() == isolation.OFF or isolation.probe() != "",
    reason=f"the OS sandbox is off or cannot run here: {isolation.probe() or 'HAWKEYE_SANDBOX=off'}",
)

TRUST = Path(__file__).parent.parent / "candidates" / "trust"
VECTOR_ADD, SOFTMAX = "vector_add_fp32", "softmax_fp32"


def _source(name: str) -> str:
    return (TRUST / f"{name}.py").read_text(encoding="utf-8")


def _evaluator(store: str = ":memory:", timeout_s: float = 120) -> Evaluator:
    return Evaluator(ResultStore(store), EvalConfig(seed=0, static_checks=False, timeout_s=timeout_s))


def _report(v: Verdict):
    found = re.findall(r"<REPORT>(.*?)</REPORT>", v.error, re.S)
    assert found, v.feedback
    return json.loads(found[-1])


def _rows(path: Path) -> list[tuple]:
    with sqlite3.connect(path) as db:
        return db.execute("SELECT task, source_hash, verdict FROM verdicts ORDER BY task, source_hash").fetchall()


def test_c19_a_patched_reference_does_not_change_the_expected_dtype():
    v = _evaluator().evaluate(VECTOR_ADD, _source("c19_reference_dtype_patch"), "cpu", use_cache=False)
    assert v.stage is Stage.INCORRECT and not v.correct, v.feedback
    assert any("dtype bfloat16 != expected float32" in t.get("reason", "") for t in v.trials), v.trials
    assert v.reward <= REWARD_COMPILE_ERROR


FORGED = (Stage.REJECTED, "")  # what a reply check that caught the forgery gives (forged_reply)
FORGERIES = {
    # forgery -> (stage, fragment of the verdict's violations, error or trial reasons) when seen,
    # or else FORGED. sparse, meta and huge_int reach the parent's comparison or profile and
    # raise there (a judge_error verdict for this candidate only); a reply check may catch them.
    # a recording job wants plans: trial rows are caught there (the trial-row checks, with the
    # replay off, are in test_malformed_reply.py)
    "zero_rows": (Stage.REJECTED, "no plans for"),
    "cpu_times": (Stage.REJECTED, "a recording reply with trial rows or timing"),
    "sparse": (Stage.RUNTIME_ERROR, "judge_error"),
    "meta": (Stage.RUNTIME_ERROR, "judge_error"),
    "complex": (Stage.INCORRECT, "dtype complex64 != expected float32"),
    "quantized": (Stage.INCORRECT, "dtype qint32 != expected float32"),
    "zero_dim": (Stage.INCORRECT, "shape () != expected"),
    "deep": (Stage.REJECTED, "nests more than 64"),  # refused before decoding (pickle_depth.py)
    "huge_int": (Stage.RUNTIME_ERROR, "judge_error"),
    # the depth check reads exactly the pickle torch.load reads, at no more cost (pickle_depth.py)
    "legacy": (Stage.RUNTIME_ERROR, "not a torch.save archive"),
    "deflated": (Stage.RUNTIME_ERROR, "compressed entries"),
    "decoy": (Stage.REJECTED, "nests more than 64"),
    "none_output": (Stage.INCORRECT, "an output is NoneType, not a tensor"),
    "tensor_timing": (Stage.REJECTED, "a recording reply with trial rows or timing"),
    # refused before decoding: keys that can be chosen to collide, a frame over the socket's bound
    "colliding_keys": (Stage.REJECTED, "keys that can be chosen to collide"),
    "frame_flood": (Stage.RUNTIME_ERROR, "exceeds the 67108864 byte limit"),
    "oversized_file": (Stage.RUNTIME_ERROR, "reply file of 300 MiB exceeds its limit of 256 MiB"),
}


def test_c20_c23_forged_replies_never_pass_and_cost_no_other_verdict(tmp_path):
    """Replies the candidate writes itself (fewer rows, chosen times, odd tensor kinds, deep or
    unrepresentable values): none is correct, the parent never raises out of the batch, and the
    honest candidate judged in the same batch keeps its correct, stored verdict."""
    template = _source("c20_forged_reply")
    kinds = list(FORGERIES)
    jobs = [(VECTOR_ADD, template.replace('FORGE = "zero_rows"', f'FORGE = "{k}"')) for k in kinds]
    honest = solution_source(get_task(VECTOR_ADD))
    store = tmp_path / "results.sqlite3"
    ev = _evaluator(str(store))
    verdicts = evaluate_many(ev, [*jobs, (VECTOR_ADD, honest)], device="cpu", use_cache=False)
    assert len(verdicts) == len(kinds) + 1
    for kind, v in zip(kinds, verdicts):
        stage, fragment = FORGERIES[kind] if v.stage is FORGERIES[kind][0] else FORGED
        text = " ".join([v.error, *(x.message for x in v.violations), *(t.get("reason", "") for t in v.trials)])
        assert v.stage is stage and not v.correct, (kind, v.feedback[:2000])
        assert fragment in text, (kind, text[:2000])
        assert v.reward <= REWARD_COMPILE_ERROR, kind
        if stage is Stage.REJECTED:
            assert [x.code for x in v.violations] == ["forged_reply"] and v.reward == REWARD_VIOLATION, kind
    assert verdicts[-1].stage is Stage.CORRECT, verdicts[-1].feedback
    stored = {h: json.loads(js) for _, h, js in _rows(store)}
    assert stored[verdicts[-1].source_hash]["stage"] == "correct"
    assert all(v.source_hash not in stored or stored[v.source_hash]["stage"] != "correct" for v in verdicts[:-1])


def test_c21_nothing_outside_the_scratch_folder_changes(tmp_path):
    store = tmp_path / "results.sqlite3"
    ev = _evaluator(str(store))
    honest = ev.evaluate(VECTOR_ADD, solution_source(get_task(VECTOR_ADD)), "cpu", use_cache=False)
    assert honest.stage is Stage.CORRECT, honest.feedback
    before, hostname = _rows(store), socket.gethostname()
    source = _source("c21_escape_probe").replace("@STORE_DIR@", str(tmp_path))
    v = ev.evaluate(VECTOR_ADD, source, "cpu", use_cache=False)
    assert v.stage is Stage.RUNTIME_ERROR and not v.correct, v.feedback
    report = _report(v)
    for key in ("store_dir", "sitecustomize", "pth"):
        assert "Read-only file system" in report[key], (key, report)
    assert not report["remount"].startswith("rc=0"), report
    assert max(report["pids"]) < 100, report  # its own PID namespace: the host's processes are not there
    # From outside: nothing was planted, the store's rows and the host name are unchanged.
    assert not (tmp_path / "planted.txt").exists()
    sp = Path(site.getsitepackages()[0])
    assert not (sp / "hawkeye_trust_sitecustomize.py").exists() and not (sp / "hawkeye_trust_planted.pth").exists()
    assert not Path("/hawkeye_trust_planted").exists()
    assert socket.gethostname() == hostname
    assert [r for r in _rows(store) if r[1] == honest.source_hash] == [r for r in before if r[1] == honest.source_hash]


def _autogroup() -> bool:
    try:
        return Path("/proc/sys/kernel/sched_autogroup_enabled").read_text().strip() == "1"
    except OSError:
        return False


@pytest.mark.skipif(not _autogroup(), reason="CPU fairness between sandboxes rests on the kernel's autogroup "
                    "scheduling here (the judge sets no CPU quota of its own), and it is off on this host")
def test_c22_a_spinning_batch_mate_does_not_time_out_the_others():
    adversary = (VECTOR_ADD, _source("c22_cpu_starvation"))
    honest = (SOFTMAX, solution_source(get_task(SOFTMAX)))
    ev = _evaluator(timeout_s=60)
    verdicts = evaluate_many(ev, [adversary, honest], device="cpu", use_cache=False)
    assert verdicts[1].stage is Stage.CORRECT, verdicts[1].feedback
    assert verdicts[1].wall_s < 45, verdicts[1].wall_s


def test_c24_every_judged_cpu_call_is_observed():
    """The candidate can tell that the recorder is on (it sees ``OpRecorder`` by name), but every
    judged call is the replay of a plan recorded under it (one call per shape and layout, never
    the ``CALLS`` it counts to), so its less-work branch never runs in a judged call: the verdict is
    what its full kernel computes."""
    v = _evaluator().evaluate(VECTOR_ADD, _source("c24_observed_only"), "cpu", use_cache=False)
    assert v.stage is Stage.CORRECT and not v.violations, v.feedback
    assert v.versions["replay"] == "replay"
    assert all(t.get("ok") for t in v.trials), v.trials


def test_c24_the_candidate_sees_the_recorder_on_every_call_of_its_own(monkeypatch):
    """With the replay off its own calls are the judged ones: each of them (trials, reruns, fresh
    inputs) runs under the recorder, which the candidate sees by name."""
    monkeypatch.setenv("HAWKEYE_REPLAY", "off")
    v = _evaluator().evaluate(VECTOR_ADD, _source("c24_observed_only"), "cpu", use_cache=False)
    seen = _report(v)
    assert v.stage is Stage.RUNTIME_ERROR and not v.correct
    assert len(seen) == 7 and set(seen) == {"OpRecorder"}, seen


def test_c25_nan_everywhere_is_incorrect():
    v = _evaluator().evaluate(SOFTMAX, _source("c25_nan_everywhere"), "cpu", use_cache=False)
    assert v.stage is Stage.INCORRECT and not v.correct, v.feedback
    assert any("NaN/Inf where the reference is not" in t.get("reason", "") for t in v.trials), v.trials
    assert v.reward <= REWARD_COMPILE_ERROR
