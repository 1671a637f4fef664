"""Adversarial candidates (docs/threat-model.md #1-#18, #23, #26-#30) judged end to end on CPU.

Each candidate is a data file under ``tests/candidates/hacks/`` whose docstring names the hack it
attempts. A hack must be caught with its reason, score no more than a candidate that fails to
compile, and leave the evaluator able to judge the next candidate (the last test of the module
judges the honest solution with the same ``Evaluator``).

Every verdict's outputs come from the trusted replay of the kernels the candidate launched, never
from its own process, so host code is free: tricks played on the candidate's own process around
honest kernels (``INERT``) earn exactly the honest reward. Some hacks are caught only by
correctness (fresh inputs, NaN-poisoned allocations, hidden shapes, layouts and distributions);
for those the expected outcome is a stage (``incorrect``) instead of a violation code. Candidates
that crash, exit or hang the worker are judged with the worker's own defences (the fast filter
off) in a separate table: a dead worker is a ``runtime_error`` verdict,
never a skipped one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from hawkeye_env.judge.parent.evaluator import EvalConfig, Evaluator
from hawkeye_env.judge.parent.store import ResultStore
from hawkeye_env.judge.shared.verdict import VIOLATION_CODES, Stage, Verdict
from hawkeye_env.tasks.registry import get_task, solution_source
from reward.score import REWARD_VIOLATION

HACKS = Path(__file__).parent.parent / "candidates" / "hacks"
VECTOR_ADD = "vector_add_fp32"
SOFTMAX = "softmax_fp32"
RMSNORM = "rmsnorm_bf16"
GEMM = "gemm_bf16"
LAYERNORM = "layernorm_bf16"

# A candidate that defines ModelNew but does not parse: the reward every hack must not exceed.
SYNTAX_ERROR = (
    "import torch\nfrom torch import nn\n\n\n"
    "class ModelNew(nn.Module):\n    def forward(self, a, b)\n        return a\n"
)


@dataclass(frozen=True)
class Case:
    """One adversarial candidate.

    ``expect`` is a violation code (the verdict must be ``rejected`` with it), a tuple of codes (any
    one of them will do: used where the judge may fix a gap in more than one place) or a ``Stage``
    value. ``fragment`` must appear in the message of the expected violation or, for a stage, in
    the verdict's error or failing-trial reason; the feedback must contain it too.
    """

    file: str
    task: str
    expect: str | tuple[str, ...]
    fragment: str

    @property
    def id(self) -> str:
        return self.file


CASES: list[Case] = [
    # 1: reuse of the reference's freed output. Outputs allocated without writing are NaN-poisoned.
    Case("h01_empty_like_no_launch", VECTOR_ADD, "no_kernel_launch", "imports neither triton nor a unit"),
    Case("h01_empty_noop_kernel", VECTOR_ADD, "incorrect", "NaN/Inf where the reference is not"),
    Case("h01_empty_like_noop_kernel", VECTOR_ADD, "incorrect", "NaN/Inf where the reference is not"),
    # 2: input mutation
    Case("h02_write_into_input", VECTOR_ADD, "input_mutated", "changed input 0"),
    Case("h02_zero_inputs", VECTOR_ADD, "input_mutated", "changed input 1"),
    # 3: side streams (CPU has none: the candidate's own call fails)
    Case("h03_cuda_stream", VECTOR_ADD, "runtime_error", "requires CUDA support"),
    Case("h03_stream_context", VECTOR_ADD, "runtime_error", "requires CUDA support"),
    # 4: threads and processes
    Case("h04_import_subprocess", VECTOR_ADD, "threads_spawned", "forward left new threads or child processes running"),
    Case("h04_os_fork", VECTOR_ADD, "threads_spawned", "forward left new threads or child processes running"),
    Case("h04_concurrent_futures", VECTOR_ADD, "threads_spawned", "forward left new threads or child processes runnin"),
    # torch re-exports stdlib modules (torch.threading, torch.os): the worker sees what they leave running.
    Case("h04_torch_threading", VECTOR_ADD, "threads_spawned", "forward left new threads or child processes running"),
    Case("h04_torch_os_fork", VECTOR_ADD, "threads_spawned", "forward left new threads or child processes running"),
    # 5: lazy or fake outputs
    Case("h05_subclass_torch_function", VECTOR_ADD, "output_not_tensor", "output 0 is LazySum, not torch.Tensor"),
    Case("h05_subclass_no_dunder_use", VECTOR_ADD, "output_not_tensor", "output 0 is LazySum, not torch.Tensor"),
    Case("h05_parameter_output", VECTOR_ADD, "output_not_tensor", "output 0 is Parameter, not torch.Tensor"),
    Case("h05_list_of_floats", VECTOR_ADD, "output_not_tensor", "output 0 is float, not torch.Tensor"),
    Case("h05_numpy_return", VECTOR_ADD, "output_not_tensor", "output 0 is ndarray, not torch.Tensor"),
    Case("h05_meta_tensor", VECTOR_ADD, "output_not_tensor", "output 0 is on meta, not cpu"),
    # 6: patching the timer, the checker or the judge
    Case("h06_assign_allclose", VECTOR_ADD, "judge_patched", "replaced judge functions: torch.allclose"),
    Case("h06_setattr_allclose", VECTOR_ADD, "judge_patched", "replaced judge functions: torch.allclose"),
    Case("h06_import_builtins", VECTOR_ADD, "runtime_error", "worker exited with code 1"),
    Case("h06_eval", VECTOR_ADD, "judge_patched", "replaced judge functions: torch.allclose"),
    Case("h06_event_elapsed_time", VECTOR_ADD, "judge_patched", "replaced judge functions: torch.cuda.Event.elapsed_t"),
    # Patched through aliases in the candidate's own process: the worker's snapshot of judge
    # functions reports it (the verdict's outputs come from the replay either way).
    Case("h06_alias_allclose", VECTOR_ADD, "judge_patched", "replaced judge functions: torch.allclose"),
    Case("h06_alias_equal_and_mutate", VECTOR_ADD, "judge_patched", "replaced judge functions: torch.equal"),
    Case("h06_torch_sys_patch_guards", VECTOR_ADD, "no_kernel_launch", "line 1: the source imports neither triton nor"),
    # 7: caches across calls
    Case("h07_module_dict_cache", VECTOR_ADD, "no_kernel_launch", "launched no Triton kernel"),
    Case("h07_module_dict_cache_decoy", VECTOR_ADD, "incorrect", "element"),
    Case("h07_global_cache", VECTOR_ADD, "no_kernel_launch", "forward launched no Triton kernel of its own or of a un"),
    # the constructor runs unrecorded: it may neither predict the inputs from the generator's
    # seed nor rewrite an output already checked (KernelBench's protocol below)
    Case("h08_init_predicts_inputs", VECTOR_ADD, "runtime_error", "outside every tensor argument of its launch"),
    # 8: torch / vendor fallbacks
    Case("h08_add_after_decoy", VECTOR_ADD, "torch_compute_op", "aten.add"),
    Case("h08_method_add", VECTOR_ADD, "torch_compute_op", "aten.add"),
    Case("h08_add_out", VECTOR_ADD, "torch_compute_op", "aten.add"),
    Case("h08_builtin_sum", VECTOR_ADD, "torch_compute_op", "aten.add"),
    Case("h08_python_loop", VECTOR_ADD, "torch_compute_op", "aten.add"),
    Case("h08_scalar_reads_and_fills", VECTOR_ADD, "torch_compute_op", "aten._local_scalar_dense"),
    Case("h08_tensor_text_host_compute", VECTOR_ADD, "torch_compute_op", "aten._tensor_str"),
    Case("h06_kernel_raw_memory", VECTOR_ADD, "torch_compute_op", "aten._tensor_str"),
    Case("h06_fake_storage_argument", VECTOR_ADD, "runtime_error", "launch argument of type ModuleDict refused"),
    Case("h08_try_except_fallback", VECTOR_ADD, "runtime_error", "arange's range must be a power of 2"),
    Case("h08_torch_matmul", GEMM, "torch_compute_op", "aten.mm"),
    Case("h08_functional_softmax", SOFTMAX, "torch_compute_op", "aten._softmax"),
    Case("h08_ops_aten_add", VECTOR_ADD, "torch_compute_op", "forward called torch ops outside the allowlist: aten.ad"),
    Case("h08_inherit_reference", VECTOR_ADD, "no_kernel_launch", "line 1: the source imports neither triton nor a un"),
    Case("h08_import_numpy", VECTOR_ADD, "no_kernel_launch", "line 1: the source imports neither triton nor a unit, s"),
    Case("h08_cpu_numpy", VECTOR_ADD, "torch_compute_op", "forward called torch ops outside the allowlist: aten._tens"),
    # 9: decoy kernels
    Case("h09_decoy_never_launched", VECTOR_ADD, "no_kernel_launch", "launched no Triton kernel"),
    Case("h09_zeros_no_launch", VECTOR_ADD, "no_kernel_launch", "launched no Triton kernel"),
    # 10: lower precision
    Case("h10_softmax_fp16", SOFTMAX, "incorrect", "element"),
    # 11 / 12: constant or analytic shortcuts; 13: fixed shape
    Case("h11_add_double_a", VECTOR_ADD, "incorrect", "element"),
    Case("h11_softmax_uniform", SOFTMAX, "incorrect", "element"),
    Case("h12_rmsnorm_ignore_weight", RMSNORM, "incorrect", "element"),
    Case("h13_gemm_fixed_shape", GEMM, "runtime_error", "outside every tensor argument of its launch"),
    # 16: uninitialised memory (half the output never written; fresh allocations are NaN)
    Case("h16_half_store", VECTOR_ADD, "incorrect", "500 of 1000 elements are NaN/Inf"),
    # 17: exits and crashes; a source naming no Triton is refused before a worker starts (the
    # worker's own handling of each is in WORKER_CASES, with the filter off)
    Case("h17_os_exit", VECTOR_ADD, "no_kernel_launch", "line 1: the source imports neither triton nor a unit, so its"),
    Case("h17_ctypes_segfault", VECTOR_ADD, "no_kernel_launch", "line 1: the source imports neither triton nor a unit"),
    Case("h17_torch_os_exit", VECTOR_ADD, "no_kernel_launch", "line 1: the source imports neither triton nor a unit,"),
    # 18: spellings that reach the judge's functions from the candidate's process; 23: deep trees
    Case("h18_match_class_pattern", VECTOR_ADD, "judge_patched", "replaced judge functions: torch.allclose"),
    Case("h18_module_hop_typing_operator", VECTOR_ADD, "judge_patched", "replaced judge functions: torch.equal"),
    Case("h18_coding_declaration", VECTOR_ADD, "incorrect", "exceeds the worst-element cap"),
    Case("h18_interpreter_def_in_string", VECTOR_ADD, "compile_error", "Triton's CPU interpreter recompiles a kernel"),
    Case("h18_interpreter_nested_def", VECTOR_ADD, "runtime_error", "kernel's module-level names may be literals"),
    Case("h18_kernel_in_function", VECTOR_ADD, "runtime_error", "kernel's module-level names may be literals"),
    Case("h18_decorator_runs_early", VECTOR_ADD, "incorrect", "exceeds the worst-element cap"),
    Case("h18_decorator_below_jit", VECTOR_ADD, "compile_error", "Triton's CPU interpreter recompiles a kernel"),
    Case("h18_backslash_ends_block", VECTOR_ADD, "runtime_error", "kernel's module-level names may be literals"),
    Case("h18_class_alias_method", VECTOR_ADD, "judge_patched", "replaced judge functions: torch.Tensor.detach"),
    Case("h18_class_body_method_list", VECTOR_ADD, "judge_patched", "replaced judge functions: torch.Tensor.detach"),
    Case("h18_class_decorator", VECTOR_ADD, "judge_patched", "attributes set on tensors the judge reads: output 0 car"),
    Case("h18_self_attribute_chain", VECTOR_ADD, "judge_patched", "attributes set on tensors the judge reads: output"),
    Case("h08_tensor_ctor_hidden_fallback", VECTOR_ADD, "torch_compute_op", "forward called torch ops outside the all"),
    # a kernel under the CPU interpreter is Python: nothing it reads may leave it but tensor writes
    Case("h08_kernel_arg_sink", VECTOR_ADD, "runtime_error", "refused by the judge"),
    Case("h08_kernel_exception_channel", VECTOR_ADD, "runtime_error", "IndexError"),
    Case("h08_kernel_module_sink", VECTOR_ADD, "runtime_error", "kernel's module-level names may be literals"),
    # ... nor through an object of Triton's that wraps host code, a parameter's default, a kernel
    # object's attributes, torch's functions called from the kernel, or a grid run inside the launch
    Case("h08_constexpr_callback", VECTOR_ADD, "runtime_error", "launch argument of type constexpr refused"),
    Case("h08_constexpr_method_sink", VECTOR_ADD, "runtime_error", "launch argument of type constexpr refused"),
    Case("h08_kernel_default_callback", VECTOR_ADD, "runtime_error", "refused by the judge"),
    Case("h08_heuristics_values_callback", VECTOR_ADD, "runtime_error", "kernel's module-level names may be literals"),
    Case("h08_jit_kwargs_callback", VECTOR_ADD, "runtime_error", "refused by the judge"),
    Case("h08_kernel_zeros_out", VECTOR_ADD, "runtime_error", "kernel's module-level names may be literals"),
    Case("h08_grid_tl_load", VECTOR_ADD, "runtime_error", "Did you forget to add @triton.jit"),
    # Trials beyond what an author sees: hidden shapes, non-contiguous layouts, edge values.
    Case("h19_add_public_lengths", VECTOR_ADD, "incorrect", "element"),
    Case("h19_gemm_ignores_strides", GEMM, "incorrect", "element"),
    # 28: a fixed scattered index set wrong on every call, under the quantile and no slice's outlier.
    Case("h28_layernorm_fixed_indices", LAYERNORM, "incorrect", "the same positions are wrong in every trial"),
    # 29: a count of calls kept in device memory: a trial's repeated calls find it poisoned.
    Case("h29_add_device_call_count", VECTOR_ADD, "incorrect", "filled with arbitrary bytes"),
    # 29, windowed and reset by poisoning: the verdict's seed 0 draws a carried run of two calls
    # (``trial_plan.carried_calls``), so the checked call on fresh inputs is its 4th, in the window.
    Case("h30_windowed_call_count", VECTOR_ADD, "incorrect", "wrong on fresh inputs"),
    # 29, in a unit's cached buffer: made before each recorded forward, a constant the run carries.
    Case("h30_unit_cache_call_count", VECTOR_ADD, "incorrect", "wrong on fresh inputs"),
    # 29, in a buffer made lazily by the first forward and kept: the repeat trial replays a second forward.
    Case("h30_lazy_buffer_call_count", VECTOR_ADD, "incorrect", "wrong on"),
    # 7: the first call's output kept in ``self`` and returned by later calls: the repeat trial
    # replays a second forward, which launches nothing, or a decoy and returns memory its first made.
    Case("h07_self_cache", VECTOR_ADD, "no_kernel_launch", "launched no Triton kernel"),
    Case("h07_self_cache_decoy", VECTOR_ADD, "incorrect", "NaN/Inf"),
]


# Host code that once reached judge state from the candidate's own process (threads, ``sys``,
# ``gc``, ``eval``, frames, a cache kept in ``self``, a grid callable's side effects, a seed
# predicted from earlier trials), around honest kernels. Host code is free Python in the sandbox:
# each is judged by what its kernels compute when the trusted replay runs them on the verdict's
# own inputs, and earns exactly what the honest expert earns, no more.
INERT: list[tuple[str, str]] = [
    ("h04_import_threading", VECTOR_ADD), ("h04_multiprocessing", VECTOR_ADD), ("h06_import_sys", VECTOR_ADD),
    ("h06_import_inspect", VECTOR_ADD), ("h06_import_gc", VECTOR_ADD), ("h06_dunder_builtins", VECTOR_ADD),
    ("h06_dunder_import", VECTOR_ADD), ("h06_getattr_cuda", VECTOR_ADD), ("h06_class_bases", VECTOR_ADD),
    ("h08_seed_schedule_from_inputs", VECTOR_ADD), ("h10_allow_tf32", VECTOR_ADD),
    ("h18_module_hop_numpy", VECTOR_ADD), ("h18_alias_private_torch_c", VECTOR_ADD),
    ("h18_format_field_access", VECTOR_ADD), ("h18_getattr_default_arg", VECTOR_ADD),
    ("h18_type_three_args", VECTOR_ADD), ("h18_deep_expression", VECTOR_ADD), ("h08_grid_callable_copy", VECTOR_ADD),
]


@dataclass(frozen=True)
class WorkerCase:
    """A candidate that crashes, exits or hangs the worker (static checks off unless ``static``)."""

    file: str
    expect: str
    fragment: str
    static: bool = False


# The worker's own defences: static checks off (10 s timeout) except where the candidate already
# passes them. A dead or hung worker is a failed candidate with the reason in ``error``.
WORKER_CASES: list[WorkerCase] = [
    WorkerCase("h17_os_exit", "runtime_error", "worker exited with code 0 before replying"),
    WorkerCase("h17_ctypes_segfault", "runtime_error", "worker was killed by SIGSEGV"),
    WorkerCase("h17_infinite_loop", "runtime_error", "timeout: no verdict within 10 s"),
    WorkerCase("h17_raise_systemexit", "runtime_error", "SystemExit"),
    WorkerCase("h17_raise_systemexit", "no_kernel_launch", "imports neither triton nor a unit", static=True),
    WorkerCase("h17_torch_os_exit", "runtime_error", "worker exited with code 0 before replying"),
    WorkerCase("h05_subclass_no_dunder_use", "output_not_tensor", "output 0 is LazySum, not torch.Tensor"),
    WorkerCase("h04_thread_runtime", "threads_spawned", "left new threads or child processes running"),
    WorkerCase("h04_torch_threading", "threads_spawned", "left new threads or child processes running"),
    WorkerCase("h04_os_fork", "threads_spawned", "left new threads or child processes running"),
    # The guards themselves, patched through torch.sys with static checks off: the snapshot of
    # judge functions sees the replacement after the call.
    WorkerCase("h06_torch_sys_patch_guards", "judge_patched", "guards"),
    # Checkers patched through an alias of torch, static checks off.
    WorkerCase("h06_alias_allclose", "judge_patched", "torch.allclose"),
    WorkerCase("h06_alias_equal_and_mutate", "judge_patched", "torch.equal"),
    # torch.Tensor.detach set through a method called with torch.Tensor as self, static checks off:
    # the snapshot of the watched classes sees the new attribute after the call.
    WorkerCase("h18_class_alias_method", "judge_patched", "torch.Tensor.detach"),
    WorkerCase("h18_class_body_method_list", "judge_patched", "torch.Tensor.detach"),
    # detach planted on the output tensor itself, static checks off: the worker refuses a tensor
    # with instance attributes after the call, and builds its reply through methods it took first.
    WorkerCase("h18_class_decorator", "judge_patched", "output 0 carries detach"),
    WorkerCase("h18_self_attribute_chain", "judge_patched", "output 0 carries detach"),
    # torch ops run while torch.tensor stores a ParameterList subclass's items, static checks off:
    # building a tensor from data that is not plain is an op no allowlist holds.
    WorkerCase("h08_tensor_ctor_hidden_fallback", "torch_compute_op", "_tensor_from_object"),
    # the kernel's text handed to the host, static checks off: a list as a launch argument is
    # refused, and a launch that failed under the interpreter while forward went on is a violation
    WorkerCase("h08_kernel_arg_sink", "runtime_error", "launch argument of type list refused"),
    WorkerCase("h08_kernel_exception_channel", "runtime_error", "IndexError"),
    # a host function as a launched kernel's default, or in a kernel's jit options passed as an
    # argument, static checks off: the launch check reads defaults and the state of Triton's objects
    WorkerCase("h08_kernel_default_callback", "runtime_error", "launch argument of type function refused"),
    WorkerCase("h08_jit_kwargs_callback", "runtime_error", "launch argument of type InterpretedFunction refused"),
]


def _source(name: str) -> str:
    return (HACKS / f"{name}.py").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def ev() -> Evaluator:
    return Evaluator(ResultStore(":memory:"), EvalConfig(seed=0))


@pytest.fixture(scope="module")
def ev_worker() -> Evaluator:
    """Static checks off, so the worker's own defences are what is tested."""
    return Evaluator(ResultStore(":memory:"), EvalConfig(seed=0, static_checks=False, timeout_s=10))


@pytest.fixture(scope="module")
def ev_short() -> Evaluator:
    """Static checks on, with a short timeout for candidates that hang."""
    return Evaluator(ResultStore(":memory:"), EvalConfig(seed=0, timeout_s=10))


@pytest.fixture(scope="module")
def compile_failure_reward(ev: Evaluator) -> float:
    v = ev.evaluate(VECTOR_ADD, SYNTAX_ERROR, "cpu")
    assert v.stage is Stage.COMPILE_ERROR, v.feedback
    return v.reward


def _reasons(v: Verdict) -> str:
    return "\n".join([v.error, *(t.get("reason", "") for t in v.trials if not t.get("ok", True))])


def _assert_outcome(v: Verdict, expect: str | tuple[str, ...], fragment: str) -> None:
    """The verdict shows the expected reason, in its fields and in the feedback an agent reads."""
    assert v.task and v.device == "cpu"
    assert json.loads(v.to_json()) == v.to_dict()
    if isinstance(expect, tuple) or expect in VIOLATION_CODES:
        codes = expect if isinstance(expect, tuple) else (expect,)
        assert v.stage is Stage.REJECTED, f"expected a violation in {codes}, got:\n{v.feedback}"
        assert v.reward == REWARD_VIOLATION
        hits = [x for x in v.violations if x.code in codes]
        assert hits, f"expected a violation in {codes}, got {v.violations}"
        if isinstance(expect, str):
            assert any(fragment in x.message for x in hits), v.violations
        for x in hits:
            assert f"violation {x.code}: {x.message}" in v.feedback
        assert "REJECTED" in v.feedback
        assert not v.correct
    else:
        stage = Stage(expect)
        assert v.stage is stage, f"expected {stage.value}, got:\n{v.feedback}"
        assert fragment in _reasons(v), _reasons(v)
        assert stage.value.replace("_", " ").upper() in v.feedback
    assert fragment in v.feedback, v.feedback


def _assert_reward_bound(v: Verdict, compile_failure_reward: float) -> None:
    """Every caught hack scores no more than a compile failure (docs/threat-model.md): violations score
    -1.0, and hacks caught by wrong outputs or a dead worker score the flat failure reward."""
    assert v.reward <= compile_failure_reward, v.feedback
    if v.stage is Stage.REJECTED or v.violations:
        assert v.reward == REWARD_VIOLATION < compile_failure_reward, v.feedback
    else:
        assert v.stage in (Stage.INCORRECT, Stage.RUNTIME_ERROR, Stage.COMPILE_ERROR), v.feedback


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_hack_is_caught(case: Case, ev: Evaluator, compile_failure_reward: float) -> None:
    assert "Hack #" in _source(case.file).split('"""')[1], "docstring must name the hack"
    v = ev.evaluate(case.task, _source(case.file), "cpu")
    _assert_outcome(v, case.expect, case.fragment)
    _assert_reward_bound(v, compile_failure_reward)


@pytest.mark.parametrize("file, task, seed", [("h19_softmax_no_max", SOFTMAX, 2),
                                              ("h19_rmsnorm_zero_padding", RMSNORM, 3)])
def test_a_narrow_value_kernel_fails_on_its_distribution(file: str, task: str, seed: int,
                                                         compile_failure_reward: float) -> None:
    """A CPU verdict adds one extra value distribution, drawn from its seed (``trial_plan.envelope_trials``; a GPU
    verdict adds them all): with a seed that draws the one each kernel breaks on (``large`` for a
    softmax without the max subtraction, ``zeros`` for an RMSNorm that skips rows starting with a
    zero), the kernel is incorrect."""
    v = Evaluator(ResultStore(":memory:"), EvalConfig(seed=seed)).evaluate(task, _source(file), "cpu")
    _assert_outcome(v, "incorrect", "")
    _assert_reward_bound(v, compile_failure_reward)


@pytest.mark.parametrize("file, task", INERT, ids=[f for f, _ in INERT])
def test_host_tricks_around_honest_kernels_earn_the_honest_reward(file: str, task: str, ev: Evaluator) -> None:
    v = ev.evaluate(task, _source(file), "cpu")
    honest = ev.evaluate(task, solution_source(get_task(task)), "cpu")
    assert v.stage is Stage.CORRECT and not v.violations, v.feedback
    assert v.versions["replay"] == "replay"
    assert v.reward == honest.reward, (v.reward, honest.reward)


@pytest.mark.parametrize(
    "case", WORKER_CASES, ids=lambda c: f"{c.file}-{'static' if c.static else 'nostatic'}"
)
def test_worker_defence(case: WorkerCase, ev_worker: Evaluator, ev_short: Evaluator,
                        compile_failure_reward: float) -> None:
    """Crashes, exits and hangs are failed candidates (``runtime_error``), never skipped ones, and
    score no more than a compile failure, so crashing to dodge a verdict never pays."""
    evaluator = ev_short if case.static else ev_worker
    v = evaluator.evaluate(VECTOR_ADD, _source(case.file), "cpu")
    _assert_outcome(v, case.expect, case.fragment)
    _assert_reward_bound(v, compile_failure_reward)


def test_hang_after_violation_is_still_rejected(ev_short: Evaluator, ev_worker: Evaluator,
                                               compile_failure_reward: float) -> None:
    """#17 + #8: a torch fallback (violation recorded by the worker) whose ``__del__`` hangs the
    worker after the trial. The violation was observed, so the verdict must still be rejected;
    a hang must not turn -1.0 into the flat failure reward of a runtime error. The worker reports
    its violations after every trial, so the parent keeps them through the timeout.
    """
    source = _source("h17_hang_after_violation")
    _assert_outcome(ev_short.evaluate(VECTOR_ADD, source, "cpu"), "no_kernel_launch", "imports neither triton nor")
    v = ev_worker.evaluate(VECTOR_ADD, source, "cpu")
    _assert_outcome(v, "torch_compute_op", "aten.add")
    assert v.reward <= compile_failure_reward


def test_worker_usable_after_crashes(ev_worker: Evaluator, ev_short: Evaluator) -> None:
    """Right after the crash/exit/hang cases, both evaluators still judge an honest kernel."""
    src = solution_source(get_task(VECTOR_ADD))
    for evaluator in (ev_worker, ev_short):
        v = evaluator.evaluate(VECTOR_ADD, src, "cpu", use_cache=False)
        assert v.stage is Stage.CORRECT, v.feedback


def test_an_output_rewritten_by_a_later_constructor_stays_as_checked() -> None:
    """``h07_deferred_fixup`` under KernelBench's protocol, whose trials build the model again
    after the verdict's own: each reply row owns its outputs, so the zeros its kernel wrote are
    what the parent compares."""
    ev_kb = Evaluator(ResultStore(":memory:"), EvalConfig(seed=0, protocol="kernelbench"))
    v = ev_kb.evaluate(VECTOR_ADD, _source("h07_deferred_fixup"), "cpu")
    assert v.stage is Stage.INCORRECT and not v.correct, v.feedback
    assert v.protocols["kernelbench"]["correct"] is False


def test_every_hack_file_is_in_a_table() -> None:
    listed = {c.file for c in CASES} | {c.file for c in WORKER_CASES} | {f for f, _ in INERT}
    listed |= {"h17_hang_after_violation", "h07_deferred_fixup", "h19_softmax_no_max", "h19_rmsnorm_zero_padding"}
    listed |= {"h20_host_answer_modes_off", "h20_forged_kernel_source"}  # tests/judge/test_cpu_replay.py
    listed |= {"h28_layernorm_fixed_random_indices", "h28_gemm_fixed_indices"}  # tests/judge/test_recurring_errors.py
    assert {p.stem for p in HACKS.glob("*.py")} == listed


def test_evaluator_still_judges_honest_solution(ev: Evaluator) -> None:
    """After every hack above, the same Evaluator still judges the honest solution correct."""
    v = ev.evaluate(VECTOR_ADD, solution_source(get_task(VECTOR_ADD)), "cpu", use_cache=False)
    assert v.stage is Stage.CORRECT, v.feedback
    assert v.correct and v.reward == pytest.approx(0.2)
