"""``FairQueue``: round-robin between clients, the per-client bound, the running bound, withdrawal."""

from __future__ import annotations

import pytest

from hawkeye_env.server.fair_queue import FairQueue, QueueFull


def test_clients_take_turns_whatever_their_backlog():
    q = FairQueue()
    for i in range(5):
        q.push("flood", f"f{i}")
    q.push("one", "o0")
    q.push("two", "t0")
    assert [item for _, item in q.pop(4)] == ["f0", "o0", "t0", "f1"]
    q.push("one", "o1")  # "one" comes back after the clients already waiting
    assert [item for _, item in q.pop(10)] == ["f2", "o1", "f3", "f4"]
    assert len(q) == 0


def test_a_named_client_is_bounded_until_its_items_are_released_and_none_is_not():
    q = FairQueue(max_per_client=2)
    q.push("a", 1)
    q.push("a", 2)
    with pytest.raises(QueueFull, match="limit is 2"):
        q.push("a", 3)
    assert not q.admits("a") and q.admits("b")
    q.pop(2)
    assert q.held("a") == 2 and not q.admits("a")  # popped items stay held while they are judged
    q.release("a")
    q.push("a", 3)
    for i in range(10):
        q.push(None, i)
    assert q.held(None) == 10 and q.admits(None)


def test_a_client_at_its_running_bound_is_passed_over_not_served_twice():
    q = FairQueue(max_running=1)
    q.push("a", "a0")
    q.push("a", "a1")
    q.push("b", "b0")
    assert q.pop(3) == [("a", "a0"), ("b", "b0")]
    assert q.ready() == 0 and len(q) == 1 and q.pop(3) == []
    q.release("a")
    assert q.ready() == 1 and q.pop(3) == [("a", "a1")]


def test_a_withdrawn_item_is_never_popped_and_frees_its_client():
    q = FairQueue(max_per_client=2)
    first, second = object(), object()
    q.push("a", first)
    q.push("a", second)
    assert q.remove("a", first) and not q.remove("a", first)
    assert q.held("a") == 1 and q.admits("a")
    assert q.pop(5) == [("a", second)]
    assert not q.remove("a", second)  # popped: being judged, no longer withdrawable
    q.release("a")
    assert q.clients() == 0


def test_bad_bounds_are_refused():
    with pytest.raises(ValueError):
        FairQueue(max_per_client=0)
    with pytest.raises(ValueError):
        FairQueue(max_running=0)
