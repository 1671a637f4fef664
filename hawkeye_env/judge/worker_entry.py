"""Entry point of every worker process, inside the OS sandbox (``isolation.py``).

``python -m hawkeye_env.judge.worker_entry --conn FD --output FD --target module:function
--scratch DIR --args JSON`` sets resource limits, points file descriptors 0-2 away from the judge
(``sandbox.redirect_output``), wraps the inherited socket ``FD`` as a ``multiprocessing``
``Connection`` and calls ``function(conn, *args)``: ``worker.serve`` for candidates and
standbys, ``baselines.serve_baselines`` for baseline-only workers. Trusted code only runs here
before the target reads its job.
"""

from __future__ import annotations

import argparse
import importlib
import json
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


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="hawkeye_env.judge.worker_entry")
    parser.add_argument("--conn", type=int, required=True)
    parser.add_argument("--output", type=int, default=-1)
    parser.add_argument("--target", required=True)
    parser.add_argument("--scratch", required=True)
    parser.add_argument("--args", default="[]")
    ns = parser.parse_args(argv)
    _limit(resource.RLIMIT_CORE, 0)
    _limit(resource.RLIMIT_NOFILE, NOFILE_LIMIT)
    from multiprocessing.connection import Connection

    from hawkeye_env.judge.sandbox import redirect_output

    redirect_output(ns.output if ns.output >= 0 else None)
    module_name, _, attr = ns.target.partition(":")
    target = importlib.import_module(module_name)
    for part in attr.split("."):
        target = getattr(target, part)
    sys.argv = [sys.argv[0]]
    target(Connection(ns.conn), *json.loads(ns.args))


if __name__ == "__main__":
    main()
