"""ResultStore: round trips, canonical keys, persistence, concurrency and the store path."""

from __future__ import annotations

import multiprocessing as mp
import sqlite3
from pathlib import Path

import pytest

from hawkeye_env.judge.parent import store as store_mod
from hawkeye_env.judge.parent.store import ResultStore, default_store_path, source_hash

VERSIONS = {"torch": "2.8.0", "triton": "3.4.0", "judge": "1"}
CONFIG = {"trials": 5, "atol": 1e-3, "rtol": 1e-3}
VERDICT = {"task": "t", "stage": "correct", "speedup": {"eager": 1.5}, "trials": [{"x": 1}]}
SHAPE = {"B": 4, "N": 1024}


@pytest.fixture
def store(tmp_path: Path):
    with ResultStore(tmp_path / "r.sqlite3") as s:
        yield s


def test_verdict_round_trip(store: ResultStore) -> None:
    h = source_hash("print(1)\n")
    assert store.get_verdict("t", h, "cpu", VERSIONS, CONFIG) is None
    store.put_verdict("t", h, "cpu", VERSIONS, CONFIG, VERDICT)
    assert store.get_verdict("t", h, "cpu", VERSIONS, CONFIG) == VERDICT
    assert store.count() == 1
    # put again replaces, does not duplicate
    store.put_verdict("t", h, "cpu", VERSIONS, CONFIG, {**VERDICT, "stage": "incorrect"})
    assert store.get_verdict("t", h, "cpu", VERSIONS, CONFIG)["stage"] == "incorrect"
    assert store.count() == 1


def test_baseline_round_trip(store: ResultStore) -> None:
    assert store.get_baselines("t", SHAPE, "cuda:H200", VERSIONS) == {}
    store.put_baseline("t", SHAPE, "cuda:H200", VERSIONS, "eager", 1.25, {"n": 100, "iqr": 0.01})
    store.put_baseline("t", SHAPE, "cuda:H200", VERSIONS, "compile", 0.75, {})
    got = store.get_baselines("t", SHAPE, "cuda:H200", VERSIONS)
    assert got == {
        "eager": {"median_ms": 1.25, "n": 100, "iqr": 0.01},
        "compile": {"median_ms": 0.75},
    }
    assert store.get_baselines("t", {"B": 8, "N": 1024}, "cuda:H200", VERSIONS) == {}
    assert store.count() == 0  # count() is verdicts only


def test_key_order_independent(store: ResultStore) -> None:
    h = source_hash("x")
    store.put_verdict("t", h, "cpu", VERSIONS, CONFIG, VERDICT)
    rev_versions = dict(reversed(list(VERSIONS.items())))
    rev_config = dict(reversed(list(CONFIG.items())))
    assert list(rev_versions) != list(VERSIONS)
    assert store.get_verdict("t", h, "cpu", rev_versions, rev_config) == VERDICT
    store.put_baseline("t", {"N": 1024, "B": 4}, "cpu", rev_versions, "eager", 2.0, {})
    assert store.get_baselines("t", SHAPE, "cpu", VERSIONS) == {"eager": {"median_ms": 2.0}}
    nested = {"a": {"y": 1, "x": 2}, "b": [1, 2]}
    store.put_verdict("t", h, "cpu", VERSIONS, nested, VERDICT)
    assert store.get_verdict("t", h, "cpu", VERSIONS, {"b": [1, 2], "a": {"x": 2, "y": 1}})


def test_different_key_parts_miss(store: ResultStore) -> None:
    h = source_hash("x")
    store.put_verdict("t", h, "cpu", VERSIONS, CONFIG, VERDICT)
    assert store.get_verdict("t", h, "cuda:H200", VERSIONS, CONFIG) is None
    assert store.get_verdict("t", h, "cpu", {**VERSIONS, "torch": "2.9.0"}, CONFIG) is None
    assert store.get_verdict("t", h, "cpu", VERSIONS, {**CONFIG, "trials": 6}) is None
    assert store.get_verdict("t2", h, "cpu", VERSIONS, CONFIG) is None
    assert store.get_verdict("t", source_hash("y"), "cpu", VERSIONS, CONFIG) is None
    store.put_baseline("t", SHAPE, "cpu", VERSIONS, "eager", 1.0, {})
    assert store.get_baselines("t", SHAPE, "cuda:0", VERSIONS) == {}
    assert store.get_baselines("t", SHAPE, "cpu", {**VERSIONS, "judge": "2"}) == {}


def test_persists_across_reopen(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "dir" / "r.sqlite3"  # parent dirs are created
    with ResultStore(path) as s:
        s.put_verdict("t", "h", "cpu", VERSIONS, CONFIG, VERDICT)
        s.put_baseline("t", SHAPE, "cpu", VERSIONS, "eager", 3.0, {"n": 1})
    assert path.exists()
    with ResultStore(str(path)) as s:
        assert s.get_verdict("t", "h", "cpu", VERSIONS, CONFIG) == VERDICT
        assert s.get_baselines("t", SHAPE, "cpu", VERSIONS) == {"eager": {"median_ms": 3.0, "n": 1}}
        assert s.count() == 1
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0].lower() == "wal"
    conn.close()


def test_closed_store_raises(tmp_path: Path) -> None:
    s = ResultStore(tmp_path / "r.sqlite3")
    s.close()
    s.close()  # idempotent
    with pytest.raises(RuntimeError):
        s.count()


def _writer(path: str, worker: int, n: int) -> None:
    with ResultStore(path) as s:
        for i in range(n):
            s.put_verdict("t", f"w{worker}-{i}", "cpu", VERSIONS, CONFIG, {"i": i, "w": worker})
            s.put_baseline("t", {"i": i}, "cpu", VERSIONS, f"w{worker}", float(i), {})


def test_concurrent_writers_from_two_processes(tmp_path: Path) -> None:
    path = str(tmp_path / "r.sqlite3")
    ResultStore(path).close()
    n = 50
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(path, w, n)) for w in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=120)
        assert p.exitcode == 0
    with ResultStore(path) as s:
        assert s.count() == 2 * n
        for w in range(2):
            for i in (0, n - 1):
                assert s.get_verdict("t", f"w{w}-{i}", "cpu", VERSIONS, CONFIG) == {"i": i, "w": w}
        assert set(s.get_baselines("t", {"i": 7}, "cpu", VERSIONS)) == {"w0", "w1"}


def test_env_var_honoured(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "env" / "store.sqlite3"
    monkeypatch.setenv("HAWKEYE_STORE", str(target))
    assert default_store_path() == str(target)
    with ResultStore() as s:
        s.put_verdict("t", "h", "cpu", {}, {}, VERDICT)
        assert s.path == str(target)
    assert target.exists()


def test_default_path_without_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HAWKEYE_STORE", raising=False)
    p = Path(default_store_path())
    assert p.name == "results.sqlite3"
    assert p.parent == Path(store_mod.platformdirs.user_cache_dir("hawkeye-env"))


def test_memory_store(monkeypatch: pytest.MonkeyPatch) -> None:
    with ResultStore(":memory:") as s:
        s.put_verdict("t", "h", "cpu", VERSIONS, CONFIG, VERDICT)
        assert s.get_verdict("t", "h", "cpu", VERSIONS, CONFIG) == VERDICT
        assert s.count() == 1
    with ResultStore(":memory:") as s:  # private: a new one is empty
        assert s.count() == 0
    monkeypatch.setenv("HAWKEYE_STORE", ":memory:")
    with ResultStore() as s:
        assert s.path == ":memory:"
        assert s.count() == 0
        s.put_baseline("t", SHAPE, "cpu", VERSIONS, "eager", 1.0, {})
        assert s.get_baselines("t", SHAPE, "cpu", VERSIONS) == {"eager": {"median_ms": 1.0}}


def test_source_hash() -> None:
    assert source_hash("a\r\nb\r\n") == source_hash("a\nb\n")
    assert source_hash("a\nb") != source_hash("a\nb\n")
    assert len(source_hash("")) == 64
    assert source_hash("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
