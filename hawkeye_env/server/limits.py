"""The served env's limits on one client, in one place (no imports: the CLI reads them for its defaults).

``MAX_BODY_BYTES`` and ``DEFAULT_SESSION_TIMEOUT_S`` are ``guard.ClientGuard``'s, ``DEFAULT_MAX_PER_CLIENT``
the ``JudgeQueue``'s; a reply's own bound is ``hawkeye_env.edits.MAX_REPLY_CHARS``.
"""

from __future__ import annotations

#: Largest HTTP body or WebSocket message: a step whose reply has ``edits.MAX_REPLY_CHARS`` (256 Ki)
#: characters, each escaped by JSON as a 12-byte surrogate pair (``\ud83d\ude00``), is 3 MiB, plus
#: the envelope. A larger body is refused unread when its Content-Length says so.
MAX_BODY_BYTES = 4 * 2**20
#: Seconds a WebSocket session may send nothing, with no reply of its own pending, before it is
#: closed: ten minutes outlasts a model writing a long reply (32k tokens at 100 tokens/s is 5.5
#: min) and still returns a deserted session's slot to ``max_sessions``.
DEFAULT_SESSION_TIMEOUT_S = 600.0
#: Candidates one named client may have waiting or being judged. A WebSocket session sends one step
#: at a time, so 2 leaves it room for one step whose client gave up (still being judged) and the
#: next; an HTTP peer running stateless steps in parallel gets 429s beyond it (raise it for a
#: trusted trainer: ``hawkeye serve --max-per-client``).
DEFAULT_MAX_PER_CLIENT = 2

__all__ = ["DEFAULT_MAX_PER_CLIENT", "DEFAULT_SESSION_TIMEOUT_S", "MAX_BODY_BYTES"]
