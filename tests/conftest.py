"""Without a GPU, run Triton kernels in the CPU interpreter (set before triton is imported); a
fixture that keeps task folders a test registers from leaking into later tests."""

import os
import sys
from contextlib import contextmanager

import pytest
import torch

if not torch.cuda.is_available():
    os.environ["TRITON_INTERPRET"] = "1"


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


def pytest_addoption(parser):
    parser.addoption("--honest-corpus", choices=("sample", "all"), default="sample",
                     help="judge a fixed sample of the honest-code corpus (every style, a task of each kind) "
                          "or all of it (tests/judge/test_honest_corpus.py)")
