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

Replies are read by line scanners with no backtracking regular expression, and their size is
bounded, so no reply text can hold the process (and, through the GIL, every thread of a server):
each function here runs in time linear in the reply and the source, and the "closest match" hint
does a bounded amount of work (``tests/test_edits_adversarial.py`` measures the worst cases).
"""

from __future__ import annotations

import ast
import textwrap
from dataclasses import dataclass

from hawkeye_env.edit_hints import closest_start
from hawkeye_env.judge.parent.static.rules import parse_source

# The longest reply read, in characters. Kernel sources and their edits are 2-30 KB; an LLM turn of
# 32k tokens is about 128 KB. Past this a reply is refused with a message rather than parsed.
MAX_REPLY_CHARS = 256 * 1024
# The most SEARCH/REPLACE blocks one reply may apply. Each block costs one pass over the source
# (a C-level substring search); replies carry a handful of blocks.
MAX_EDIT_BLOCKS = 100
# Line numbers listed in a message about several matches.
MAX_LISTED_LINES = 20
_PY_TAGS = {"python", "py", "python3", "py3"}
_BLANK = " \t"
_MARKER_CHARS = ("<", "=", ">")  # a line not starting with one of these (after spaces/tabs) is no marker


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


def _check_size(reply: str) -> None:
    """Refuse a reply over ``MAX_REPLY_CHARS`` before any parsing."""
    if len(reply) > MAX_REPLY_CHARS:
        raise EditError(
            f"the reply is {len(reply)} characters, over the {MAX_REPLY_CHARS} character limit; "
            "send only the source in one ```python fenced block, or SEARCH/REPLACE blocks"
        )


def _run_of(text: str, char: str) -> int:
    """Length of the run of ``char`` that ``text`` begins with."""
    return len(text) - len(text.lstrip(char))


def _fence_open(line: str) -> tuple[str, str, str] | None:
    """``(indent, fence, info)`` when ``line`` opens a fenced block, else None.

    An opening line is optional spaces/tabs, a run of at least three ` or ~, then an info string
    (spaces/tabs around it dropped); a backtick fence's info holds no backtick."""
    body = line.lstrip(_BLANK)
    if not body or body[0] not in "`~":
        return None
    n = _run_of(body, body[0])
    if n < 3:
        return None
    info = body[n:].strip(_BLANK)
    if body[0] == "`" and "`" in info:
        return None
    return line[: len(line) - len(body)], body[:n], info


def _closes(line: str, fence: str) -> bool:
    """True when ``line`` holds only ``fence``'s character, at least as many times (and whitespace)."""
    stripped = line.strip()
    return bool(stripped) and len(stripped) >= len(fence) and _run_of(stripped, fence[0]) == len(stripped)


def _fenced_blocks(reply: str) -> list[tuple[str, str]]:
    """Return ``(language tag, dedented body)`` for each fenced block, in order.

    Fences are ``` or ~~~ runs of length >= 3, possibly indented; a block closes at a
    line holding only the same character repeated at least as often. An unclosed block
    runs to the end of the text."""
    blocks: list[tuple[str, str]] = []
    lines = _lines(reply)
    i = 0
    while i < len(lines):
        opened = _fence_open(lines[i])
        i += 1
        if opened is None:
            continue
        indent, fence, info = opened
        tag = info.split()[0].lower() if info else ""
        body: list[str] = []
        while i < len(lines) and not _closes(lines[i], fence):
            body.append(lines[i].removeprefix(indent))
            i += 1
        i += 1
        blocks.append((tag, textwrap.dedent("\n".join(body)).strip("\n")))
    return blocks


def _defines_model_new(source: str) -> bool:
    """True when a line of ``source`` starts (after spaces/tabs) with ``class ModelNew``."""
    for line in source.split("\n"):
        rest = line.lstrip(_BLANK)
        if not rest.startswith("class"):
            continue
        name = rest[5:].lstrip(_BLANK)
        if len(name) < len(rest) - 5 and name.startswith("ModelNew"):
            after = name[8:9]
            if not (after.isalnum() or after == "_"):
                return True
    return False


_CODE_NODES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)
_BODY_FIELDS = ("body", "orelse", "finalbody", "handlers", "cases")


def _has_code(tree: ast.Module) -> bool:
    """True when ``tree`` has a def, class or import statement at any depth. Only statement
    bodies are visited (these nodes are never inside an expression), not every node."""
    pending = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, _CODE_NODES):
            return True
        for name in _BODY_FIELDS:
            pending.extend(getattr(node, name, ()))
    return False


def extract_source(reply: str) -> str:
    """Return the Python source carried by ``reply``.

    With fenced blocks: the last non-empty block defining ``class ModelNew``, else the
    last python-tagged (python/py/python3/py3) one, else the last one, dedented and
    ending in one newline. Without fences: ``reply`` unchanged if it parses as Python and
    defines a function/class or imports something. Raises ``EditError`` otherwise, and for
    a reply over ``MAX_REPLY_CHARS``."""
    if not reply.strip():
        raise EditError("empty reply: expected Python source in a ```python fenced block")
    _check_size(reply)
    fenced = _fenced_blocks(reply)
    blocks = [(tag, body) for tag, body in fenced if body.strip()]
    for pick in (
        [b for _, b in blocks if _defines_model_new(b)],
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
    except (ValueError, MemoryError, RecursionError) as exc:
        raise EditError(f"no fenced code block and the text is not Python: {exc}") from None
    if not _has_code(tree):
        raise EditError(
            "no fenced code block and the text does not look like code "
            "(no def, class or import); send the source in a ```python fenced block"
        )
    return reply


def _marker(line: str, char: str, word: str) -> str | None:
    """The indentation of ``line`` when it is a conflict marker: 5-9 ``char`` then, if ``word``,
    an optional space and ``word`` (spaces/tabs around it allowed); else None."""
    body = line.lstrip(_BLANK)
    rest = body.rstrip(_BLANK)
    n = _run_of(rest, char)
    if not 5 <= n <= 9 or rest[n:] not in ((word, " " + word) if word else ("",)):
        return None
    return line[: len(line) - len(body)]


def _is_search(line: str) -> str | None:
    return _marker(line, "<", "SEARCH")


def _is_divider(line: str) -> bool:
    return _marker(line, "=", "") is not None


def _is_replace(line: str) -> bool:
    return _marker(line, ">", "REPLACE") is not None


def has_edits(reply: str) -> bool:
    """True if ``reply`` contains a ``<<<<<<< SEARCH`` marker line."""
    return "SEARCH" in reply and any(_is_search(line) is not None for line in _lines(reply) if "SEARCH" in line)


def parse_edits(reply: str) -> list[Edit]:
    """Parse every SEARCH/REPLACE block of ``reply`` in order.

    Lines outside blocks (prose, fences) are ignored. Block lines keep their text, minus
    the indentation of the block's SEARCH marker where present. Raises ``EditError`` with
    the 1-based reply line number for stray, nested or missing markers, and for a reply over
    ``MAX_REPLY_CHARS``."""
    _check_size(reply)
    edits: list[Edit] = []
    state, start, indent = "out", 0, ""
    search: list[str] = []
    replace: list[str] = []
    lines = _lines(reply)
    for no, line in enumerate(lines, 1):
        if line.lstrip(_BLANK)[:1] not in _MARKER_CHARS:
            if state != "out":
                (search if state == "search" else replace).append(line.removeprefix(indent))
            continue
        opened = f"block {len(edits) + 1} (opened at line {start})"
        if (marker := _is_search(line)) is not None:
            if state != "out":
                missing = "'======='" if state == "search" else "'>>>>>>> REPLACE'"
                raise EditError(
                    f"line {no}: nested '<<<<<<< SEARCH' inside {opened}; {missing} is missing"
                )
            state, start, indent, search, replace = "search", no, marker, [], []
        elif _is_divider(line) and state != "replace":
            if state == "out":
                raise EditError(f"line {no}: '=======' outside a block")
            state = "replace"
        elif _is_divider(line):
            raise EditError(f"line {no}: second '=======' in {opened}")
        elif _is_replace(line):
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
    """0-based starts where ``needle`` occurs as a contiguous run of ``haystack`` lines.

    Both are joined into text with a newline around every line and searched with ``str.find``
    (C-level, linear in practice), one pass per occurrence; overlapping runs all count."""
    if not needle:
        return list(range(len(haystack) + 1))
    if not haystack:
        return []
    text, pattern = "\n" + "\n".join(haystack) + "\n", "\n" + "\n".join(needle) + "\n"
    hits: list[int] = []
    line, seen = 0, 0
    at = text.find(pattern)
    while at >= 0:
        line += text.count("\n", seen, at)
        seen = at
        hits.append(line)
        at = text.find(pattern, at + 1)
    return hits


def _listed(hits: list[int]) -> str:
    """1-based line numbers of ``hits``, at most ``MAX_LISTED_LINES`` of them."""
    shown = ", ".join(str(h + 1) for h in hits[:MAX_LISTED_LINES])
    return shown + (f", ... ({len(hits) - MAX_LISTED_LINES} more)" if len(hits) > MAX_LISTED_LINES else "")


def _not_found(k: int, edit: Edit, lines: list[str]) -> EditError:
    """Build the error for a SEARCH text with no exact match, with the best hint."""
    first = next((s for s in edit.search if s.strip()), edit.search[0])
    head = f"block {k}: SEARCH text not found exactly (first SEARCH line {_show(first)})"
    for label, norm in (("trailing whitespace is", str.rstrip), ("indentation is", str.strip)):
        hits = _find([norm(x) for x in lines], [norm(x) for x in edit.search])
        if hits:
            return EditError(
                f"{head}; it matches if {label} ignored at line{'s' * (len(hits) > 1)}"
                f" {_listed(hits)}; copy the lines exactly"
            )
    best = closest_start(lines, edit.search)
    window = lines[best : best + len(edit.search)]
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
    the block and the 1-based source line(s) involved, and for a reply over
    ``MAX_REPLY_CHARS`` or with more than ``MAX_EDIT_BLOCKS`` blocks."""
    edits = parse_edits(reply)
    if not edits:
        raise EditError("no SEARCH/REPLACE block in the reply")
    if len(edits) > MAX_EDIT_BLOCKS:
        raise EditError(
            f"the reply has {len(edits)} SEARCH/REPLACE blocks, over the limit of {MAX_EDIT_BLOCKS}; "
            "send fewer, larger blocks or the whole file in a ```python fenced block"
        )
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
            raise EditError(
                f"block {k}: SEARCH text occurs {len(hits)} times (at lines {_listed(hits)}); "
                "include more surrounding lines to make it unique"
            )
        lines[hits[0] : hits[0] + len(edit.search)] = edit.replace
    return "\n".join(lines) + ("\n" if final_newline and lines else "")


def to_candidate(current: str | None, reply: str) -> str:
    """Return the candidate source for ``reply``: SEARCH/REPLACE blocks applied to
    ``current`` if the reply has any (``current`` must be non-empty), else
    ``extract_source(reply)``. Raises ``EditError``, first of all for a reply over
    ``MAX_REPLY_CHARS``."""
    _check_size(reply)
    if has_edits(reply):
        if not current:
            raise EditError(
                "the reply has SEARCH/REPLACE blocks but there is no current source "
                "to edit; send the whole file in a ```python fenced block"
            )
        return apply_edits(current, reply)
    return extract_source(reply)
