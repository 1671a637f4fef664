"""The honest-code corpus (``tests/candidates/honest/<style>/<task>__<name>.py``): listing, the
KernelBench-format problems it targets, and a numerical check of each candidate run outside the
judge.

``check_outside`` runs a candidate's ``ModelNew`` in this process under the Triton interpreter
(with the project's interpreter fixes: bf16 arithmetic, autotuning) against the task's ``Model``
on every CPU shape: the reference's state dict is loaded into ``ModelNew`` (strictly: same
parameter and buffer names), the outputs are compared with the judge's own rule
(``correctness.compare`` against the float64 reference and the native-precision one), the inputs
must be left unchanged and the forward may dispatch only the task's allowed torch ops (plus the
interpreter's launch bookkeeping).

    python -m tests.judge.honest_corpus [file ...]   # check the given candidates (default: all)
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")

from hawkeye_env.judge.parent.decide.correctness import compare, dtype_name  # noqa: E402
from hawkeye_env.judge.parent.decide.references import as_list, build, native_reference, reference64  # noqa: E402
from hawkeye_env.judge.sandboxed.candidate.dispatch_mode import JudgeDispatchMode  # noqa: E402
from hawkeye_env.judge.sandboxed.candidate.guards import INTERPRETER_LAUNCH_OPS  # noqa: E402
from hawkeye_env.kernelbench.importer import import_kernelbench, task_id_for  # noqa: E402
from hawkeye_env.tasks.registry import get_task, task_module  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "tests" / "candidates" / "honest"
KERNELBENCH_PROBLEMS = REPO / "tests" / "kernelbench" / "problems"
STYLES = ("tutorial", "kernelbench", "library")
KERNELBENCH_PREFIX = "kb_"


@dataclass(frozen=True)
class Candidate:
    """One corpus file: its style folder, its task id (the file name before ``__``) and path."""

    style: str
    task: str
    path: Path

    @property
    def id(self) -> str:
        return f"{self.style}/{self.path.stem}"


def corpus(root: Path = CORPUS) -> list[Candidate]:
    """Every candidate of the corpus, by style then file name."""
    found = []
    for style in STYLES:
        for path in sorted((root / style).glob("*.py")):
            found.append(Candidate(style, path.stem.split("__")[0], path))
    return found


def kernelbench_problem_files(task_ids: set[str], problems: Path = KERNELBENCH_PROBLEMS) -> list[Path]:
    """The KernelBench-format problem files whose imported task id is in ``task_ids``."""
    return [p for p in sorted(problems.rglob("*.py")) if task_id_for(p) in task_ids]


def import_kernelbench_tasks(task_ids: set[str], out: Path, problems: Path = KERNELBENCH_PROBLEMS) -> list[str]:
    """Import (and register for this process and its children) only the problems of ``task_ids``
    into the task folder ``out``; returns the imported ids. Raises when one is missing."""
    wanted = {t for t in task_ids if t.startswith(KERNELBENCH_PREFIX)}
    if not wanted:
        return []
    src = Path(tempfile.mkdtemp(prefix="kb_src_"))
    try:
        for p in kernelbench_problem_files(wanted, problems):
            (src / p.parent.name).mkdir(exist_ok=True)
            shutil.copy(p, src / p.parent.name / p.name)
        report = import_kernelbench(src, out)
    finally:
        shutil.rmtree(src, ignore_errors=True)
    ids = [t["id"] for t in report.imported]
    missing = wanted - set(ids)
    if missing:
        raise RuntimeError(f"KernelBench problems not imported: {sorted(missing)} ({report.skipped})")
    return ids


class _Ops(JudgeDispatchMode):
    """Counts the aten ops (overload-packet names) dispatched while active."""

    def __init__(self) -> None:
        super().__init__()
        self.ops: Counter[str] = Counter()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops[func.overloadpacket.__name__] += 1
        return func(*args, **(kwargs or {}))


def load_candidate(path: Path):
    """Import a candidate file as a fresh module (its own name, so kernels never collide)."""
    name = "honest_" + "_".join(path.parts[-2:]).removesuffix(".py").replace("-", "_")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _install_interpreter_fixes() -> None:
    """The project's interpreter fixes, as the judge's CPU processes install them: bf16 arithmetic
    and the gaps a GPU does not have (autotuning, libdevice, builtins reached through aliases)."""
    from hawkeye_env.judge.sandboxed.common.interpreter.fixes import install_interpreter_fixes

    install_interpreter_fixes()


def check_outside(task: str, path: Path, distributions: tuple[str, ...] = ("normal",), seed: int = 0) -> list[str]:
    """Run ``path``'s ``ModelNew`` against ``task``'s ``Model`` on every CPU shape and each of
    ``distributions``; returns one line per failure (empty: the candidate is correct)."""
    _install_interpreter_fixes()
    spec = get_task(task)
    module = load_candidate(path)
    allowed = spec.allowed_ops | INTERPRETER_LAUNCH_OPS
    failures = []
    for shape in spec.cpu_shapes:
        for dist in distributions:
            where = f"{dict(shape)} {dist}"
            ref, inputs = build(spec, dict(shape), dist, seed, "cpu")
            expected = reference64(ref, inputs, keep_float64=spec.dtypes == ("float64",))
            native = native_reference(ref, inputs)
            model = module.ModelNew(*task_module(spec).get_init_inputs(**shape))
            model.load_state_dict(ref.state_dict(), strict=True)
            before = [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]
            recorder = _Ops()
            with torch.no_grad(), recorder:
                outs = as_list(model(*inputs))
            bad_ops = sorted(k for k in recorder.ops if k not in allowed)
            if bad_ops:
                failures.append(f"{where}: host torch ops outside the allowed set: {bad_ops}")
            for i, (x, y) in enumerate(zip(inputs, before)):
                if isinstance(x, torch.Tensor) and not torch.equal(x, y):
                    failures.append(f"{where}: input {i} changed")
            if len(outs) != len(expected):
                failures.append(f"{where}: {len(outs)} outputs, expected {len(expected)}")
                continue
            for i, (out, r, nat) in enumerate(zip(outs, expected, native)):
                if not isinstance(out, torch.Tensor) or out.shape != nat.shape or out.dtype != nat.dtype:
                    got = (tuple(out.shape), out.dtype) if isinstance(out, torch.Tensor) else type(out).__name__
                    failures.append(f"{where}: output {i} is {got}, expected {(tuple(nat.shape), nat.dtype)}")
                    continue
                if not nat.is_floating_point():
                    if not torch.equal(out, nat):
                        failures.append(f"{where}: integer output {i} differs")
                    continue
                res = compare(out, r, nat.dtype, spec.tolerance(dtype_name(nat.dtype)), native=nat)
                if not res["ok"]:
                    failures.append(f"{where}: output {i}: {res['reason']}")
    return failures


def main(argv: list[str]) -> int:
    paths = [Path(a).resolve() for a in argv]
    chosen = [c for c in corpus() if not paths or c.path.resolve() in paths]
    with tempfile.TemporaryDirectory() as out:
        import_kernelbench_tasks({c.task for c in chosen}, Path(out))
        bad = 0
        for c in chosen:
            failures = check_outside(c.task, c.path)
            bad += bool(failures)
            print(f"{'ok  ' if not failures else 'FAIL'} {c.id}", *failures, sep="\n    ", flush=True)
    print(f"{len(chosen) - bad}/{len(chosen)} correct")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
