"""The policy's replies of an evaluation, written as they arrive and reused when it is resumed.

``samples.jsonl`` in the eval's folder gets one row per reply the moment the policy has it (a
policy with an ``on_reply`` hook, ``policies/base.py``, reports each observation's replies as its
request returns; any other policy's are written when its ``sample`` call returns):

    {"policy": "<sha of describe(policy)>", "task": "gemm_bf16", "trajectory": 3, "turn": 0,
     "prompt": "<sha of the chat messages>", "text": "<the reply>"}

A re-run into the same folder reads the file first and reuses every reply whose policy
description (model, endpoint, sampling parameters, seed), task, trajectory, turn and prompt are
the same, asking the policy only for the others; with the verdicts in the results store, an eval
cut short resumes where it stopped without sampling or judging anything twice. A reply the policy
failed to produce (a down server) is never written, so a resumed eval asks for it again. Rows of
other policy descriptions stay in the file and are not used; a line cut short by a killed process
is skipped.

``sample_turn`` asks the policy for one turn's missing replies and tells lost replies (the
policy's ``errors`` records) from obtained ones; ``identical_samples`` finds turns whose samples
are all the same text while the policy samples at a temperature above 0.

Example::

    log = SampleLog(out / "samples.jsonl", describe(policy))
    turn = sample_turn(policy, log, [Request(obs, [("vector_add_fp32", j) for j in range(4)])], turn=0)
    turn.replies, turn.lost  # {(task, trajectory): text}, {(task, trajectory): the policy's error}
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from policies.prompts import chat_messages

log = logging.getLogger(__name__)

SAMPLES_FILE = "samples.jsonl"
#: A trajectory's key: ``(task id, trajectory)``.
Key = tuple[str, int]


def digest(value) -> str:
    """Short sha256 of ``value``'s canonical JSON."""
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()[:16]


@dataclass
class Request:
    """One observation to ask the policy for ``len(keys)`` replies: reply ``i`` goes to ``keys[i]``
    (at turn 0 consecutive trajectories of one task, ``obs["trajectory"]`` the first)."""

    obs: dict
    keys: list[Key]

    @property
    def prompt(self) -> str:
        return digest(chat_messages(self.obs))


class SampleLog:
    """``samples.jsonl`` of one policy (module docstring): ``get`` a logged reply, ``add`` one
    (written and flushed at once; thread-safe, each key once)."""

    def __init__(self, path: str | Path, description: dict):
        self.path = Path(path)
        self.policy = digest(description)
        self._rows: dict[tuple, str] = {}
        self._lock = threading.Lock()
        if self.path.exists():
            self._load()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file = open(self.path, "a", encoding="utf-8")
        if self.path.stat().st_size and not self.path.read_bytes().endswith(b"\n"):
            self._file.write("\n")  # a line cut short stays alone on its line

    def _load(self) -> None:
        for line in self.path.read_text(encoding="utf-8").splitlines():
            try:
                row = json.loads(line)
            except ValueError:
                continue
            if isinstance(row, dict) and row.get("policy") == self.policy:
                self._rows[row["task"], int(row["trajectory"]), int(row["turn"]), row["prompt"]] = row["text"]

    def __len__(self) -> int:
        return len(self._rows)

    def get(self, key: Key, turn: int, prompt: str) -> str | None:
        return self._rows.get((*key, turn, prompt))

    def add(self, key: Key, turn: int, prompt: str, text: str) -> None:
        with self._lock:
            if (*key, turn, prompt) in self._rows:
                return
            self._rows[(*key, turn, prompt)] = text
            row = {"policy": self.policy, "task": key[0], "trajectory": key[1], "turn": turn, "prompt": prompt,
                   "text": text}
            self._file.write(json.dumps(row, sort_keys=True) + "\n")
            self._file.flush()

    def close(self) -> None:
        self._file.close()


def missing_runs(request: Request, log_: SampleLog, turn: int) -> tuple[dict[Key, str], list[Request]]:
    """``request``'s replies found in ``log_`` and, for the rest, one request per run of
    consecutive trajectories (its observation naming the run's first trajectory)."""
    prompt = request.prompt
    found = {k: text for k in request.keys if (text := log_.get(k, turn, prompt)) is not None}
    runs: list[list[Key]] = []
    for k in request.keys:
        if k in found:
            continue
        if runs and runs[-1][-1][1] + 1 == k[1] and runs[-1][-1][0] == k[0]:
            runs[-1].append(k)
        else:
            runs.append([k])
    return found, [Request({**request.obs, "trajectory": run[0][1]}, run) for run in runs]


@dataclass
class TurnReplies:
    """One turn's replies: ``replies`` by key (obtained), ``lost`` (key -> the policy's error for
    a reply it failed to produce), the policy's new error ``records`` and how many replies were
    ``reused`` from the log."""

    replies: dict[Key, str] = field(default_factory=dict)
    lost: dict[Key, str] = field(default_factory=dict)
    records: list[dict] = field(default_factory=list)
    reused: int = 0


def _lost_keys(requests: list[Request], records: list[dict], turn: int) -> dict[Key, str]:
    """The keys whose replies the policy's error ``records`` say it failed to produce, with the
    error: a record names its observation by task and trajectory and counts the ``missing`` last
    replies."""
    by_obs = {(r.obs.get("task_id"), int(r.obs.get("trajectory", 0))): r for r in requests}
    lost: dict[Key, str] = {}
    for record in records:
        if not isinstance(record, dict) or record.get("turn", turn) != turn:
            continue
        request = by_obs.get((record.get("task_id"), int(record.get("trajectory", 0))))
        if request is not None:
            missing = min(int(record.get("missing", 1)), len(request.keys))
            for key in request.keys[len(request.keys) - missing:]:
                lost.setdefault(key, str(record.get("error") or "the policy reported a failure"))
    return lost


def _ask(policy, log_: SampleLog, requests: list[Request], turn: int, out: TurnReplies) -> None:
    """Ask ``policy`` for ``requests`` (all of one size) into ``out``, writing each obtained reply
    to ``log_`` as it arrives (through the policy's ``on_reply`` when it has one)."""
    by_id = {id(r.obs): r for r in requests}

    def on_reply(obs: dict, texts: list[str]) -> None:
        request = by_id.get(id(obs))
        if request is not None:
            for key, text in zip(request.keys, texts):
                log_.add(key, turn, request.prompt, text)

    seen = len(getattr(policy, "errors", None) or [])
    hooked = hasattr(policy, "on_reply")
    if hooked:
        policy.on_reply = on_reply
    try:
        sampled = policy.sample([r.obs for r in requests], len(requests[0].keys))
    finally:
        if hooked:
            policy.on_reply = None
    records = list(getattr(policy, "errors", None) or [])[seen:]
    lost = _lost_keys(requests, records, turn)
    out.records += records
    out.lost.update(lost)
    for request, texts in zip(requests, sampled):
        for key, text in zip(request.keys, texts):
            if key not in lost:
                out.replies[key] = text
                log_.add(key, turn, request.prompt, text)


def sample_turn(policy, log_: SampleLog, requests: list[Request], turn: int) -> TurnReplies:
    """One turn's replies for every key of ``requests``: those in ``log_`` reused, the rest asked
    of ``policy`` (one ``sample`` call per reply count)."""
    out = TurnReplies()
    pending: dict[int, list[Request]] = defaultdict(list)
    for request in requests:
        found, rest = missing_runs(request, log_, turn)
        out.replies.update(found)
        for r in rest:
            pending[len(r.keys)].append(r)
    out.reused = len(out.replies)
    for group in pending.values():
        _ask(policy, log_, group, turn, out)
    return out


def identical_samples(replies: dict[Key, str], turn: int, temperature) -> list[str]:
    """Warnings for every task whose obtained replies at ``turn`` (two or more) are all the same
    text although the policy samples at ``temperature`` > 0: a server ignoring the temperature or
    the seed, or a cache answering every request alike."""
    if not isinstance(temperature, (int, float)) or temperature <= 0:
        return []
    by_task: dict[str, list[str]] = defaultdict(list)
    for (task, _), text in replies.items():
        by_task[task].append(text)
    return [f"{task} turn {turn}: all {len(texts)} samples are identical at temperature {temperature:g} "
            "(does the server ignore the temperature or the seed?)"
            for task, texts in by_task.items() if len(texts) > 1 and len(set(texts)) == 1]


__all__ = ["SAMPLES_FILE", "Key", "Request", "SampleLog", "TurnReplies", "identical_samples", "sample_turn"]
