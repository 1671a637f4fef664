"""The candidate worker's recording mode (``worker.run_job`` with ``record``), in process on CPU:
one entry per recording trial and no trial rows; under the interpreter no launch reaches Triton's
CUDA launcher, so each forward is refused (on the GPU the same path records the
plans the replay runs: tests/gpu/test_gpu_replay.py). The interpreter's own bookkeeping ops
(``set_`` with a storage) are refused first; a CPU verdict never records (``replayed.mode``)."""

from __future__ import annotations

import os

from hawkeye_env.judge.sandboxed.candidate.worker import run_job
from hawkeye_env.tasks.registry import get_task, solution_source


def _job(task: str, source: str, tmp_path) -> dict:
    spec = get_task(task)
    return {"task": task, "source": source, "device": "cpu", "module_name": "hawkeye_candidate_rec",
            "trials": [{"shape": dict(s), "distribution": "normal", "seed": 5, "order": "candidate_first"}
                       for s in spec.cpu_shapes[:2]],
            "timing": None, "record": True, "workdir": str(tmp_path)}


def test_recording_replies_with_one_entry_per_trial_and_no_rows(tmp_path, monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    job = _job("vector_add_fp32", solution_source(get_task("vector_add_fp32")), tmp_path)
    reply = run_job(job)
    assert reply["stage"] == "ok", reply["error"]
    assert reply["trials"] == [] and not reply["timing"]
    assert len(reply["plans"]) == len(job["trials"])
    for p in reply["plans"]:  # on CPU the kernels travel as source (interpreter_recorder.py)
        assert set(p) == {"plan", "kernels"}, p
        assert [k["name"] for k in p["kernels"]] == ["_add_kernel"] and "def _add_kernel(" in p["kernels"][0]["source"]
        assert sum("launch" in step for step in p["plan"]["steps"]) == 1
    assert os.path.exists(tmp_path / "hawkeye_candidate_rec.py")


def test_a_parameter_changed_by_a_load_hook_is_refused(tmp_path, monkeypatch):
    """The replay fills parameters from the reference's state dict: a weight a load hook
    transformed would be replayed untransformed, so the forward is refused with the reason."""
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    source = solution_source(get_task("rmsnorm_bf16")).replace(
        "class ModelNew(nn.Module):",
        "class ModelNew(nn.Module):\n"
        "    def _load_from_state_dict(self, state, prefix, *args):\n"
        "        super()._load_from_state_dict({k: v * 2 for k, v in state.items()}, prefix, *args)\n", 1)
    reply = run_job(_job("rmsnorm_bf16", source, tmp_path))
    assert reply["stage"] == "ok", reply["error"]
    assert all("differs from the reference's" in p["refused"] for p in reply["plans"]), reply["plans"]
