"""Entry point of every worker process, inside the OS sandbox (``isolation.py``).

``python -m hawkeye_env.judge.sandboxed.common.entry --conn FD --output FD --target module:function
--scratch DIR --args JSON`` sets resource limits, points file descriptors 0-2 away from the judge
(``redirect_output``), wraps the inherited socket ``FD`` as a ``multiprocessing``
``Connection`` and calls ``function(conn, *args)``: ``worker.serve`` for candidates and
standbys, ``baselines.serve_baselines`` for baseline-only workers. Trusted code only runs here
before the target reads its job.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import resource
import sys

# Open files a worker may hold: Triton's compiler, torch and the CUDA driver stay far below it.
NOFILE_LIMIT = 4096


def _limit(kind: int, value: int) -> None:
    try:
        soft, hard = resource.getrlimit(kind)
        new_hard = value if hard == resource.RLIM_INFINITY else min(hard, value)
        resource.setrlimit(kind, (min(value, new_hard), new_hard))
    except (ValueError, OSError):
        pass


def redirect_output(fd: int | None) -> None:
    """In a worker, before anything else runs: stdin from ``/dev/null``, file descriptors 1 and 2
    to ``fd`` (``/dev/null`` when there is none: never the judge's own), and fresh line-buffered
    ``sys.stdout``/``sys.stderr`` on them, so what was printed before a kill is in the file.
    Subprocesses inherit the descriptors."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001 - None or closed: nothing to flush
            pass
    if fd is None:
        fd = os.open(os.devnull, os.O_WRONLY | os.O_CLOEXEC)
    null = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
    os.dup2(null, 0)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(null)
    if fd not in (1, 2):
        os.close(fd)
    sys.stdout = open(1, "w", buffering=1, encoding="utf-8", errors="backslashreplace", closefd=False)
    sys.stderr = open(2, "w", buffering=1, encoding="utf-8", errors="backslashreplace", closefd=False)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="hawkeye_env.judge.sandboxed.common.entry")
    parser.add_argument("--conn", type=int, required=True)
    parser.add_argument("--output", type=int, default=-1)
    parser.add_argument("--target", required=True)
    parser.add_argument("--scratch", required=True)
    parser.add_argument("--args", default="[]")
    ns = parser.parse_args(argv)
    run(ns.conn, ns.output if ns.output >= 0 else None, ns.target, json.loads(ns.args))


def run(conn_fd: int, output_fd: int | None, target_name: str, args: list) -> None:
    """What every worker runs once its sandbox holds it (a fresh interpreter's ``main``, or a fork
    of a zygote, ``zygote.py``): resource limits, descriptors 0-2 away from the judge, the CUDA
    schedule, then ``target_name``'s function called as ``function(Connection(conn_fd), *args)``."""
    _limit(resource.RLIMIT_CORE, 0)
    _limit(resource.RLIMIT_NOFILE, NOFILE_LIMIT)
    from multiprocessing.connection import Connection

    redirect_output(output_fd)
    from hawkeye_env.judge.shared.cuda_schedule import apply_from_env

    apply_from_env()  # before the target's imports: the flag must precede torch's CUDA context
    target = load_target(target_name)
    sys.argv = [sys.argv[0]]
    target(Connection(conn_fd), *args)


def load_target(target_name: str):
    """The function named ``"module:function"`` (its module imported)."""
    module_name, _, attr = target_name.partition(":")
    target = importlib.import_module(module_name)
    for part in attr.split("."):
        target = getattr(target, part)
    return target


if __name__ == "__main__":
    main()
