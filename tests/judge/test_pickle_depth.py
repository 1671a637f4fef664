"""Worker messages are refused before decoding when they nest too deep to build safely
(``pickle_depth.py``): honest replies pass, a deep one is a ``ValueError`` the watcher turns into
the candidate's ``bad_reply``."""

from __future__ import annotations

import io

import pytest
import torch

from hawkeye_env.judge.pickle_depth import MAX_MESSAGE_DEPTH, nesting_depth
from hawkeye_env.judge.reply_decode import decode_message


def _saved(obj) -> bytes:
    buf = io.BytesIO()
    torch.save(obj, buf)
    return buf.getvalue()


def test_an_honest_reply_nests_shallowly_and_decodes():
    reply = {"kind": "final", "stage": "ok", "trials": [{"outputs": [torch.randn(3, 4)], "fresh": {"outputs": []}}],
             "plans": [{"plan": {"steps": [{"args": [{"T": 0, "size": [3, 4]}]}]}, "kernels": []}]}
    payload = _saved(reply)
    assert 3 < nesting_depth(payload) <= 16
    assert decode_message(payload)["stage"] == "ok"


def test_a_deeply_nested_message_is_refused_before_it_is_built():
    deep: list = []
    for _ in range(MAX_MESSAGE_DEPTH + 10):
        deep = [deep]
    payload = _saved({"kind": "progress", "violations": deep})
    assert nesting_depth(payload) > MAX_MESSAGE_DEPTH
    with pytest.raises(ValueError, match="nests"):
        decode_message(payload)


def test_shared_references_count_once_not_per_use():
    shared = [[1, 2]]
    payload = _saved({"kind": "final", "a": [shared] * 1000})
    assert nesting_depth(payload) <= 5
