"""Every repository path a document names exists (issue 22, item 1).

The documents are README.md, BENCHMARKS.md and its template (evals/bench/benchmarks_template.md),
training/README.md and every units/*/README.md. A path is
a word inside backticks (inline code or a fenced block) that looks like a relative path
of this repository: it contains a "/" or ends in .py/.md/.json/.jsonl, and it either
starts with one of the top-level folders or is a bare top-level file such as
BENCHMARKS.md. Relative Markdown links ``[text](path)`` are paths too. Globs and
placeholders (``*``, ``<...>``, ``{...}``, ``...``), URLs and absolute paths (a user's
home, /tmp) are not. In a README inside a package folder (units/<unit>/, training/) a bare
``name.py`` is a path too, a file of that folder. A path resolves against the repository root or, for a unit or
training README, against the document's own folder.
"""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

TOP_DIRS = frozenset({"hawkeye_env", "units", "reward", "policies", "training", "evals", "tests", ".ci"})
PATH_SUFFIXES = (".py", ".md", ".json", ".jsonl")
# a bare top-level file: BENCHMARKS.md, README.md, ..., pyproject.toml
TOP_FILE_RE = re.compile(r"^(?:[A-Z][A-Za-z0-9_-]*\.md|pyproject\.toml)$")

FENCE_RE = re.compile(r"^[ \t]*(```|~~~)[^\n]*\n(.*?)^[ \t]*\1[ \t]*$", re.S | re.M)
INLINE_CODE_RE = re.compile(r"(`+)(.+?)\1", re.S)
LINK_RE = re.compile(r"!?\[[^\]\n]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
PLACEHOLDER_RE = re.compile(r"[*?<>{}\[\]$]|\.\.\.")
URL_RE = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:(//)?|^www\.")


def documents() -> list[Path]:
    docs = [REPO / "README.md", REPO / "BENCHMARKS.md", REPO / "evals" / "bench" / "benchmarks_template.md",
            REPO / "training" / "README.md"]
    docs += sorted((REPO / "units").glob("*/README.md"))
    return docs


def _clean(word: str) -> str:
    word = word.strip("\"'`(),;")
    word = word.rstrip(".:")
    if "=" in word:  # --out=evals/x.json, KEY=path
        word = word.rsplit("=", 1)[1]
    word = word.split("::", 1)[0]  # tests/x.py::test_name
    word = re.sub(r":\d+(?::\d+)?$", "", word)  # file.py:12
    return word


def _is_repo_path(word: str, bare_py: bool = False) -> bool:
    if not word or word.startswith("-") or PLACEHOLDER_RE.search(word) or URL_RE.search(word):
        return False
    if word.startswith(("/", "~")):  # absolute: a user's home, /tmp, /dev/shm
        return False
    if "/" not in word and not word.endswith(PATH_SUFFIXES):
        return False
    if "/" in word:
        first = word.split("/", 1)[0]
        return first in TOP_DIRS
    return bool(TOP_FILE_RE.match(word)) or (bare_py and word.endswith(".py"))


def named_paths(text: str, bare_py: bool = False) -> list[str]:
    """The repository paths ``text`` names, in order, without repeats. With ``bare_py``
    (a README inside a package folder) a bare ``name.py`` counts too: a file of that folder."""
    spans = [m.group(2) for m in FENCE_RE.finditer(text)]
    prose = FENCE_RE.sub("", text)
    spans += [m.group(2) for m in INLINE_CODE_RE.finditer(prose)]
    found: list[str] = []
    for span in spans:
        for word in span.split():
            word = _clean(word)
            if _is_repo_path(word, bare_py):
                found.append(word)
    for target in LINK_RE.findall(INLINE_CODE_RE.sub("", prose)):
        target = target.split("#", 1)[0]
        if not target or URL_RE.search(target) or target.startswith(("/", "~")):
            continue
        if PLACEHOLDER_RE.search(target):
            continue
        found.append(target)
    return list(dict.fromkeys(found))


def missing_paths(text: str, doc: Path, repo: Path = REPO) -> list[str]:
    """The paths ``text`` (the content of ``doc``) names that exist neither under the
    repository root nor under the document's folder."""
    return [
        p
        for p in named_paths(text, bare_py=doc.parent != repo)
        if not (repo / p).exists() and not (doc.parent / p).exists()
    ]


def test_the_documents_are_found():
    docs = documents()
    assert all(d.is_file() for d in docs)
    assert len(docs) >= 5 and any(d.parent.parent.name == "units" for d in docs)
    assert all(REPO / "units" / u / "README.md" in docs for u in ("mxfp4_gemm", "warp_specialization"))


def test_every_path_a_document_names_exists():
    missing = [
        f"{doc.relative_to(REPO)}: {p}"
        for doc in documents()
        for p in missing_paths(doc.read_text(encoding="utf-8"), doc)
    ]
    assert not missing, "paths named in documents that do not exist:\n" + "\n".join(missing)


def test_a_made_up_path_is_reported():
    text = "\n".join(
        [
            "The roofline is checked in `tests/judge/test_no_such_file.py::test_x`,",
            "see [the notes](reward/NO_SUCH_NOTES.md#top) and `NO_SUCH_TOP_FILE.md`.",
            "Existing: `README.md`, `tests/`, `units/harness.py`, [b](BENCHMARKS.md).",
            "Ignored: `units/<name>/README.md`, `tests/*.py`, `evals/results/{a,b}.json`,",
            "`evals/...`, `https://example.com/a/b.py`, [u](https://example.com/x.md),",
            "`/tmp/x/y.py`, `~/KernelBench/level1`, `fla/ops/chunk.py`, `1/sqrt(D)`.",
            "```bash",
            "python -m pytest -q tests/gpu/test_missing_gpu.py --out=evals/results/x-<gpu>.json",
            "```",
        ]
    )
    doc = REPO / "units" / "row_reduction" / "README.md"
    assert sorted(missing_paths(text, doc)) == sorted(
        [
            "tests/judge/test_no_such_file.py",
            "NO_SUCH_TOP_FILE.md",
            "tests/gpu/test_missing_gpu.py",
            "reward/NO_SUCH_NOTES.md",
        ]
    )


def test_a_unit_readme_path_resolves_against_the_unit_folder(tmp_path):
    unit = tmp_path / "units" / "demo"
    unit.mkdir(parents=True)
    (unit / "kernel.py").write_text("")
    doc = unit / "README.md"
    text = (
        "`kernel.py` is here; `units/demo/kernel.py` too; `units/demo/naive.py` and "
        "`attention.py` are not; `-part2.jsonl` and `out.json` are not paths."
    )
    assert missing_paths(text, doc, repo=tmp_path) == ["units/demo/naive.py", "attention.py"]
    # in the top-level README a bare module name is not a path (it names a file elsewhere)
    assert missing_paths("`attention.py`", tmp_path / "README.md", repo=tmp_path) == []
