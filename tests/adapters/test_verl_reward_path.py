"""veRL's own reward path calls the adapter, and its rewards are the judge's.

veRL 0.9's trainer scores a rollout in ``RewardLoopWorker`` (the Ray actor of ``RewardLoopManager``):
built from veRL's generated PPO config with the README's overrides, it loads ``compute_score`` with
``get_custom_reward_fn`` (``pkg://`` path), and its method ``compute_score_batch`` runs
``NaiveRewardManager.run_single`` on each response of a ``DataProto``. The legacy
``BatchRewardManager`` (``reward_model.reward_manager=batch`` in veRL <= 0.6, still shipped in
``verl.workers.reward_manager``) calls the adapter's ``compute_score_batch``, loaded by 0.9.1's
``get_custom_reward_fn`` from the adapter's file path (veRL <= 0.6's loader itself is not run).
The batch holds the expert, a broken copy (both with a comment no other test judges, so the
worker's concurrent calls reach the judge) and a reply without code, each a decoded token sequence.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np
import pytest
import torch

from hawkeye_env.adapters import verl as adapter

verl = pytest.importorskip("verl", reason=adapter.INSTALL_HINT)

from omegaconf import OmegaConf  # noqa: E402
from verl import DataProto  # noqa: E402
from verl.experimental.reward_loop import RewardLoopWorker  # noqa: E402
from verl.trainer.ppo.reward import get_custom_reward_fn  # noqa: E402
from verl.utils import hf_tokenizer  # noqa: E402
from verl.workers.reward_manager import get_reward_manager_cls  # noqa: E402

from tests.adapters.conftest import BROKEN, SOLUTION, TASK, fenced  # noqa: E402
from training.tiny_model import build_tiny_tokenizer  # noqa: E402

REPLIES = [fenced(SOLUTION + "# verl\n"), fenced(BROKEN + "# verl\n"), "I cannot write this kernel."]
EXPECTED = [(pytest.approx(0.2), "correct"), (-0.5, "incorrect"), (-1.0, "no_source")]


@pytest.fixture(scope="module")
def tokenizer_dir(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("tokenizer")
    build_tiny_tokenizer().save_pretrained(path)
    return str(path)


def verl_config(tokenizer_dir: str, path: str, name: str):
    """veRL's generated PPO trainer config with the reward overrides the README gives."""
    config = OmegaConf.load(Path(verl.__file__).parent / "trainer" / "config" / "_generated_ppo_trainer.yaml")
    overrides = [f"actor_rollout_ref.model.path={tokenizer_dir}", f"reward.custom_reward_function.path={path}",
                 f"reward.custom_reward_function.name={name}"]
    return OmegaConf.merge(config, OmegaConf.from_dotlist(overrides))


def rollout_batch(tokenizer, replies: list[str], ground_truths: list[str] | None = None) -> DataProto:
    """A rollout's output as veRL's reward sees it: ``prompts`` [B, P], right-padded ``responses``
    [B, R], ``attention_mask`` [B, P + R], and the dataset row's fields from ``verl_rows`` (each
    row's ground truth replaced by ``ground_truths[i]`` when given)."""
    [row] = adapter.verl_rows([TASK], context="none")
    truths = ground_truths or [TASK] * len(replies)
    prompt = torch.tensor(tokenizer(TASK)["input_ids"])
    encoded = [torch.tensor(tokenizer(reply)["input_ids"]) for reply in replies]
    width = max(len(ids) for ids in encoded)
    responses = torch.full((len(replies), width), tokenizer.pad_token_id)
    response_mask = torch.zeros((len(replies), width), dtype=torch.long)
    for i, ids in enumerate(encoded):
        responses[i, : len(ids)] = ids
        response_mask[i, : len(ids)] = 1
    prompts = prompt.expand(len(replies), -1)
    attention_mask = torch.cat([torch.ones_like(prompts), response_mask], dim=1)
    fields = {key: np.array([row[key] if key == "data_source" else dict(row[key]) for _ in replies], dtype=object)
              for key in ("data_source", "reward_model", "extra_info")}
    for reward_model, truth in zip(fields["reward_model"], truths):
        reward_model["ground_truth"] = truth
    return DataProto.from_dict(tensors={"prompts": prompts, "responses": responses, "attention_mask": attention_mask},
                               non_tensors=fields)


def reward_at_last_token(rewards: torch.Tensor, data: DataProto) -> list[float]:
    """The reward each response gets at its last valid token (veRL's ``rm_scores`` layout)."""
    lengths = data.batch["attention_mask"][:, data.batch["prompts"].shape[1]:].sum(dim=1)
    assert int((rewards != 0).sum()) == len(lengths)
    return [float(rewards[i, n - 1]) for i, n in enumerate(lengths)]


def test_reward_loop_worker_loads_compute_score_and_scores_a_batch(tokenizer_dir, cpu_judge):
    config = verl_config(tokenizer_dir, "pkg://hawkeye_env.adapters.verl", "compute_score")
    worker = RewardLoopWorker(config)
    before = cpu_judge.status()
    try:
        data = rollout_batch(worker.input_tokenizer, REPLIES)
        outputs = worker.loop.run_until_complete(worker.compute_score_batch(data))
    finally:
        asyncio.set_event_loop(None)
        worker.loop.close()
    after = cpu_judge.status()
    # both code replies reach the one shared judge (in one batch when their threads arrive within its
    # batching window, which a loaded 2-core machine need not give)
    assert after["submitted"] - before["submitted"] == 2 and 1 <= after["batches"] - before["batches"] <= 2
    assert type(worker.reward_manager).__name__ == "NaiveRewardManager"
    assert [(o["reward_score"], o["reward_extra_info"]["stage"]) for o in outputs] == EXPECTED
    assert outputs[0]["reward_extra_info"]["correct"] is True
    rm_scores = worker.reward_manager.assemble_rm_scores(data, [o["reward_score"] for o in outputs])
    assert reward_at_last_token(rm_scores, data) == [reward for reward, _ in EXPECTED]


def test_batch_reward_manager_calls_compute_score_batch_and_keeps_the_scores_beside_a_bad_row(tokenizer_dir):
    config = verl_config(tokenizer_dir, adapter.__file__, "compute_score_batch")
    tokenizer = hf_tokenizer(tokenizer_dir)
    manager = get_reward_manager_cls("batch")(tokenizer, num_examine=0, compute_score=get_custom_reward_fn(config))
    data = rollout_batch(tokenizer, [*REPLIES, REPLIES[0]], ground_truths=[TASK] * 3 + ["no_such_task"])
    out = manager(data, return_dict=True)
    lengths = data.batch["attention_mask"][:, data.batch["prompts"].shape[1]:].sum(dim=1)
    rewards = [float(out["reward_tensor"][i, n - 1]) for i, n in enumerate(lengths)]
    assert rewards == [reward for reward, _ in EXPECTED] + [adapter.BAD_ROW_SCORE]
    assert out["reward_extra_info"]["stage"] == [stage for _, stage in EXPECTED] + ["bad_row"]
    assert "unknown task 'no_such_task'" in out["reward_extra_info"]["error"][3]
