"""A generated distribution as the rest of the project sees it: graph hashes that ignore shapes,
dtypes, constants and loop lengths; splits that share no graph; a folder (or an archive of it)
registered lazily through its index; ``hawkeye tasks generate`` and ``tasks list --split``; the
env drawing from a split."""

from __future__ import annotations

import json
import os
import random
import shutil
import sys
import tarfile

import gymnasium
import pytest
import torch
from torch import nn
from typer.testing import CliRunner

from hawkeye_env.cli import app
from hawkeye_env.registration import KERNEL_OPT_ID
from hawkeye_env.task_gates.pipeline import GenerateConfig, assign, generate
from hawkeye_env.tasks import registry
from hawkeye_env.tasks.generate.graph import graph_hash, task_hash, trace
from hawkeye_env.tasks.generate.splits import SPLIT_SHARES, split_for
from hawkeye_env.tasks.selection import select_tasks, split_ids, task_split
from tests.conftest import registry_restored

runner = CliRunner()


class Norm(nn.Module):
    def __init__(self, eps: float, layer: bool = False):
        super().__init__()
        self.eps, self.layer = eps, layer

    def forward(self, x):
        h = x.float()
        if self.layer:
            h = h - h.mean(-1, keepdim=True)
        return (h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + self.eps)).to(x.dtype)


class Scan(nn.Module):
    def forward(self, x):
        state, out = torch.zeros_like(x[:, 0]), []
        for t in range(x.shape[1]):
            state = 0.5 * state + x[:, t]
            out.append(state)
        return torch.stack(out, 1)


def _hash(model, *shape, dtype=torch.float32):
    return graph_hash(trace(model, [torch.randn(*shape, dtype=dtype)]))


def test_graph_hash_is_the_structure_alone():
    assert _hash(Norm(1e-5), 5, 33) == _hash(Norm(1e-6), 7, 100, dtype=torch.bfloat16)
    assert _hash(Norm(1e-5), 5, 33) != _hash(Norm(1e-5, layer=True), 5, 33)
    assert _hash(Scan(), 2, 5, 3) == _hash(Scan(), 3, 13, 8)
    t = trace(Norm(1e-5), [torch.randn(5, 33)])
    assert task_hash(t, [{"M": 5, "N": 33}]) != task_hash(t, [{"M": 5, "N": 35}])


def test_splits_follow_the_graph_and_its_shares():
    rng = random.Random(0)
    hashes = [f"{rng.getrandbits(80):020x}" for _ in range(4000)]
    counts = {name: sum(split_for(h) == name for h in hashes) / len(hashes) for name, _ in SPLIT_SHARES}
    for name, share in SPLIT_SHARES:
        assert abs(counts[name] - share) < 0.025, counts
    assert all(split_for(h) == split_for(h) for h in hashes[:50])
    assert split_for(hashes[0], {hashes[0]}) == "test"


def _record(i: int, task_hash: str, graph: str) -> dict:
    return {"id": f"t{i}", "entry": {"task_hash": task_hash, "graph_hash": graph}}


def test_assign_drops_duplicates_and_holds_out_graphs(tmp_path):
    records = [_record(0, "a", "000000000000"), _record(1, "a", "000000000000"), _record(2, "b", "ffffffffffff")]
    (tmp_path / "t1").mkdir()
    assign(records, {"ffffffffffff": "softmax_fp32"}, tmp_path)
    assert records[1]["dropped"]["code"] == "duplicate" and not (tmp_path / "t1").exists()
    assert records[0]["entry"]["split"] == "train" and records[2]["entry"]["split"] == "test"
    assert records[2]["entry"]["held_out_graph"] == "softmax_fp32"


@pytest.fixture(scope="module")
def distribution(tmp_path_factory):
    out = tmp_path_factory.mktemp("dist")
    config = GenerateConfig(n=4, seed=9, out=out, families=("elementwise_chain", "row_norm", "softmax"),
                            compile="none", held_out={})
    return out, generate(config)


def test_generate_writes_tasks_an_index_and_a_report(distribution):
    out, report = distribution
    index = json.loads((out / "tasks.json").read_text())["tasks"]
    assert report["kept"] == len(index) and report["kept"] + sum(report["dropped"].values()) == 4
    assert json.loads((out / "report.json").read_text())["kept"] == report["kept"]
    for entry in index:
        assert (out / entry["id"] / "task.py").is_file() and entry["split"] in ("train", "validation", "test")
        assert entry["difficulty"]["level"] in (1, 2, 3) and entry["graph_hash"] and entry["task_hash"]
    kept = {e["id"] for e in index}
    assert {p.name for p in out.iterdir() if p.is_dir()} == kept


def test_a_registered_folder_is_lazy_and_split_aware(distribution):
    out, _ = distribution
    index = {e["id"]: e for e in json.loads((out / "tasks.json").read_text())["tasks"]}
    for name in [m for m in sys.modules if m.split(".")[0] in index]:  # as in a fresh process
        del sys.modules[name]
    with registry_restored():
        os.environ[registry.TASK_DIRS_ENV] = str(out)
        assert set(index) <= set(registry.registered_ids())
        assert not any(f"{i}.task" in sys.modules for i in index)  # listing imported none of them
        for split in ("train", "validation", "test"):
            want = [i for i, e in index.items() if e["split"] == split]
            assert [i for i in split_ids(split) if i in index] == want
        assert "softmax_fp32" in select_tasks("split:test") and task_split("softmax_fp32") == "test"
        first = next(iter(index))
        assert registry.get_task(first).id == first and f"{first}.task" in sys.modules
        rows = json.loads(runner.invoke(app, ["tasks", "list", "--split", index[first]["split"], "--json"]).stdout)
        assert first in {r["id"] for r in rows} and {r["split"] for r in rows} == {index[first]["split"]}
        env = gymnasium.make(KERNEL_OPT_ID, tasks=f"split:{index[first]['split']}", store=":memory:", device="cpu")
        assert first in env.unwrapped.tasks
        env.close()
        with pytest.raises(KeyError):
            select_tasks("split:holdout")


@pytest.mark.parametrize("fmt", ["gztar", "zip"])
def test_an_archive_of_the_folder_registers_like_the_folder(distribution, tmp_path, fmt):
    out, _ = distribution
    archive = shutil.make_archive(str(tmp_path / "dist"), fmt, root_dir=out.parent, base_dir=out.name)
    with registry_restored():
        os.environ[registry.TASK_DIRS_ENV] = archive
        unpacked = registry.user_task_dirs()[0]
        assert unpacked.startswith(str(tmp_path)) and unpacked != str(out)
        ids = [e["id"] for e in json.loads((out / "tasks.json").read_text())["tasks"]]
        assert set(ids) <= set(registry.registered_ids())
        assert registry.user_task_dirs() == [unpacked]  # unpacked once, found again


def test_an_archive_member_outside_the_folder_is_refused(tmp_path):
    evil = tmp_path / "evil.tar.gz"
    with tarfile.open(evil, "w:gz") as t:
        payload = tmp_path / "payload.py"
        payload.write_text("SPEC = None\n")
        t.add(payload, arcname="../escaped.py")
    with registry_restored(), pytest.raises(tarfile.TarError):
        os.environ[registry.TASK_DIRS_ENV] = str(evil)
        registry.user_task_dirs()
    assert not (tmp_path.parent / "escaped.py").exists()


def test_the_generate_command(tmp_path):
    out = tmp_path / "cli"
    result = runner.invoke(app, ["tasks", "generate", "--n", "2", "--seed", "4", "--out", str(out),
                                 "--families", "gated_activation", "--compile", "none", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["n"] == 2 and report["held_out_graphs"] >= 20  # the curated suite's graphs
    bad = runner.invoke(app, ["tasks", "generate", "--n", "1", "--out", str(out), "--families", "nope"])
    assert bad.exit_code != 0 and "unknown families" in bad.output
