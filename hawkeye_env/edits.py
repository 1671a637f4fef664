"""Turn an agent's action text into candidate Python source.

An action is either a whole file (usually in a fenced code block) or one or more
aider-style SEARCH/REPLACE blocks that edit the current candidate::

    <<<<<<< SEARCH
    old lines
    =======
    new lines
    >>>>>>> REPLACE

``to_candidate`` is the single entry point the environment uses. Every failure
raises ``EditError`` whose message is meant to be shown back to the agent.
"""

from __future__ import annotations

import ast
import difflib
import re
import textwrap
from dataclasses import dataclass

from hawkeye_env.judge.static_checks import parse_source

_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>.*?)[ \t]*$")
_SEARCH = re.compile(r"^([ \t]*)<{5,9} ?SEARCH[ \t]*$")
_DIVIDER = re.compile(r"^[ \t]*={5,9}[ \t]*$")
_REPLACE = re.compile(r"^[ \t]*>{5,9} ?REPLACE[ \t]*$")
_PY_TAGS = {"python", "py", "python3", "py3"}
_MODEL_NEW = re.compile(r"^[ \t]*class[ \t]+ModelNew\b", re.MULTILINE)


class EditError(ValueError):
    """The action text could not be turned into source; the message says why and where."""


@dataclass(frozen=True)
class Edit:
    """One SEARCH/REPLACE block (lines without newlines); ``line``: 1-based SEARCH marker line."""

    search: tuple[str, ...]
    replace: tuple[str, ...]
    line: int


def _lines(text: str) -> list[str]:
    """Split ``text`` into lines after normalising CRLF and lone CR to LF."""
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def _show(line: str, limit: int = 80) -> str:
    return repr(line if len(line) <= limit else line[: limit - 3] + "...")


def _fenced_blocks(reply: str) -> list[tuple[str, str]]:
    """Return ``(language tag, dedented body)`` for each fenced block, in order.

    Fences are ``` or ~~~ runs of length >= 3, possibly indented; a block closes at a
    line holding only the same character repeated at least as often. An unclosed block
    runs to the end of the text."""
    blocks: list[tuple[str, str]] = []
    lines = _lines(reply)
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if m is None or (m["fence"][0] == "`" and "`" in m["info"]):
            i += 1
            continue
        fence, indent = m["fence"], m["indent"]
        tag = m["info"].split()[0].lower() if m["info"] else ""
        body: list[str] = []
        i += 1
        while i < len(lines):
            stripped = lines[i].strip()
            if stripped and set(stripped) == {fence[0]} and len(stripped) >= len(fence):
                break
            body.append(lines[i].removeprefix(indent))
            i += 1
        i += 1
        blocks.append((tag, textwrap.dedent("\n".join(body)).strip("\n")))
    return blocks


def extract_source(reply: str) -> str:
    """Return the Python source carried by ``reply``.

    With fenced blocks: the last non-empty block defining ``class ModelNew``, else the
    last python-tagged (python/py/python3/py3) one, else the last one, dedented and
    ending in one newline. Without fences: ``reply`` unchanged if it parses as Python and
    defines a function/class or imports something. Raises ``EditError`` otherwise."""
    if not reply.strip():
        raise EditError("empty reply: expected Python source in a ```python fenced block")
    fenced = _fenced_blocks(reply)
    blocks = [(tag, body) for tag, body in fenced if body.strip()]
    for pick in (
        [b for _, b in blocks if _MODEL_NEW.search(b)],
        [b for t, b in blocks if t in _PY_TAGS],
        [b for _, b in blocks],
    ):
        if pick:
            return pick[-1] + "\n"
    if fenced:
        raise EditError("every fenced code block in the reply is empty")
    try:
        tree = parse_source(reply)
    except SyntaxError as exc:
        where = f"line {exc.lineno}: {exc.msg}" if exc.lineno else exc.msg
        text = f" ({_show(exc.text.strip())})" if exc.text and exc.text.strip() else ""
        raise EditError(f"no fenced code block and the text is not Python: {where}{text}") from None
    except ValueError as exc:
        raise EditError(f"no fenced code block and the text is not Python: {exc}") from None
    code_nodes = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)
    if not any(isinstance(node, code_nodes) for node in ast.walk(tree)):
        raise EditError(
            "no fenced code block and the text does not look like code "
            "(no def, class or import); send the source in a ```python fenced block"
        )
    return reply


def has_edits(reply: str) -> bool:
    """True if ``reply`` contains a ``<<<<<<< SEARCH`` marker line."""
    return any(_SEARCH.match(line) for line in _lines(reply))


def parse_edits(reply: str) -> list[Edit]:
    """Parse every SEARCH/REPLACE block of ``reply`` in order.

    Lines outside blocks (prose, fences) are ignored. Block lines keep their text, minus
    the indentation of the block's SEARCH marker where present. Raises ``EditError`` with
    the 1-based reply line number for stray, nested or missing markers."""
    edits: list[Edit] = []
    state, start, indent = "out", 0, ""
    search: list[str] = []
    replace: list[str] = []
    lines = _lines(reply)
    for no, line in enumerate(lines, 1):
        opened = f"block {len(edits) + 1} (opened at line {start})"
        if m := _SEARCH.match(line):
            if state != "out":
                missing = "'======='" if state == "search" else "'>>>>>>> REPLACE'"
                raise EditError(
                    f"line {no}: nested '<<<<<<< SEARCH' inside {opened}; {missing} is missing"
                )
            state, start, indent, search, replace = "search", no, m[1], [], []
        elif _DIVIDER.match(line) and state != "replace":
            if state == "out":
                raise EditError(f"line {no}: '=======' outside a block")
            state = "replace"
        elif _DIVIDER.match(line):
            raise EditError(f"line {no}: second '=======' in {opened}")
        elif _REPLACE.match(line):
            if state != "replace":
                where = f"before '=======' in {opened}" if state == "search" else "outside a block"
                raise EditError(f"line {no}: '>>>>>>> REPLACE' {where}")
            edits.append(Edit(tuple(search), tuple(replace), start))
            state = "out"
        elif state != "out":
            (search if state == "search" else replace).append(line.removeprefix(indent))
    if state != "out":
        missing = "'======='" if state == "search" else "'>>>>>>> REPLACE'"
        raise EditError(
            f"block {len(edits) + 1} (opened at line {start}): {missing} is missing "
            f"(reached the end of the reply at line {len(lines)})"
        )
    return edits


def _find(haystack: list[str], needle: list[str]) -> list[int]:
    """0-based starts where ``needle`` occurs as a contiguous run of ``haystack`` lines."""
    n = len(needle)
    return [i for i in range(len(haystack) - n + 1) if haystack[i : i + n] == needle]


def _not_found(k: int, edit: Edit, lines: list[str]) -> EditError:
    """Build the error for a SEARCH text with no exact match, with the best hint."""
    first = next((s for s in edit.search if s.strip()), edit.search[0])
    head = f"block {k}: SEARCH text not found exactly (first SEARCH line {_show(first)})"
    for label, norm in (("trailing whitespace is", str.rstrip), ("indentation is", str.strip)):
        hits = _find([norm(x) for x in lines], [norm(x) for x in edit.search])
        if hits:
            at = ", ".join(str(h + 1) for h in hits)
            return EditError(
                f"{head}; it matches if {label} ignored at line{'s' * (len(hits) > 1)}"
                f" {at}; copy the lines exactly"
            )
    n = len(edit.search)
    needle = "\n".join(edit.search)
    best, best_ratio = 0, -1.0
    for i in range(max(1, len(lines) - n + 1)):
        ratio = difflib.SequenceMatcher(None, "\n".join(lines[i : i + n]), needle).ratio()
        if ratio > best_ratio:
            best, best_ratio = i, ratio
    window = lines[best : best + n]
    diff = next((j for j, s in enumerate(edit.search) if j >= len(window) or window[j] != s), 0)
    got = _show(window[diff]) if diff < len(window) else "end of file"
    return EditError(
        f"{head}; closest match starts at line {best + 1}; first difference at "
        f"line {best + diff + 1}: source has {got}, SEARCH has "
        f"{_show(edit.search[diff])}"
    )


def apply_edits(current: str, reply: str) -> str:
    """Apply the SEARCH/REPLACE blocks of ``reply`` to ``current``, in order.

    Each SEARCH must match exactly one contiguous run of whole lines of the source as
    left by the previous blocks (CRLF normalised to LF); an empty SEARCH appends only to
    an empty source. Returns the edited source, LF line endings, keeping ``current``'s
    final newline (or adding one if ``current`` was empty). Raises ``EditError`` naming
    the block and the 1-based source line(s) involved."""
    edits = parse_edits(reply)
    if not edits:
        raise EditError("no SEARCH/REPLACE block in the reply")
    text = current.replace("\r\n", "\n").replace("\r", "\n")
    final_newline = text.endswith("\n") or not text
    lines = text.removesuffix("\n").split("\n") if text else []
    for k, edit in enumerate(edits, 1):
        if not edit.search:
            if lines:
                raise EditError(
                    f"block {k}: empty SEARCH text; it only appends to an empty "
                    "source, so quote the lines to replace"
                )
            lines = list(edit.replace)
            continue
        hits = _find(lines, list(edit.search))
        if not hits:
            raise _not_found(k, edit, lines)
        if len(hits) > 1:
            at = ", ".join(str(h + 1) for h in hits)
            raise EditError(
                f"block {k}: SEARCH text occurs {len(hits)} times (at lines {at}); "
                "include more surrounding lines to make it unique"
            )
        lines[hits[0] : hits[0] + len(edit.search)] = edit.replace
    return "\n".join(lines) + ("\n" if final_newline and lines else "")


def to_candidate(current: str | None, reply: str) -> str:
    """Return the candidate source for ``reply``: SEARCH/REPLACE blocks applied to
    ``current`` if the reply has any (``current`` must be non-empty), else
    ``extract_source(reply)``. Raises ``EditError``."""
    if has_edits(reply):
        if not current:
            raise EditError(
                "the reply has SEARCH/REPLACE blocks but there is no current source "
                "to edit; send the whole file in a ```python fenced block"
            )
        return apply_edits(current, reply)
    return extract_source(reply)
