"""The adapters' shared judge on CPU with a results store in tmp (set before its first use)."""

from __future__ import annotations

import os

import pytest

from hawkeye_env.tasks.registry import get_task, solution_source

TASK = "vector_add_fp32"
SOLUTION = solution_source(get_task(TASK))
STORE_LINE = "    tl.store(out_ptr + offs, a + b, mask=mask)"
BROKEN = SOLUTION.replace(STORE_LINE, STORE_LINE.replace("a + b", "a - b"))
FIX = f"<<<<<<< SEARCH\n{STORE_LINE.replace('a + b', 'a - b')}\n=======\n{STORE_LINE}\n>>>>>>> REPLACE\n"


def fenced(source: str) -> str:
    return f"```python\n{source}```\n"


@pytest.fixture(scope="package", autouse=True)
def cpu_judge(tmp_path_factory):
    saved = {k: os.environ.get(k) for k in ("HAWKEYE_STORE", "HAWKEYE_JUDGE_DEVICE")}
    os.environ["HAWKEYE_STORE"] = str(tmp_path_factory.mktemp("adapters") / "verdicts.sqlite3")
    os.environ["HAWKEYE_JUDGE_DEVICE"] = "cpu"
    from hawkeye_env.adapters.common import shared_judge

    yield shared_judge()
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value
