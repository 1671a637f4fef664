"""Per-client FIFO queues served round-robin, with bounds on what each client holds and runs.

``JudgeQueue`` keeps its waiting candidates here, under its own lock (this class is not
thread-safe). A client is whatever key the caller gives: the served env uses one per WebSocket
session and one per HTTP peer address; ``None`` is the process's own callers (a trainer's
rollouts, the adapters), which have no bound. ``pop(n)`` takes one item from each client in turn,
starting after the client served last, so a client with many items waiting gets one turn per
round, as a client with one does. A client *holds* an item from ``push`` until ``release`` (the
item was judged) or ``remove`` (withdrawn while it waited), so ``max_per_client`` bounds a
client's candidates waiting plus those being judged; ``max_running`` bounds those being judged
(popped, not released): a client at it is passed over until one of its items is released.
Example::

    q = FairQueue(max_per_client=2, max_running=1)
    q.push("a", 1); q.push("a", 2); q.push("b", 3)
    q.pop(3)                    # [("a", 1), ("b", 3)]: "a" runs one item at a time
    q.push("a", 4)              # QueueFull: "a" holds 1 and 2 until they are released
"""

from __future__ import annotations

from collections import Counter, OrderedDict, deque
from collections.abc import Hashable
from typing import Any


class QueueFull(RuntimeError):
    """A client asked for more than ``max_per_client`` candidates waiting or judged at once."""


class FairQueue:
    """Round-robin over clients' FIFO queues; see the module docstring.

    Args:
        max_per_client: most items a named client holds at once (None: no bound).
        max_running: most popped, unreleased items of a named client (None: no bound).
    """

    def __init__(self, max_per_client: int | None = None, max_running: int | None = None):
        if any(m is not None and m < 1 for m in (max_per_client, max_running)):
            raise ValueError("max_per_client and max_running must be >= 1 or None")
        self.max_per_client, self.max_running = max_per_client, max_running
        self._turns: OrderedDict[Hashable, deque] = OrderedDict()  # clients with items waiting, next first
        self._held: Counter = Counter()
        self._running: Counter = Counter()

    def __len__(self) -> int:
        return sum(len(q) for q in self._turns.values())

    def held(self, client: Hashable) -> int:
        """Items ``client`` holds: waiting, or popped and not yet released."""
        return self._held[client]

    def clients(self) -> int:
        """Clients holding at least one item."""
        return len(self._held)

    def admits(self, client: Hashable) -> bool:
        """Whether ``push(client, ...)`` would be accepted now."""
        return client is None or self.max_per_client is None or self._held[client] < self.max_per_client

    def check(self, client: Hashable) -> None:
        """Raise ``QueueFull`` when ``client`` is at its bound."""
        if not self.admits(client):
            raise QueueFull(f"this client already has {self._held[client]} candidates waiting or being judged "
                            f"(the limit is {self.max_per_client}); wait for a verdict before sending more")

    def push(self, client: Hashable, item: Any) -> None:
        """Queue ``item`` last in ``client``'s queue; ``QueueFull`` when the client is at its bound."""
        self.check(client)
        self._turns.setdefault(client, deque()).append(item)
        self._held[client] += 1

    def ready(self) -> int:
        """Waiting items ``pop`` could take now (those of clients below ``max_running``)."""
        return sum(len(q) for c, q in self._turns.items() if self._may_run(c))

    def pop(self, n: int) -> list[tuple[Hashable, Any]]:
        """Up to ``n`` ``(client, item)`` pairs, one per client in turn, passing over clients at
        ``max_running``; the items stay held until released."""
        out = []
        while len(out) < n:
            client = next((c for c in self._turns if self._may_run(c)), _NONE)
            if client is _NONE:
                break
            queue = self._turns.pop(client)
            out.append((client, queue.popleft()))
            self._running[client] += 1
            if queue:
                self._turns[client] = queue  # its next item waits for the other clients' turns
        return out

    def remove(self, client: Hashable, item: Any) -> bool:
        """Withdraw a waiting ``item`` and release it; False when it is not waiting (popped already)."""
        queue = self._turns.get(client)
        if queue is None or not any(x is item for x in queue):
            return False
        self._turns[client] = deque(x for x in queue if x is not item)
        if not self._turns[client]:
            del self._turns[client]
        self._forget(client)
        return True

    def release(self, client: Hashable) -> None:
        """``client`` no longer holds one of its popped items (it was judged or dropped)."""
        self._running[client] -= 1
        if self._running[client] <= 0:
            del self._running[client]
        self._forget(client)

    def _forget(self, client: Hashable) -> None:
        self._held[client] -= 1
        if self._held[client] <= 0:
            del self._held[client]

    def _may_run(self, client: Hashable) -> bool:
        return client is None or self.max_running is None or self._running[client] < self.max_running


_NONE = object()


__all__ = ["FairQueue", "QueueFull"]
