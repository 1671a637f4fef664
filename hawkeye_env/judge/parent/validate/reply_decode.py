"""Decoding a worker's messages and reply file in the trusted parent, safely.

Everything a worker sends was possibly written by the candidate. A message is decoded with
``torch.load(weights_only=True)`` (tensors and plain containers only) after its pickle's shape is
read without building anything (``pickle_depth.py``): a message nested deeper than
``MAX_MESSAGE_DEPTH`` could overflow the parent's C stack, keys chosen to collide or values that
expand past their size would take the parent hours to build or hash, and each is refused as forged. The final
reply, written to a file in the worker's scratch folder, is read only if it is a regular file (no
link, FIFO or device a candidate could put there) within the memory limit. What the decoded reply
says is then checked against the parent's plan (``reply_check.py``).
"""

from __future__ import annotations

import io
import os
import stat

import torch

from hawkeye_env.judge.parent.validate.pickle_depth import MessageShapeError, nesting_depth


class ForgedMessage(ValueError):
    """A message no honest worker sends (shaped as no reply of the judge's own code is)."""


def _refuse_deep(payload) -> None:
    """``ForgedMessage`` for a message past one of ``pickle_depth``'s bounds (building it could
    overflow the parent's C stack or take it hours); ``ValueError`` for bytes that are no
    ``torch.save`` archive. ``payload`` is ``bytes`` or a binary file."""
    try:
        nesting_depth(payload)
    except MessageShapeError as exc:
        raise ForgedMessage(str(exc)) from None
    except ValueError as exc:
        raise ValueError(f"undecodable worker reply: {exc}") from exc


def decode_message(payload: bytes) -> dict:
    """A worker message: ``torch.load(weights_only=True)`` of a dict within ``pickle_depth``'s
    bounds, or ``ValueError`` (``ForgedMessage`` past a bound)."""
    _refuse_deep(payload)
    try:
        message = torch.load(io.BytesIO(payload), weights_only=True)
    except Exception as exc:
        raise ValueError(f"undecodable worker reply: {exc}") from exc
    if not isinstance(message, dict):
        raise ValueError(f"worker reply is {type(message).__name__}, not a dict")
    return message


def read_reply_file(path: str, limit_bytes: int, mapped: bool = False) -> tuple[dict, int]:
    """Decode the reply file the worker announced: a regular file (no link, FIFO or device, which
    a candidate could have put there), at most ``limit_bytes`` (0: no limit), within
    ``pickle_depth``'s bounds, loaded with ``torch.load(weights_only=True)``, holding a ``final``
    message. Returns ``(message, size in bytes)``; ``ValueError`` (``ForgedMessage`` past a bound)
    otherwise.

    ``mapped``: the tensors' storages are mapped from the file (``torch.load(mmap=True)``, through
    the descriptor already opened) instead of copied: a 1 GiB reply decoded in 0.001 s instead of
    0.5 s on the CPU machine, the copy left to the upload that reads it. Only for a file whose
    writer ran no candidate host code and is dead, in a scratch folder no other process can reach
    (the trusted replay's, sandboxed): a mapped file truncated under the reader would fault it."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise ValueError(f"reply file unreadable: {exc.strerror}") from exc
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ValueError("reply file is not a regular file")
        if limit_bytes and st.st_size > limit_bytes:
            raise ValueError(f"reply file of {st.st_size / 2**20:.0f} MiB exceeds its limit of "
                             f"{limit_bytes / 2**20:.0f} MiB")
        _refuse_deep(f)
        f.seek(0)
        try:
            message = torch.load(f"/proc/self/fd/{fd}" if mapped else f, weights_only=True, mmap=mapped)
        except Exception as exc:
            raise ValueError(f"undecodable worker reply: {exc}") from exc
    if not isinstance(message, dict) or message.get("kind") != "final":
        raise ValueError("reply file does not hold a final reply")
    return message, st.st_size


__all__ = ["ForgedMessage", "decode_message", "read_reply_file"]
