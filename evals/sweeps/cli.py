"""The command line every GPU sweep under ``evals/sweeps/`` shares: ``--budget-s``, ``--only``,
``--rounds``, a clear exit without CUDA, an ``env`` row first and a ``done`` row last.

``run_shape(label, *shape, rounds=R, deadline=T)`` sweeps one shape; a shape not started by the
deadline (``start + --budget-s``) is a ``skipped`` row, and ``run_shape`` may use the deadline to
stop timing new configurations of its own shape.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence

import torch

from evals.sweep_kernels import _row


def sweep_main(argv: list[str] | None, doc: str, what: str, configs: Sequence[dict], shapes: Sequence[tuple],
               run_shape: Callable[..., None], budget_s: float) -> int:
    """Parse the sweep's arguments and run ``run_shape`` over ``shapes`` (``(label, *shape)``)."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--budget-s", type=float, default=budget_s)
    parser.add_argument("--only", nargs="*", default=None, help="shape labels to run (default: all)")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    if not torch.cuda.is_available():
        print(f"error: the {what} sweep times kernels on a CUDA GPU; none is available", file=sys.stderr)
        return 2
    import triton

    _row(kind="env", device=torch.cuda.get_device_name(), torch=torch.__version__, triton=triton.__version__,
         configs=list(configs))
    start = time.monotonic()
    for label, *shape in shapes:
        if args.only and label not in args.only:
            continue
        if time.monotonic() - start > args.budget_s:
            _row(kind="skipped", shape=label, why=f"budget of {args.budget_s:.0f} s spent")
            continue
        run_shape(label, *shape, rounds=args.rounds, deadline=start + args.budget_s)
    _row(kind="done", seconds=time.monotonic() - start)
    return 0


__all__ = ["sweep_main"]
