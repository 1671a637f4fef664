"""``hawkeye tasks generate``: draft, write, gate, dedupe, split and index a task distribution.

For each draft index of a seed (``generate.sampler.draft_at``) the task is written to
``OUT/<task_id>/task.py``, imported, and run through the gates in order (``GATES``): conformance,
reference (deterministic and finite), informative (degenerate answers fail), baselines (eager and
``torch.compile``). A kept task is traced on the meta device for its graph and task hashes and its
difficulty; a task whose task hash an earlier one has is a duplicate. Dropped tasks' folders are
removed. Splits follow the graph hash, with the graphs of every registered task that is not
generated held out as test (``generate.splits``). The folder gets an index (``task_dirs.INDEX_FILE``,
the registry's lazy view of it), the task-folder marker and ``report.json`` (``report.summarize``).

Tasks are processed by ``workers`` processes, each task independent of the others, so the output
is the same for any number of workers.
"""

from __future__ import annotations

import importlib
import json
import shutil
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import torch

from hawkeye_env.task_gates.baselines import baselines
from hawkeye_env.task_gates.conformance import conformance
from hawkeye_env.task_gates.failure import GateFailure
from hawkeye_env.task_gates.informative import informative
from hawkeye_env.task_gates.reference import reference
from hawkeye_env.task_gates.report import index_entry, summarize
from hawkeye_env.tasks.generate.graph import graph_hash, task_hash
from hawkeye_env.tasks.generate.sampler import BACKWARD_SHARE, draft_at, provenance
from hawkeye_env.tasks.generate.splits import difficulty, held_out_graphs, split_for
from hawkeye_env.tasks.generate.writer import write_task
from hawkeye_env.tasks.registry import TASK_FOLDER_MARKER, get_task, indexed_tasks, registered_ids, task_module
from hawkeye_env.tasks.task_dirs import write_index

GATES = ("conformance", "reference", "informative", "baselines")
REPORT_FILE = "report.json"


@dataclass(frozen=True)
class GenerateConfig:
    """What to generate: ``n`` drafts of seed ``seed`` into ``out``; ``families`` limits the grammar
    (``generate.families.FAMILIES``); ``compile`` is the compile gate's mode (``baselines.COMPILE_MODES``),
    run on every ``compile_every``-th draft (1: all); ``workers`` processes; ``held_out`` the held-out
    graphs (graph hash -> task id; None: those of every registered task no index lists)."""

    n: int
    seed: int
    out: Path
    families: tuple[str, ...] | None = None
    backward_share: float = BACKWARD_SHARE
    compile: str = "capture"
    compile_every: int = 1
    workers: int = 1
    held_out: dict[str, str] | None = None


def import_task(out: Path, task_id: str):
    """Import the task ``<task_id>.task`` written in ``out`` (afresh: an older module of that name,
    from another folder, is forgotten first)."""
    if str(out) not in sys.path:
        sys.path.insert(0, str(out))
    for name in (task_id, f"{task_id}.task"):
        sys.modules.pop(name, None)
    importlib.invalidate_caches()
    return importlib.import_module(f"{task_id}.task")


def gate(module, seed: int, compile_mode: str) -> dict:
    """Run every gate on the task ``module``; ``GateFailure`` at the first that drops it. Returns
    ``{"graph_hash", "task_hash", "difficulty"}`` from the traces the conformance gate took."""
    spec = module.SPEC
    cpu, gpu = conformance(module, seed)
    outputs = reference(spec, seed)
    informative(spec, seed, outputs)
    baselines(spec, compile_mode)
    shape = dict(spec.gpu_shapes[0] if gpu is not None else spec.cpu_shapes[0])
    return {"graph_hash": graph_hash(cpu), "task_hash": task_hash(cpu, [*spec.cpu_shapes, *spec.gpu_shapes]),
            "difficulty": difficulty(spec, gpu if gpu is not None else cpu, shape, loop=gpu is None)}


def process(config: GenerateConfig, index: int) -> dict:
    """Draft, write, gate and trace draft ``index``: a record with ``entry`` (kept) or ``dropped``."""
    start = time.perf_counter()
    draft = draft_at(config.seed, index, config.families, config.backward_share)
    task_id = draft.task_id(config.seed, index)
    record = {"index": index, "id": task_id, "family": draft.family, "variant": draft.graph[0] if draft.graph else "",
              "dtype": draft.dtype, "backward": draft.backward}
    write_task(config.out, draft, task_id, provenance(config.seed, index))
    try:
        module = import_task(config.out, task_id)
        compile_mode = config.compile if index % max(config.compile_every, 1) == 0 else "none"
        found = gate(module, config.seed, compile_mode)
        record["compiled"] = compile_mode
        record["entry"] = index_entry(module.SPEC, draft, **found)
    except GateFailure as failure:
        record["dropped"] = {"code": failure.code, "detail": failure.detail}
    except Exception as exc:  # noqa: BLE001 - a generated module that fails to import is dropped too
        record["dropped"] = {"code": "import_error", "detail": f"{type(exc).__name__}: {exc}"[:300]}
    record["seconds"] = round(time.perf_counter() - start, 4)
    return record


def _worker_init(out: str) -> None:
    torch.set_num_threads(1)
    sys.path.insert(0, out)


def _records(config: GenerateConfig) -> list[dict]:
    if config.workers <= 1:
        return [process(config, i) for i in range(config.n)]
    with ProcessPoolExecutor(config.workers, initializer=_worker_init, initargs=(str(config.out),)) as pool:
        return list(pool.map(process, [config] * config.n, range(config.n), chunksize=8))


def _held_out() -> dict[str, str]:
    """Graph hash -> id of every registered task that no index lists (module docstring)."""
    indexed = indexed_tasks()
    return held_out_graphs([task_module(get_task(i)) for i in registered_ids() if i not in indexed])


def assign(records: list[dict], held_out: dict[str, str], out: Path) -> None:
    """In index order: drop a kept record whose task hash an earlier one has (``duplicate``), give
    every other its split (``splits.split_for``, held-out graphs test) and remove dropped tasks'
    folders from ``out``."""
    seen: dict[str, str] = {}
    for record in records:
        entry = record.get("entry")
        if entry is not None and entry["task_hash"] in seen:
            record["dropped"] = {"code": "duplicate", "detail": f"same graph and shapes as {seen[entry['task_hash']]}"}
            del record["entry"]
        if "entry" not in record:
            shutil.rmtree(out / record["id"], ignore_errors=True)
            continue
        seen[entry["task_hash"]] = record["id"]
        entry["split"] = split_for(entry["graph_hash"], set(held_out))
        entry["held_out_graph"] = held_out.get(entry["graph_hash"], "")


def generate(config: GenerateConfig) -> dict:
    """Generate ``config.n`` drafts into ``config.out`` (module docstring); returns the report."""
    start = time.perf_counter()
    config.out.mkdir(parents=True, exist_ok=True)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # CPU shapes are tiny: a second thread only waits (30 ms per bf16 GEMM on a busy host)
    try:
        held_out = _held_out() if config.held_out is None else config.held_out
        records = _records(config)
    finally:
        torch.set_num_threads(threads)
    assign(records, held_out, config.out)
    entries = [r["entry"] for r in records if "entry" in r]
    write_index(config.out, entries, {"seed": config.seed, "n": config.n, "generator": "hawkeye tasks generate"})
    (config.out / TASK_FOLDER_MARKER).write_text("hawkeye task folder (see hawkeye_env/tasks/task_dirs.py)\n")
    report = summarize(config, records, held_out, time.perf_counter() - start)
    (config.out / REPORT_FILE).write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    return report

