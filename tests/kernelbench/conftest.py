"""The KernelBench-format problems written for these tests (``problems/level*/``), imported once
per test package into a temporary task folder that the registry forgets afterwards."""

from pathlib import Path

import pytest

from hawkeye_env.kernelbench.importer import import_kernelbench
from tests.conftest import registry_restored

HERE = Path(__file__).parent
PROBLEMS = HERE / "problems"
SOLUTIONS = HERE / "solutions"
HACKS = HERE / "hacks"


@pytest.fixture(scope="package")
def imported(tmp_path_factory):
    """``(out folder, ImportReport)`` of ``problems/``; task ids by ``(level, problem number)`` in
    ``report.by_number``."""
    with registry_restored():
        out = tmp_path_factory.mktemp("kb_tasks")
        report = import_kernelbench(PROBLEMS, out)
        report.by_number = {(int(t["level"].removeprefix("level")), int(t["problem"].split("_")[0])): t["id"]
                            for t in report.imported}
        yield out, report
