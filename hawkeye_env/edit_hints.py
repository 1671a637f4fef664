"""The "closest match" hint of a failed SEARCH/REPLACE edit, with bounded work.

A reply's edit whose SEARCH text is not in the source gets a hint of where it was probably meant
to go (``edits._not_found``). The hint runs in the process that serves every session, so its work
is bounded whatever the reply and the source hold (``tests/test_edits_adversarial.py``).
"""

from __future__ import annotations

import difflib
from collections import Counter

# The "closest match" hint: at most this many (source line, SEARCH line) pairs of equal text vote
# for an alignment, rarest lines first; where none does, the first SEARCH line is compared by
# difflib with the HINT_RATIO_LINES source lines most like it (``quick_ratio`` over at most
# HINT_SCAN_LINES distinct lines), each cut to HINT_LINE_CHARS.
# Without bounds the old hint (difflib over every window) held the process 124 s for a 10 KB edit.
HINT_VOTE_BUDGET = 200_000
HINT_SCAN_LINES = 20_000
HINT_RATIO_LINES = 10
HINT_LINE_CHARS = 200

def _voted_start(lines: list[str], search: tuple[str, ...]) -> int | None:
    """The window start most SEARCH lines agree on: each SEARCH line j whose text (stripped)
    equals source line i votes for start i - j; rarest lines vote first, and voting stops before
    ``HINT_VOTE_BUDGET`` votes. None when no non-blank line of SEARCH occurs in the source."""
    wanted = {s.strip() for s in search if s.strip()}
    where: dict[str, list[int]] = {}
    for i, line in enumerate(lines):
        key = line.strip()
        if key in wanted:
            where.setdefault(key, []).append(i)
    pairs = sorted(((len(where[s.strip()]), j) for j, s in enumerate(search) if s.strip() in where))
    votes: Counter[int] = Counter()
    spent = 0
    for count, j in pairs:
        if spent + count > HINT_VOTE_BUDGET:
            break
        spent += count
        votes.update(i - j for i in where[search[j].strip()])
    if not votes:
        return None
    return max(votes, key=lambda start: (votes[start], -start))


def _similar_start(lines: list[str], search: tuple[str, ...]) -> int:
    """The window start that puts the source line most like SEARCH's first non-blank line under
    it: ``quick_ratio`` over the first ``HINT_SCAN_LINES`` distinct non-blank source lines, then
    ``ratio`` over the ``HINT_RATIO_LINES`` best, all cut to ``HINT_LINE_CHARS``."""
    j, first = next(((j, s) for j, s in enumerate(search) if s.strip()), (0, search[0]))
    distinct: dict[str, int] = {}
    for i, line in enumerate(lines):
        key = line.strip()[:HINT_LINE_CHARS]
        if key and key not in distinct:
            distinct[key] = i
            if len(distinct) >= HINT_SCAN_LINES:
                break
    matcher = difflib.SequenceMatcher(None, "", first.strip()[:HINT_LINE_CHARS])
    scored = []
    for key, i in distinct.items():
        matcher.set_seq1(key)
        scored.append((matcher.quick_ratio(), -i, key))
    ratios = []
    for _, neg, key in sorted(scored, reverse=True)[:HINT_RATIO_LINES]:
        matcher.set_seq1(key)
        ratios.append((matcher.ratio(), neg))
    return -max(ratios)[1] - j if ratios else 0


def closest_start(lines: list[str], search: tuple[str, ...]) -> int:
    """0-based start of the source window most like ``search``, in bounded work (see
    ``HINT_VOTE_BUDGET``), clamped to the windows that fit in the source."""
    start = _voted_start(lines, search)
    if start is None:
        start = _similar_start(lines, search)
    return min(max(0, start), max(0, len(lines) - len(search)))


__all__ = ["closest_start"]
