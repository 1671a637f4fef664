"""Without a GPU, run Triton kernels in the CPU interpreter (set before triton is imported); a
fixture that keeps task folders a test registers from leaking into later tests; a small generated
task folder split between train and validation, for the tests of every consumer of a split."""

import os
import sys
from contextlib import contextmanager

import pytest
import torch

if not torch.cuda.is_available():
    os.environ["TRITON_INTERPRET"] = "1"

# Under pytest-xdist each worker process takes one intra-op thread (and so do the processes it
# starts): with torch's default of one thread per core, two workers on a 2-core machine oversubscribe
# it and OpenMP's waiting threads burn the other worker's core. The two SmolLM2 tests run side by
# side (``-n 2``, 2 cores, 2026-12-06) took 386 s of wall time and 12.2 CPU-minutes with the
# default, 333 s and 7.7 CPU-minutes with one thread each.
if int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")) > 1:
    for _name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[_name] = "1"
    torch.set_num_threads(1)


@contextmanager
def registry_restored():
    """Task folders registered inside are forgotten afterwards (environment, sys.path, registry
    cache), so later tests that list every task do not meet them."""
    from hawkeye_env.tasks import registry

    env, path = os.environ.get(registry.TASK_DIRS_ENV), list(sys.path)
    try:
        yield
    finally:
        if env is None:
            os.environ.pop(registry.TASK_DIRS_ENV, None)
        else:
            os.environ[registry.TASK_DIRS_ENV] = env
        sys.path[:] = path
        registry._specs.cache_clear()


@pytest.fixture
def isolated_task_registry():
    """``registry_restored`` around one test."""
    with registry_restored():
        yield


#: ``hawkeye tasks generate --n 4 --seed 3 --families elementwise_chain,attention --compile none``:
#: two train tasks and two validation tasks, generated in about 2 s; ``SPLIT_TASKS_EXPECTED`` checks it.
SPLIT_TASKS_CONFIG = {"n": 4, "seed": 3, "families": ("elementwise_chain", "attention"), "compile": "none"}
SPLIT_TASKS_EXPECTED = {"train": 2, "validation": 2}


@pytest.fixture(scope="session")
def split_task_folder(tmp_path_factory):
    """The folder ``SPLIT_TASKS_CONFIG`` generates (once per test process) and its ``{task id: split}``."""
    import json

    from hawkeye_env.task_gates.pipeline import GenerateConfig, generate

    out = tmp_path_factory.mktemp("split_tasks")
    generate(GenerateConfig(out=out, held_out={}, **SPLIT_TASKS_CONFIG))
    splits = {e["id"]: e["split"] for e in json.loads((out / "tasks.json").read_text())["tasks"]}
    counts = {name: sum(s == name for s in splits.values()) for name in ("train", "validation", "test")}
    assert {k: v for k, v in counts.items() if v} == SPLIT_TASKS_EXPECTED, counts
    return out, splits


@pytest.fixture
def generated_splits(split_task_folder):
    """``split_task_folder`` registered through ``HAWKEYE_TASK_DIRS`` for one test; yields its
    ``{task id: split}`` (every other registered task is a curated one, split ``test``)."""
    from hawkeye_env.tasks import registry

    folder, splits = split_task_folder
    with registry_restored():
        os.environ[registry.TASK_DIRS_ENV] = str(folder)
        yield splits


def pytest_addoption(parser):
    parser.addoption("--honest-corpus", choices=("sample", "all"), default="sample",
                     help="judge a fixed sample of the honest-code corpus (every style, a task of each kind) "
                          "or all of it (tests/judge/test_honest_corpus.py)")


def pytest_collection_modifyitems(config, items):
    """Tests marked ``slow`` run first: under pytest-xdist the longest ones (a GRPO step on SmolLM2
    takes 4-7 minutes of one worker on the 2-core CI machine) then start while the other worker
    takes the many short ones, instead of starting near the end and running on alone."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)

