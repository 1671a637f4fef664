"""What a benchmark's results file records about the run that wrote it: date, GPU, driver,
software versions, the repository commit and the command line.

Every runner under ``bench/`` that writes a results file puts ``provenance(device, __spec__.name,
argv)`` at the top level of its JSON, or as the ``{"kind": "provenance", ...}`` row of its JSON
lines, so the table ``bench.benchmarks_doc`` renders from the file names what measured it::

    >>> p = provenance("cpu", "bench.tasks", ["--device", "cpu"])
    >>> sorted(p)
    ['command', 'commit', 'date', 'driver', 'gpu', 'versions']
    >>> p["command"], p["gpu"], p["driver"]
    ('python -m bench.tasks --device cpu', 'cpu', '')

``commit`` is ``evals.provenance.git_commit``'s (HEAD, ``+dirty`` with uncommitted changes, ""
outside a checkout): nothing is made up. A runner that also judges records the judge's own
``software_versions`` as ``versions`` (they include these).
"""

from __future__ import annotations

import datetime
import importlib.metadata
import platform
import shlex
import subprocess
import sys

from evals.provenance import git_commit


def driver_version() -> str:
    """The NVIDIA driver ``nvidia-smi`` reports for the first GPU; "" without one."""
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=30, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return ""
    lines = out.strip().splitlines()
    return lines[0].strip() if lines else ""


def software(device: str) -> dict[str, str]:
    """Python, torch, Triton and (on CUDA) the CUDA runtime torch was built with."""
    import torch

    try:
        triton = importlib.metadata.version("triton")
    except importlib.metadata.PackageNotFoundError:
        triton = ""
    out = {"python": platform.python_version(), "torch": torch.__version__, "triton": triton}
    if device == "cuda":
        out["cuda"] = str(torch.version.cuda)
    return {k: v for k, v in out.items() if v}


def command_line(module: str | None, args: list[str] | None = None) -> str:
    """``python -m <module> <args>``: the command that ran (``module``: the one run with ``-m`` when
    not given; ``args``: the arguments after it, ``sys.argv[1:]`` when not given)."""
    if module is None:
        spec = getattr(sys.modules.get("__main__"), "__spec__", None)
        module = spec.name if spec is not None else "?"
    return shlex.join(["python", "-m", module, *(sys.argv[1:] if args is None else args)])


def provenance(device: str, module: str | None, args: list[str] | None = None) -> dict:
    """``{"date", "gpu", "driver", "versions", "commit", "command"}`` of the running process, run as
    ``python -m <module> <args>``. ``device`` is ``"cuda"`` or ``"cpu"``; on CPU ``gpu`` is
    ``"cpu"`` and ``driver`` is ""."""
    gpu, driver = "cpu", ""
    if device == "cuda":
        import torch

        gpu, driver = torch.cuda.get_device_name(), driver_version()
    return {"date": datetime.date.today().isoformat(), "gpu": gpu, "driver": driver, "versions": software(device),
            "commit": git_commit(), "command": command_line(module, args)}


__all__ = ["command_line", "driver_version", "provenance", "software"]
