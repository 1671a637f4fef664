"""The workload Nsight Compute profiles (``nsight.py``): one forward of a checked plan, on a GPU.

    python -m hawkeye_env.judge.sandboxed.replay.nsight_target JOB_FILE

``JOB_FILE`` is what the replay wrote (``torch.save`` of ``{"job", "shape", "seed"}``, the job a
profile's checked plans). The plan's runner is rebuilt from its cubins (``replay.plan_runner``: no
candidate Python), called once to load and warm up, then once between ``cudaProfilerStart`` and
``cudaProfilerStop``: with ``ncu --profile-from-start off`` only that call's kernels are profiled.
"""

from __future__ import annotations

import os
import sys

import torch

from hawkeye_env.judge.sandboxed.replay.replay import plan_runner


def main(argv: list[str]) -> int:
    saved = torch.load(argv[0], weights_only=True)
    torch.set_grad_enabled(False)
    runner, inputs = plan_runner(saved["job"], os.path.dirname(os.path.abspath(argv[0])), saved["shape"],
                                 saved["seed"])
    runner(*inputs)
    torch.cuda.synchronize()
    runner.reset()
    torch.cuda.profiler.start()
    runner(*inputs)
    torch.cuda.synchronize()
    torch.cuda.profiler.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
