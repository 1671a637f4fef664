"""The judge's dispatch-mode recorders never import ``torch._dynamo`` in a worker (1 s of CPU
per worker process; ``hawkeye_env/judge/sandboxed/candidate/dispatch_mode.py``), and still record every op."""

from __future__ import annotations

import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent("""
    import sys
    import torch
    from hawkeye_env.judge.sandboxed.candidate.guards import OpRecorder
    from hawkeye_env.judge.sandboxed.candidate.plan_recorder import PlanRecorder

    x = torch.ones(4)
    rec = OpRecorder()
    with rec:
        y = torch.empty(4).copy_(x).mul_(2)
    assert dict(rec.ops) == {"empty": 1, "copy_": 1, "mul_": 1}, dict(rec.ops)
    with PlanRecorder([x], {}, device="cpu") as plan:
        z = x + 1
    assert plan.steps and torch.equal(z, x + 1), plan.steps
    print("torch._dynamo" in sys.modules)
""")


def test_recorders_record_without_importing_dynamo():
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False", done.stdout
