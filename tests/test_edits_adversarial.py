"""No reply text can stall ``hawkeye_env.edits``: adversarial replies and failed edits against a
large source are each handled within ``BOUND_S``.

The parser once held the GIL for 26 s on a fence line of 110k spaces (a backtracking regex) and
for 124 s on a 10 KB failed edit (difflib over every window of the source). Run as a script, this
module times every case and prints the figures as JSON (``bench/results/edits-worst-case/edits-worst-case-*.json``):
``python tests/test_edits_adversarial.py [module.path.of.edits]``.
"""

from __future__ import annotations

import ast
import importlib
import json
import platform
import sys
import time
from collections.abc import Callable

import pytest

from hawkeye_env import edits
from hawkeye_env.edits import MAX_EDIT_BLOCKS, MAX_REPLY_CHARS, EditError, to_candidate

# Generous for a 2-core CPU machine: every case takes under 0.2 s there (see the result JSON).
BOUND_S = 1.0
# Cases whose reply is valid unfenced Python: ``extract_source`` parses it (CPython's parser, linear,
# 0.7-0.9 s for 256 KiB on an idle 2-core machine, where handling the reply takes 1.0-1.4x one parse),
# so their bound adds PARSE_FACTOR x the slower of two parses timed around it: a loaded host slows
# both, and anything superlinear in the reply's size is many times over.
PARSE_FACTOR = 4.0
PARSED = {"unfenced_python_fill"}
FILL = MAX_REPLY_CHARS - 64  # the largest filler that keeps a reply under the size limit


def _source(kb: int) -> str:
    """Python-like text of about ``kb`` KB with distinct lines."""
    lines, size, i = [], 0, 0
    while size < kb * 1024:
        line = f"    acc{i % 97} = tl.load(ptr_{i % 13} + offs * {i}, mask=mask & (offs < n_{i % 5}))"
        lines.append(line)
        size += len(line) + 1
        i += 1
    return "\n".join(lines) + "\n"


def _block(search: str, replace: str = "") -> str:
    return f"<<<<<<< SEARCH\n{search}=======\n{replace}>>>>>>> REPLACE\n"


def _near_miss(source: str, kb: int) -> str:
    """A ``kb`` KB run of ``source``'s lines with its last line changed: no exact match."""
    lines = source.splitlines(keepends=True)
    take, size = [], 0
    for line in lines[len(lines) // 3:]:
        if size >= kb * 1024:
            break
        take.append(line)
        size += len(line)
    take[-1] = take[-1].replace("mask", "maks")
    return "".join(take)


SRC_100K = _source(100)
REPEATED_100K = "x = 1\n" * (100 * 1024 // 6)


def _cases() -> dict[str, tuple[str | None, str]]:
    """name -> (current source, reply)."""
    return {
        "fence_line_of_fill_spaces": (None, "```python" + " " * FILL + "x\nx = 1\n"),
        "fence_line_of_1m_spaces": (None, "```python" + " " * 1_000_000 + "x\nx = 1\n"),
        "tilde_fence_line_of_fill_tabs": (None, "~~~py" + "\t" * FILL + "x\nx = 1\n"),
        "fence_of_100k_backticks": (None, "`" * 100_000 + "\nclass ModelNew:\n    pass\n" + "`" * 100_000),
        "backticks_100k_then_info": (None, "`" * 100_000 + "x\nx = 1\n" + "`" * 100_000 + "\n"),
        "nested_fences_3_to_700": (None, "\n".join("`" * k + "python" for k in range(3, 700))),
        "fence_per_line": (None, "```py\n" * (FILL // 6)),
        "reply_of_1mib": (None, "```python\n" + "x = 1\n" * ((1 << 20) // 6) + "```\n"),
        "unfenced_python_fill": (None, "x = 1\n" * (FILL // 6)),
        "marker_line_of_fill_spaces": ("x = 1\n", "<<<<<<< SEARCH" + " " * FILL + "x\n"),
        "class_line_of_fill_spaces": (None, "```\nclass" + " " * FILL + "X\n```\n"),
        "failed_edit_10kb_vs_100kb": (SRC_100K, _block(_near_miss(SRC_100K, 10))),
        "failed_edit_50kb_vs_100kb": (SRC_100K, _block(_near_miss(SRC_100K, 50))),
        "failed_edit_100kb_vs_100kb": (SRC_100K, _block(_near_miss(SRC_100K, 100))),
        "failed_edit_unrelated_10kb": (SRC_100K, _block("".join(f"z{i} = {i}\n" for i in range(1000)))),
        "failed_edit_repeated_lines": (REPEATED_100K, _block("x = 1\n" * 1700 + "y = 2\n")),
        "ambiguous_edit_16k_matches": (REPEATED_100K, _block("x = 1\n")),
        "blank_source_blank_search": ("\n" * 100_000, _block("\n" * 50_000 + "z\n")),
        "max_blocks_on_100kb": (SRC_100K, "".join(
            _block(line + "\n", line + "  # edited\n") for line in SRC_100K.splitlines()[:MAX_EDIT_BLOCKS])),
        "too_many_blocks": (SRC_100K, _block("a\n", "b\n") * (MAX_EDIT_BLOCKS + 1)),
    }


def handle(to: Callable[[str | None, str], str], current: str | None, reply: str) -> str:
    """The outcome of ``to(current, reply)``: "ok" or the start of its ``EditError`` (any
    ``ValueError``, so an older module's own ``EditError`` counts too)."""
    try:
        to(current, reply)
    except ValueError as exc:
        return f"error: {str(exc)[:100]}"
    return "ok"


def _parse_seconds(text: str) -> float:
    start = time.perf_counter()
    ast.parse(text)
    return time.perf_counter() - start


def timed(to: Callable[[str | None, str], str], current: str | None, reply: str) -> tuple[float, str]:
    start = time.perf_counter()
    outcome = handle(to, current, reply)
    return time.perf_counter() - start, outcome


@pytest.mark.parametrize("name", list(_cases()))
def test_adversarial_reply_is_handled_quickly(name: str) -> None:
    current, reply = _cases()[name]
    before = _parse_seconds(reply) if name in PARSED else 0.0
    elapsed, outcome = timed(to_candidate, current, reply)
    after = _parse_seconds(reply) if name in PARSED else 0.0
    bound = BOUND_S + PARSE_FACTOR * max(before, after)
    assert elapsed < bound, f"{name}: {elapsed:.2f} s, bound {bound:.2f} s ({outcome})"


def test_oversized_reply_is_refused_with_the_limit() -> None:
    with pytest.raises(EditError, match=f"over the {MAX_REPLY_CHARS} character limit"):
        to_candidate(None, "x = 1\n" * (MAX_REPLY_CHARS // 6 + 1))


def test_too_many_blocks_is_refused() -> None:
    with pytest.raises(EditError, match=f"over the limit of {MAX_EDIT_BLOCKS}"):
        to_candidate(SRC_100K, _block("a\n", "b\n") * (MAX_EDIT_BLOCKS + 1))


def test_failed_edit_on_a_large_source_still_points_at_the_difference() -> None:
    search = _near_miss(SRC_100K, 10)
    start = SRC_100K[: SRC_100K.index(search.splitlines()[0])].count("\n") + 1
    last = start + search.count("\n") - 1
    with pytest.raises(EditError, match=f"closest match starts at line {start}; first difference at line {last}:"):
        to_candidate(SRC_100K, _block(search))


def test_many_matches_are_listed_bounded() -> None:
    with pytest.raises(EditError, match=r"occurs 17066 times \(at lines 1, 2, .*, 20, \.\.\. \(17046 more\)\)"):
        to_candidate(REPEATED_100K, _block("x = 1\n"))


def test_fence_with_long_blank_info_still_opens_a_block() -> None:
    assert to_candidate(None, "```python" + " " * 100_000 + "\nx = 1\n```\n") == "x = 1\n"


def main(module: str = "hawkeye_env.edits") -> dict:
    """Time every case with ``module``'s ``to_candidate``."""
    to = importlib.import_module(module).to_candidate
    figures = {}
    for name, (current, reply) in _cases().items():
        elapsed, outcome = timed(to, current, reply)
        figures[name] = {"seconds": round(elapsed, 4), "reply_chars": len(reply),
                         "source_chars": len(current or ""), "outcome": outcome}
        print(f"{name}: {elapsed:.4f} s", file=sys.stderr)
    return {"module": module, "python": platform.python_version(), "cpu": platform.processor() or platform.machine(),
            "bound_s": BOUND_S, "max_reply_chars": edits.MAX_REPLY_CHARS, "cases": figures}


if __name__ == "__main__":
    print(json.dumps(main(*sys.argv[1:2]), indent=1))
