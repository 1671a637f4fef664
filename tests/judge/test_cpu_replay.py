"""The CPU replay: kernels travel as source, the parent checks them, a fresh process rebuilds them.

What a candidate that controls its whole worker can send is data; each test below writes one such
entry (or a candidate that rewrites its own recorder) and asserts the defence that must hold: the
parent refuses a malformed entry (``source_check.sources_problem``), a kernel body the static
kernel rules refuse is a compile error (``rules_problem``), the replay binds nothing but checked
names (``source_rebuild``), and host work the plan does not carry never reaches the verdict.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hawkeye_env.judge.parent.evaluator import EvalConfig, Evaluator
from hawkeye_env.judge.parent.store import ResultStore
from hawkeye_env.judge.parent.validate.source_check import rules_problem, sources_problem
from hawkeye_env.judge.shared.source_kernels import kernel_module_text
from hawkeye_env.judge.shared.verdict import Stage
from hawkeye_env.tasks.registry import get_task, solution_source

HACKS = Path(__file__).parent.parent / "candidates" / "hacks"
TL = {"kind": "module", "name": "triton.language"}
ADD = ("def add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):\n"
       "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
       "    mask = offs < n\n"
       "    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)")


def entry(source: str = ADD, name: str = "add", **globals_) -> dict:
    return {"name": name, "source": source, "globals": {"tl": TL, **globals_}}


def test_an_honest_entry_passes_both_checks():
    kernels = [entry()]
    assert sources_problem(kernels) is None
    assert rules_problem(kernels) is None
    assert "@hawkeye_triton.jit\ndef add(" in kernel_module_text(kernels[0], kernels)


def test_a_helper_bound_before_an_import_still_leaves_the_import_surely_bound():
    """The judge's module puts imports and constants before the helpers' stub kernels (a decorator
    is a call, after which a module-level binding would not be surely bound)."""
    helper = entry("def helper(x):\n    return x", name="helper")
    caller = {"name": "add", "source": ADD.replace("tl.store(", "helper(n)\n    tl.store("),
              "globals": {"helper": {"kind": "jit", "index": 1}, "tl": TL}}
    assert sources_problem([caller, helper]) is None
    assert rules_problem([caller, helper]) is None


@pytest.mark.parametrize("kernels, reason", [
    ([entry(os={"kind": "module", "name": "os"})], "the binding of os (module) is malformed"),
    ([entry(b={"kind": "attr", "module": "builtins", "name": "open"})], "the binding of b (attr) is malformed"),
    ([entry(b={"kind": "attr", "module": "triton.language", "name": "_private"})], "(attr) is malformed"),
    ([entry(b={"kind": "unit", "module": "units..x", "name": "k"})], "the binding of b (unit) is malformed"),
    ([entry(b={"kind": "value", "value": {"a": 1}})], "the binding of b (value) is malformed"),
    ([entry(b={"kind": "jit", "index": 3})], "the binding of b (jit) is malformed"),
    ([entry(b={"kind": "code", "value": 1})], "unknown kind"),
    ([entry(**{"__builtins__": {"kind": "value", "value": 1}})], "a free name is not an identifier"),
    ([entry(source="@triton.jit\n" + ADD)], "not a plain def named add"),
    ([entry(source=ADD + "\n\n" + ADD.replace("def add", "def other"))], "the source is not one def"),
    ([entry(name="other")], "not a plain def named other"),
    ([entry(source="def add(*args):\n    pass")], "parameters other than"),
    ([entry(source="x = 1")], "the source is not one def"),
    ([entry(source="def add(:")], "the source does not parse"),
    ([entry(source="def add():\n    pass" + " " * (65 << 10))], "the source is not text within"),
    ([{"name": "add", "source": ADD}], "neither a source entry nor a unit reference"),
    ([{"name": "k", "unit": {"module": "os", "name": "k"}}], "a malformed unit reference"),
    ([], "the kernels are not a list of 1 to"),
])
def test_a_malformed_entry_is_refused_with_its_reason(kernels, reason):
    problem = sources_problem(kernels)
    assert problem is not None and reason in problem, problem


@pytest.mark.parametrize("body, reason", [
    ("    open('/etc/passwd')", "open"),
    ("    __import__('os').system('true')", "__import__"),
    ("    x = n.__class__", "__class__"),
    ("    raise ValueError(n)", "raise"),
    ("    f = lambda: n", "lambda"),
    ("    sink.append(n)", "append"),
])
def test_a_kernel_body_that_reaches_the_host_is_refused_before_the_replay(body, reason):
    source = "def add(x_ptr, n, BLOCK: tl.constexpr):\n" + body
    kernels = [entry(source, sink={"kind": "value", "value": 1})]
    assert sources_problem(kernels) is None
    problem = rules_problem(kernels)
    assert problem is not None and reason in problem, problem


def test_a_unit_host_function_is_never_bound_into_a_kernel(tmp_path):
    from hawkeye_env.judge.sandboxed.replay.source_rebuild import RebuildError, build_kernels

    os.environ.setdefault("TRITON_INTERPRET", "1")
    kernels = [entry(helper={"kind": "unit", "module": "units.lib.harness", "name": "main"})]
    with pytest.raises(RebuildError, match="units.lib.harness.main is not a Triton kernel"):
        build_kernels(kernels, str(tmp_path))
    missing = [entry(helper={"kind": "unit", "module": "units.lib.harness", "name": "no_such_kernel"})]
    with pytest.raises(RebuildError, match="no_such_kernel does not exist here"):
        build_kernels(missing, str(tmp_path))


@pytest.fixture(scope="module")
def ev() -> Evaluator:
    return Evaluator(ResultStore(":memory:"), EvalConfig(seed=3))


def test_an_expert_is_judged_through_the_cpu_replay(ev):
    v = ev.evaluate("softmax_fp32", solution_source(get_task("softmax_fp32")), "cpu", use_cache=False)
    assert v.stage is Stage.CORRECT, v.feedback
    assert v.versions["replay"] == "replay"
    assert any(k.startswith("replay.") for k in v.profile), v.profile


@pytest.mark.parametrize("file, stage, fragment", [
    # the answer computed on the host with every dispatch mode off, a kernel that only copies the
    # (poisoned) output onto itself: the replay runs the kernel alone
    ("h20_host_answer_modes_off", Stage.INCORRECT, "NaN/Inf"),
    # the recorder rewritten to ship a kernel whose body opens a file in the replay
    ("h20_forged_kernel_source", Stage.COMPILE_ERROR, "open"),
])
def test_a_candidate_that_takes_over_its_worker_cannot_change_its_cpu_verdict(ev, file, stage, fragment):
    v = ev.evaluate("vector_add_fp32", (HACKS / f"{file}.py").read_text(encoding="utf-8"), "cpu", use_cache=False)
    assert v.stage is stage, v.feedback
    assert fragment in v.feedback
    assert v.reward <= -0.5


def test_recording_entries_may_stop_at_a_refusal_and_nowhere_else():
    """A refusal decides the verdict, so the worker records no more shapes after one; a reply
    that stops early without one is forged."""
    from hawkeye_env.judge.parent.validate import reply_check

    job = {"trials": [{}, {}, {}]}
    head = {"stage": "ok", "error": "", "violations": [], "trials": [], "timing": {}, "profile": {}}
    assert reply_check.record_problem(job, {**head, "plans": [{"refused": "a host read"}]}) is None
    stopped = reply_check.record_problem(job, {**head, "plans": [{"plan": {}, "kernels": []}]})
    assert stopped == "1 plans for 3 recording trials"
    assert reply_check.record_problem(job, {**head, "plans": []}) == "0 plans for 3 recording trials"
