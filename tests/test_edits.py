"""Tests for hawkeye_env.edits: fenced extraction, SEARCH/REPLACE edits and their errors."""

from __future__ import annotations

import re

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from hawkeye_env.edits import EditError, apply_edits, extract_source, parse_edits, to_candidate

SRC = "import torch\n\n\nclass ModelNew:\n    def forward(self, x):\n        return x + 1\n"


def block(search: str, replace: str) -> str:
    return f"<<<<<<< SEARCH\n{search}=======\n{replace}>>>>>>> REPLACE\n"


@pytest.mark.parametrize("tag", ["python", "py", "python3", "Python", ""])
def test_extract_language_tags(tag: str) -> None:
    reply = f"Here you go:\n```{tag}\nimport torch\nx = 1\n```\nDone."
    assert extract_source(reply) == "import torch\nx = 1\n"


def test_extract_prefers_model_new_over_later_blocks() -> None:
    reply = (
        "```python\nimport torch\nclass ModelNew:\n    pass\n```\n"
        "and a usage example:\n```python\nm = ModelNew()\n```\n"
    )
    assert extract_source(reply) == "import torch\nclass ModelNew:\n    pass\n"


def test_extract_last_python_block_over_last_block() -> None:
    reply = "```python\na = 1\n```\n```python\nb = 2\n```\n```bash\npip install x\n```\n"
    assert extract_source(reply) == "b = 2\n"


def test_extract_last_block_without_tags_and_skips_empty() -> None:
    reply = "```\na = 1\n```\n```text\nb = 2\n```\n```python\n\n```\n"
    assert extract_source(reply) == "b = 2\n"


def test_extract_tilde_fence_and_longer_fences() -> None:
    assert extract_source("~~~python\nx = 1\n~~~\n") == "x = 1\n"
    reply = "````python\ns = '''\n```\n'''\n````\n"
    assert extract_source(reply) == "s = '''\n```\n'''\n"


def test_extract_indented_fence_and_crlf() -> None:
    reply = "Answer:\r\n    ```python\r\n    def f():\r\n        return 1\r\n    ```\r\n"
    assert extract_source(reply) == "def f():\n    return 1\n"


def test_extract_unclosed_fence_runs_to_end() -> None:
    assert extract_source("```python\nimport os\nx = 1") == "import os\nx = 1\n"


def test_extract_plain_code_returned_as_is() -> None:
    assert extract_source(SRC) == SRC


def test_extract_prose_is_error() -> None:
    with pytest.raises(EditError, match=r"not Python: line 1: .*Here is my kernel"):
        extract_source("Here is my kernel, it is fast.")


def test_extract_parseable_prose_is_error() -> None:
    with pytest.raises(EditError, match="does not look like code"):
        extract_source("hello")


@pytest.mark.parametrize("reply", ["", "  \n\t\n"])
def test_extract_empty_is_error(reply: str) -> None:
    with pytest.raises(EditError, match="empty reply"):
        extract_source(reply)


def test_extract_only_empty_fences_is_error() -> None:
    with pytest.raises(EditError, match="every fenced code block in the reply is empty"):
        extract_source("```python\n\n```")


def test_apply_one_block() -> None:
    out = apply_edits(SRC, block("        return x + 1\n", "        return x * 2\n"))
    assert out == SRC.replace("x + 1", "x * 2")


def test_apply_several_blocks_in_order_inside_fence() -> None:
    reply = (
        "I will change two things.\n```python\n"
        + block("import torch\n", "import torch\nimport triton\n")
        + "```\nand\n```python\n"
        + block("import triton\n", "import triton\nimport triton.language as tl\n")
        + block("        return x + 1\n", "")
        + "```\n"
    )
    assert apply_edits(SRC, reply) == (
        "import torch\nimport triton\nimport triton.language as tl\n\n\n"
        "class ModelNew:\n    def forward(self, x):\n"
    )


def test_apply_crlf_and_indented_markers() -> None:
    reply = "  <<<<<<< SEARCH\r\n  x = 1\r\n  =======\r\n  x = 2\r\n  >>>>>>> REPLACE\r\n"
    assert apply_edits("a = 0\r\nx = 1\r\n", reply) == "a = 0\nx = 2\n"


def test_apply_empty_search_appends_to_empty_source() -> None:
    assert apply_edits("", block("", "x = 1\n")) == "x = 1\n"


def test_apply_empty_search_on_nonempty_source_is_error() -> None:
    with pytest.raises(EditError, match="block 1: empty SEARCH text"):
        apply_edits(SRC, block("", "x = 1\n"))


def test_not_found_names_block_and_first_line() -> None:
    reply = block("import torch\n", "import torch\n") + block("    def backward(self):\n", "")
    with pytest.raises(EditError) as exc:
        apply_edits(SRC, reply)
    msg = str(exc.value)
    assert msg.startswith("block 2: SEARCH text not found exactly")
    assert "'    def backward(self):'" in msg
    assert "closest match starts at line 5" in msg


def test_not_found_reports_first_difference() -> None:
    reply = block("class ModelNew:\n    def forward(self, y):\n", "")
    with pytest.raises(EditError, match=r"line 5: source has '    def forward\(self, x\):'"):
        apply_edits(SRC, reply)


def test_indentation_only_mismatch_hint() -> None:
    src = "\n".join(f"v{i} = {i}" for i in range(39)) + "\nif True:\n    y = 1\n    z = 2\n"
    reply = block("v0 = 0\n", "v0 = 0\n") + block("y = 1\nz = 2\n", "")
    with pytest.raises(EditError) as exc:
        apply_edits(src, reply)
    assert str(exc.value).startswith("block 2: SEARCH text not found exactly")
    assert "it matches if indentation is ignored at line 41" in str(exc.value)


def test_trailing_whitespace_only_mismatch_hint() -> None:
    with pytest.raises(EditError, match="matches if trailing whitespace is ignored at line 1;"):
        apply_edits(SRC, block("import torch   \n", ""))


def test_ambiguous_lists_count_and_lines() -> None:
    src = "x = 1\ny = 2\nx = 1\nz = 3\nx = 1\n"
    with pytest.raises(
        EditError, match=r"block 1: SEARCH text occurs 3 times \(at lines 1, 3, 5\)"
    ):
        apply_edits(src, block("x = 1\n", "x = 9\n"))


def test_search_matches_whole_lines_only() -> None:
    with pytest.raises(EditError, match="not found"):
        apply_edits("xx = 10\n", block("x = 1\n", "x = 2\n"))


@pytest.mark.parametrize(
    ("reply", "pattern"),
    [
        ("<<<<<<< SEARCH\na\n>>>>>>> REPLACE\n", r"line 3: '>>>>>>> REPLACE' before '======='"),
        ("<<<<<<< SEARCH\na\n=======\nb\n", r"block 1 \(opened at line 1\): '>>>>>>> REPLACE' is"),
        ("x\n<<<<<<< SEARCH\na\n", r"block 1 \(opened at line 2\): '=======' is missing"),
        ("<<<<<<< SEARCH\na\n<<<<<<< SEARCH\n", r"line 3: nested '<<<<<<< SEARCH'.*'======='"),
        ("<<<<<<< SEARCH\n=======\n<<<<<<< SEARCH\n", r"line 3: nested .*'>>>>>>> REPLACE'"),
        ("<<<<<<< SEARCH\n=======\n=======\n", r"line 3: second '=======' in block 1"),
        (block("a\n", "b\n") + "=======\n", r"line 6: '=======' outside a block"),
        ("<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n>>>>>>> REPLACE\n", r"line 6: '>>>>>"),
    ],
)
def test_malformed_blocks_report_line(reply: str, pattern: str) -> None:
    with pytest.raises(EditError, match=pattern):
        parse_edits(reply)
    with pytest.raises(EditError, match=pattern):
        to_candidate("a\n", reply)


def test_to_candidate_dispatch() -> None:
    assert to_candidate(None, "```python\nimport os\n```") == "import os\n"
    assert to_candidate(SRC, block("import torch\n", "import os\n")).startswith("import os\n")
    with pytest.raises(EditError, match="no current source to edit"):
        to_candidate(None, block("a\n", "b\n"))
    with pytest.raises(EditError, match="no current source to edit"):
        to_candidate("", block("", "b\n"))


_MARKER = re.compile(r"^\s*(<{5,9} ?SEARCH|={5,9}|>{5,9} ?REPLACE)\s*$")
_line = st.text(st.characters(exclude_characters="\r\n"), max_size=12).filter(
    lambda s: not _MARKER.match(s)
)


@given(
    lines=st.lists(_line, min_size=1, max_size=30),
    new=st.lists(_line, max_size=6),
    data=st.data(),
)
def test_replace_unique_span_property(
    lines: list[str], new: list[str], data: st.DataObject
) -> None:
    i = data.draw(st.integers(0, len(lines) - 1), label="start")
    j = data.draw(st.integers(i + 1, len(lines)), label="stop")
    span = lines[i:j]
    assume(sum(lines[k : k + len(span)] == span for k in range(len(lines))) == 1)
    reply = block("".join(s + "\n" for s in span), "".join(s + "\n" for s in new))
    out = lines[:i] + new + lines[j:]
    expected = "\n".join(out) + ("\n" if out else "")
    assert apply_edits("\n".join(lines) + "\n", reply) == expected
    assert to_candidate("\n".join(lines) + "\n", "```\n" + reply + "```\n") == expected


def test_nul_bytes_are_an_edit_error_not_a_crash():
    with pytest.raises(EditError, match="not Python"):
        extract_source("x = 1\x00\n")
