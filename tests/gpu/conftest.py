"""Fixtures shared by the GPU tests. ``imported`` (the KernelBench-format test problems imported
into a temporary task folder) lives here once, so every module of this package reads the same
package-scoped import: a module that imported the fixture itself would import the problems again
while the first import's tasks were still registered, and the registry refuses a duplicate id."""

from tests.kernelbench.conftest import imported  # noqa: F401 - the fixture

__all__ = ["imported"]
