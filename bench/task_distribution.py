"""Generate a task distribution on CPU and measure it, then list and load one at scale.

Generation: time, kept fraction, drop reasons, coverage by family and dtype, the splits.

    python -m bench.task_distribution --n 5000 --seed 0 --workers 2 --compile-every 10 --scale 10000 \\
        --out bench/results/task-distribution/task-distribution-cpu-2026-12-05.json

Generation is ``hawkeye tasks generate`` (``hawkeye_env.task_gates.pipeline.generate``) into a
temporary folder, every gate on, the compile gate (``capture``: Dynamo and AOTAutograd) on every
``--compile-every``-th draft. Scale is measured on a folder of ``--scale`` tasks written by the
same grammar and writer with their index but without the gates (written, not judged: the figure is
the registry's, not the gates'), each figure in a fresh interpreter, ``--repeats`` times:

* ``import_s``: importing the registry and the curated suite (what every process pays);
* ``list_s``: registering the folder and listing every id (``registry.registered_ids``, the index);
* ``split_s``: the train split's ids (``selection.select_tasks("split:train")``);
* ``get_one_s``: ``registry.get_task`` of one generated task (its module imported), median of 50;
* ``load_all_s``: ``registry.list_tasks()``, which imports every task;
* ``cli_list_s``: ``hawkeye tasks list --split train --json`` as a subprocess, start to exit.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.provenance import provenance

PROBE = """
import json, os, random, statistics, sys, time
t0 = time.perf_counter()
from hawkeye_env.tasks import registry
from hawkeye_env.tasks.selection import select_tasks
registry.list_tasks()  # the curated suite, imported by every process that looks a task up
t1 = time.perf_counter()
os.environ[registry.TASK_DIRS_ENV] = sys.argv[1]
ids = registry.registered_ids()
t2 = time.perf_counter()
train = select_tasks("split:train")
t3 = time.perf_counter()
index = registry.indexed_tasks()
generated = [i for i in ids if i in index]
one = []
for task_id in random.Random(0).sample(generated, min(50, len(generated))):
    s = time.perf_counter(); registry.get_task(task_id); one.append(time.perf_counter() - s)
t4 = time.perf_counter()
everything = registry.list_tasks()
t5 = time.perf_counter()
print(json.dumps({"tasks": len(ids), "generated": len(generated), "train": len(train), "import_s": t1 - t0,
                  "list_s": t2 - t1, "split_s": t3 - t2, "get_one_s": statistics.median(one),
                  "load_all_s": t5 - t4, "loaded": len(everything)}))
"""


def generation(args, folder: Path) -> dict:
    from hawkeye_env.task_gates.pipeline import GenerateConfig, generate

    config = GenerateConfig(n=args.n, seed=args.seed, out=folder, compile=args.compile,
                            compile_every=args.compile_every, workers=args.workers)
    report = generate(config)
    report.pop("dropped_tasks")  # every dropped id; the counts and examples stay
    return report


def write_scale_folder(n: int, seed: int, folder: Path) -> float:
    """Write ``n`` drafts of ``seed`` with their index, ungated (module docstring); returns seconds."""
    import torch

    from hawkeye_env.task_gates.report import index_entry
    from hawkeye_env.tasks.generate.graph import graph_hash, task_hash
    from hawkeye_env.tasks.generate.sampler import draft_at
    from hawkeye_env.tasks.generate.sampler import provenance as origin
    from hawkeye_env.tasks.generate.splits import difficulty, split_for, trace_module
    from hawkeye_env.tasks.generate.writer import write_task
    from hawkeye_env.tasks.registry import TASK_FOLDER_MARKER
    from hawkeye_env.tasks.task_dirs import write_index

    torch.set_num_threads(1)
    start = time.perf_counter()
    sys.path.insert(0, str(folder))
    entries, seen = [], set()
    for i in range(n):
        draft = draft_at(seed, i)
        task_id = draft.task_id(seed, i)
        write_task(folder, draft, task_id, origin(seed, i))
        module = __import__(f"{task_id}.task", fromlist=["SPEC"])
        shape = dict(module.SPEC.cpu_shapes[0])
        t = trace_module(module, shape, "cpu")
        identity = task_hash(t, [*module.SPEC.cpu_shapes, *module.SPEC.gpu_shapes])
        if identity in seen:
            continue
        seen.add(identity)
        entry = index_entry(module.SPEC, draft, graph_hash(t), identity, difficulty(module.SPEC, t, shape))
        entries.append(entry | {"split": split_for(entry["graph_hash"]), "held_out_graph": ""})
    write_index(folder, entries, {"seed": seed, "n": n, "generator": "bench.task_distribution (ungated)"})
    (folder / TASK_FOLDER_MARKER).write_text("hawkeye task folder\n")
    return time.perf_counter() - start


def scale(folder: Path, repeats: int) -> dict:
    runs = []
    for _ in range(repeats):
        probe = subprocess.run([sys.executable, "-c", PROBE, str(folder)], capture_output=True, text=True, check=True)
        run = json.loads(probe.stdout.strip().splitlines()[-1])
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "hawkeye_env", "tasks", "list", "--split", "train", "--json"],
                       env={**os.environ, "HAWKEYE_TASK_DIRS": str(folder)}, capture_output=True, check=True)
        run["cli_list_s"] = time.perf_counter() - start
        runs.append(run)
    keys = [k for k in runs[0] if k.endswith("_s")]
    return {"tasks": runs[0]["tasks"], "generated": runs[0]["generated"], "train": runs[0]["train"],
            "repeats": repeats, **{k: {"median": statistics.median(r[k] for r in runs),
                                       "min": min(r[k] for r in runs), "max": max(r[k] for r in runs)} for k in keys}}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--compile", default="capture")
    parser.add_argument("--compile-every", type=int, default=10)
    parser.add_argument("--scale", type=int, default=10000, help="tasks in the listing and loading folder (0: skip)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    result = {**provenance("cpu", "bench.task_distribution", argv if argv is not None else sys.argv[1:]),
              "host": {"cpus": os.cpu_count(), "load_average_start": list(os.getloadavg())}}
    with tempfile.TemporaryDirectory() as tmp:
        result["generation"] = generation(args, Path(tmp) / "generated")
        if args.scale:
            folder = Path(tmp) / "scale"
            folder.mkdir()
            result["scale"] = {"write_s": write_scale_folder(args.scale, args.seed + 1, folder),
                               **scale(folder, args.repeats)}
    result["host"]["load_average_end"] = list(os.getloadavg())
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps({k: result[k] for k in ("generation", "scale") if k in result}, indent=1)[:4000])


if __name__ == "__main__":
    main()
