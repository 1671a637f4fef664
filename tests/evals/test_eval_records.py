"""What an eval's records say: replies written as they arrive and reused by a resumed eval,
identical samples at a temperature above 0 warned of, a down server reported as policy failures
(never a reward), no judging rate when nothing was judged, plots readable at 30 tasks."""

from __future__ import annotations

import json

import pytest

from evals import plots
from evals.best_of_n import run_eval
from evals.candidates import POLICY_ERROR, Candidate, summarise
from evals.samples import Request, SampleLog, identical_samples, sample_turn
from policies.openai_compat import OpenAICompatPolicy
from reward import REWARD_VERSION
from tests.policies.test_openai_compat import down_url

TASK = "vector_add_fp32"


@pytest.fixture(scope="module")
def store_path(tmp_path_factory):
    return tmp_path_factory.mktemp("store") / "results.sqlite3"


class _Killed(Exception):
    """Stands for the eval's process being killed mid-sample."""


class _ScriptedLLM:
    """An LLM-like policy at temperature 0.8 whose sample ``i`` of an observation is a line of
    prose naming its trajectory and no code (the env's ``no_source``: nothing to judge, so the test
    stays fast); with ``same_text`` every sample is the same line. ``kill_after`` replies are
    reported through ``on_reply``, then the "process is killed"."""

    name = "scripted-llm"

    def __init__(self, kill_after: int | None = None, same_text: bool = False):
        self.kill_after, self.same_text = kill_after, same_text
        self.on_reply = None
        self.calls: list[tuple[list[int], int]] = []

    def describe(self) -> dict:
        return {"model": "scripted", "temperature": 0.8, "seed": 0}

    def sample(self, observations, n):
        self.calls.append(([o["trajectory"] for o in observations], n))
        out = []
        for obs in observations:
            texts = ["Sample: no code today." if self.same_text else f"Sample {obs['trajectory'] + i}: no code today."
                     for i in range(n)]
            if self.kill_after is not None:
                self.on_reply(obs, texts[:self.kill_after])
                raise _Killed
            out.append(texts)
        return out


def _eval(policy, out, store_path, n=3):
    return run_eval(policy, [TASK], n=n, out_dir=out, device="cpu", store=store_path, wandb_mode="disabled",
                    progress=False)


def test_replies_are_written_as_they_arrive_and_a_resumed_eval_asks_only_for_the_rest(tmp_path, store_path):
    with pytest.raises(_Killed):
        _eval(_ScriptedLLM(kill_after=1), tmp_path, store_path)
    [row] = [json.loads(line) for line in (tmp_path / "samples.jsonl").read_text().splitlines()]
    assert (row["task"], row["trajectory"], row["turn"]) == (TASK, 0, 0) and row["text"].startswith("Sample 0:")

    resumed = _ScriptedLLM()
    results = _eval(resumed, tmp_path, store_path)
    assert resumed.calls == [([1], 2)]  # trajectories 1 and 2 only, asked from trajectory 1
    assert results["samples"]["reused"] == 1 and results["tasks"][TASK]["stages"]["no_source"] == 3
    texts = sorted(json.loads(line)["text"].split(":")[0] for line in (tmp_path / "samples.jsonl").open())
    assert texts == ["Sample 0", "Sample 1", "Sample 2"]

    finished = _ScriptedLLM(kill_after=0)  # would raise if asked for anything
    again = _eval(finished, tmp_path, store_path)
    assert finished.calls == [] and again["samples"]["reused"] == 3 and again["tasks"] == results["tasks"]
    assert "3 replies reused from `samples.jsonl`" in (tmp_path / "report.md").read_text()


def test_the_log_skips_a_cut_line_and_other_policies_rows(tmp_path):
    path = tmp_path / "samples.jsonl"
    log = SampleLog(path, {"name": "a", "temperature": 0.8})
    log.add((TASK, 0), 0, "p", "kept")
    log.close()
    with open(path, "a") as f:
        f.write('{"policy": "cut sho')
    other = SampleLog(path, {"name": "a", "temperature": 0.2})
    other.add((TASK, 0), 0, "p", "another policy's")
    other.close()
    again = SampleLog(path, {"name": "a", "temperature": 0.8})
    assert len(again) == 1 and again.get((TASK, 0), 0, "p") == "kept" and again.get((TASK, 0), 0, "q") is None
    again.close()
    assert len(path.read_text().splitlines()) == 3  # the cut line stays alone on its own line


def test_a_lost_reply_is_not_logged_and_is_asked_again(tmp_path):
    class Flaky:
        name, on_reply = "flaky", None

        def __init__(self):
            self.errors = []

        def sample(self, observations, n):
            self.errors.append({"task_id": TASK, "trajectory": observations[0]["trajectory"], "turn": 0,
                                "missing": 1, "error": "HTTP 503"})
            return [[f"r{observations[0]['trajectory'] + i}" for i in range(n - 1)] + [""]]

    log = SampleLog(tmp_path / "s.jsonl", {"name": "flaky"})
    obs = {"task_id": TASK, "prompt": "p", "turn": 0, "trajectory": 0}
    first = sample_turn(Flaky(), log, [Request(obs, [(TASK, 0), (TASK, 1), (TASK, 2)])], 0)
    assert first.replies == {(TASK, 0): "r0", (TASK, 1): "r1"} and first.lost == {(TASK, 2): "HTTP 503"}
    second = sample_turn(Flaky(), log, [Request(obs, [(TASK, 0), (TASK, 1), (TASK, 2)])], 0)
    assert second.reused == 2 and second.lost == {(TASK, 2): "HTTP 503"}  # asked again, from trajectory 2


def test_identical_samples_at_a_temperature_above_0_are_warned_of(tmp_path, store_path):
    results = _eval(_ScriptedLLM(same_text=True), tmp_path, store_path, n=2)
    assert results["warnings"] == [f"{TASK} turn 0: all 2 samples are identical at temperature 0.8 "
                                   "(does the server ignore the temperature or the seed?)"]
    assert f"**Warning:** {TASK} turn 0: all 2 samples are identical" in (tmp_path / "report.md").read_text()
    replies = {(TASK, 0): "x", (TASK, 1): "x"}
    assert identical_samples(replies, 0, 0.0) == [] and identical_samples(replies, 0, None) == []
    assert identical_samples({(TASK, 0): "x"}, 0, 0.8) == []
    assert identical_samples({**replies, (TASK, 2): "y"}, 1, 0.8) == []


def test_a_down_server_is_a_policy_failure_in_every_record_never_a_reward(tmp_path, store_path):
    policy = OpenAICompatPolicy(down_url(), "my-model", temperature=0.7, max_tokens=99, max_retries=0, api_key="k")
    results = _eval(policy, tmp_path, store_path, n=2)
    task = results["tasks"][TASK]
    assert (task["obtained"], task["policy_failures"]) == (0, 2) and task["mean_reward"] is None
    assert task["correct_rate"] is None and "best_of_k_reward" not in task
    assert results["overall"]["tasks_without_samples"] == [TASK] and results["judge"]["judged"] == 0
    rows = [json.loads(line) for line in (tmp_path / "candidates.jsonl").read_text().splitlines()]
    assert [(r["stage"], r["reward"]) for r in rows] == [(POLICY_ERROR, None)] * 2
    assert not (tmp_path / "samples.jsonl").read_text()
    cfg = results["config"]["policy_config"]
    assert (cfg["model"], cfg["temperature"], cfg["max_tokens"]) == ("my-model", 0.7, 99)
    assert cfg["base_url"] == policy.base_url and "k" not in cfg.values()
    report = (tmp_path / "report.md").read_text()
    assert "**Policy failures:** 2 of 2 samples" in report and "APIConnectionError" in report
    assert f"No sample obtained for: {TASK}." in report and "model `my-model`" in report
    assert "no source judged fresh (0 answered from the store, 2 policy failures): no judging rate" in report
    assert "per minute" not in report
    assert (tmp_path / "distributions.png").exists()
    plt = plots.pyplot()
    fig = plots.distributions_figure(results, [Candidate(**r) for r in rows], plt)
    bars = fig.axes[0]
    assert [t.get_text() for t in bars.get_xticklabels()] == ["policy failure\n(not judged)"]
    assert "2 of 2 samples failed (policy, not judged)" in fig._suptitle.get_text()
    plt.close(fig)


def _synthetic(tasks: int, n: int = 4) -> tuple[dict, list[Candidate]]:
    names = [f"gated_delta_net_fwd_{t:04d}" for t in range(tasks)]  # as long as the longest task id
    cands = [Candidate(task=name, sample=j, turn=turn, source_hash=f"{name}{j}", stage="correct", reward=0.1 * j,
                       speedup={}, violations=[], compiled=True, correct=True, timed=False, cached=False)
             for name in names for j in range(n) for turn in range(2)]
    by_task = {name: [[c for c in cands if c.task == name and c.sample == j] for j in range(n)] for name in names}
    config = {"policy": "openai", "policy_config": {"model": "m"}, "n": n, "turns": 2, "device": "cpu",
              "reward_version": REWARD_VERSION, "versions": {"reward": REWARD_VERSION}}
    return {"config": config, **summarise(by_task, 2)}, cands


def test_plots_at_30_tasks_keep_the_legend_off_the_axes_and_name_the_reward_version():
    results, cands = _synthetic(30)
    plt = plots.pyplot()
    from matplotlib.colors import to_rgba

    for fig in (plots.curves_figure(results, plt), plots.by_turn_figure(results, plt)):
        renderer = fig.canvas.get_renderer()
        [legend] = fig.legends
        box = legend.get_window_extent(renderer)
        assert len(legend.get_texts()) == 31  # 30 tasks and the mean
        assert fig.bbox.contains(box.x0, box.y0) and fig.bbox.contains(box.x1, box.y1)  # not clipped
        for ax in fig.axes:
            assert not box.overlaps(ax.get_tightbbox(renderer)), ax.get_title()
            assert fig.bbox.contains(*ax.get_tightbbox(renderer).p0), ax.get_title()  # y label not cut
        plt.close(fig)
    fig = plots.curves_figure(results, plt)
    assert fig.axes[0].get_title() == f"best-of-k reward ({REWARD_VERSION})"
    assert "(v1)" not in fig._suptitle.get_text() or REWARD_VERSION == "v1"
    styles = {(to_rgba(line.get_color()), line.get_linestyle()) for line in fig.axes[0].get_lines()}
    assert len(styles) == 31  # every task told apart
    plt.close(fig)
