"""Every repository path a document names exists, and nothing cites a document the repository
does not have.

The documents are README.md, BENCHMARKS.md and its template (bench/benchmarks_template.md),
the development log (dev/LOG.md), training/README.md, every units/*/README.md and every docs/*.md.
A path is a word inside backticks (inline code or a fenced block) that looks like a relative path
of this repository: it contains a "/" or ends in .py/.md/.json/.jsonl, and it either
starts with one of the top-level folders or is a bare top-level file such as
BENCHMARKS.md. Relative Markdown links ``[text](path)`` are paths too. Globs and
placeholders (``*``, ``<...>``, ``{...}``, ``...``), URLs and absolute paths (a user's
home, /tmp) are not. In a README inside a package folder (units/<unit>/, training/), not in docs/, a bare
``name.py`` is a path too, a file of that folder. A path resolves against the repository root or, for a unit or
training README, against the document's own folder.

The docstrings and comments of every ``.py`` file of the repository are read the same way (a bare
``name.py`` is not a path there), resolved against the repository root or the file's folder.
Documents, docstrings and comments may not cite REWARD_HACKS.md, STYLE.md, ARCHITECTURE.md or
MISSION.md, nor an issue of this project ("issue 12", "issue #12"): they cite
docs/threat-model.md's class numbers or say what they need. An upstream issue is fine when its
project is named before it ("triton issue 11584", "its issue #142", "KernelBench #165"). This
file, which spells the patterns it looks for, is not read for them.
"""

from __future__ import annotations

import ast
import io
import os
import re
import tokenize
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

TOP_DIRS = frozenset({"hawkeye_env", "units", "reward", "policies", "training", "evals", "bench", "tests", "docs",
                      "dev", ".ci", "deploy"})
PATH_SUFFIXES = (".py", ".md", ".json", ".jsonl")
# a bare top-level file: BENCHMARKS.md, README.md, ..., pyproject.toml
TOP_FILE_RE = re.compile(r"^(?:[A-Z][A-Za-z0-9_-]*\.md|pyproject\.toml)$")

FENCE_RE = re.compile(r"^[ \t]*(```|~~~)[^\n]*\n(.*?)^[ \t]*\1[ \t]*$", re.S | re.M)
INLINE_CODE_RE = re.compile(r"(`+)(.+?)\1", re.S)
LINK_RE = re.compile(r"!?\[[^\]\n]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
PLACEHOLDER_RE = re.compile(r"[*?<>{}\[\]$]|\.\.\.")
URL_RE = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:(//)?|^www\.")


def documents() -> list[Path]:
    docs = [REPO / "README.md", REPO / "BENCHMARKS.md", REPO / "bench" / "benchmarks_template.md",
            REPO / "training" / "README.md", REPO / "dev" / "LOG.md"]
    docs += sorted((REPO / "units").glob("*/README.md"))
    docs += sorted((REPO / "docs").rglob("*.md"))
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
        for p in named_paths(text, bare_py=doc.parent not in (repo, repo / "docs"))
        if not (repo / p).exists() and not (doc.parent / p).exists()
    ]


SKIP_DIRS = frozenset({".git", ".venv", "__pycache__", "node_modules", ".pytest_cache", ".ruff_cache"})
# A citation of a document the repository does not have, by name.
ABSENT_DOC_RE = re.compile(r"\b(?:REWARD_HACKS(?:\.md)?|STYLE\.md|ARCHITECTURE\.md|MISSION\.md)")
# "issue 12", "issues 7", "issue #12", "issue-22"; whose issue it is reads from the word before it.
ISSUE_RE = re.compile(r"\bissues?[ \t\n-]*#?[ \t]*\d+", re.I)
# An upstream issue: a project, "its"/"their"/"upstream", or owner/repo named just before, perhaps
# with a version ("triton 3.4 issue 8260").
UPSTREAM_LEAD_RE = re.compile(
    r"(?:\b(?:its|their|upstream|triton|torch|pytorch|kernelbench|cutlass|cuda|nvidia|fla|ray|trl|"
    r"openenv|gymnasium|numpy|python|cpython|bubblewrap|bwrap)|[\w.-]+/[\w.-]+)"
    r"(?:\s+v?\d[\w.]*)?\s*$",
    re.I,
)


def python_files(repo: Path = REPO) -> list[Path]:
    """Every ``.py`` file under ``repo``, outside ``SKIP_DIRS`` and egg-info folders."""
    found: list[Path] = []
    for root, dirs, files in os.walk(repo):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.endswith(".egg-info"))
        found += [Path(root) / f for f in sorted(files) if f.endswith(".py")]
    return found


def python_texts(source: str) -> list[tuple[int, str]]:
    """``(line, text)`` of each docstring (module, class, function) and each comment of
    ``source``; other strings are code, not prose. A source that does not parse or tokenize
    (a test's deliberately broken candidate) gives what could be read."""
    texts: list[tuple[int, str]] = []
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        tree = None
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node, clean=False)
            if doc:
                texts.append((node.body[0].lineno, doc))
    if not any("`" in s or citations(s) for line in source.splitlines() if "#" in line
               for s in [line[line.index("#"):]]):
        return sorted(texts)  # no comment could name a path or cite anything: skip the tokenizer
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == tokenize.COMMENT:
                texts.append((tok.start[0], tok.string))
    except (tokenize.TokenError, SyntaxError):
        pass
    return sorted(texts)


def citations(text: str) -> list[str]:
    """What ``text`` cites that the repository does not have: an absent document by name, or an
    issue of this project (an ``issue N`` without an upstream project named just before it)."""
    found = [m.group(0) for m in ABSENT_DOC_RE.finditer(text)]
    found += [" ".join(m.group(0).split()) for m in ISSUE_RE.finditer(text)
              if not UPSTREAM_LEAD_RE.search(text[: m.start()])]
    return found


def python_problems(path: Path, repo: Path = REPO) -> list[str]:
    """``line: problem`` for each missing path and each citation in ``path``'s docstrings and
    comments."""
    problems: list[str] = []
    for line, text in python_texts(path.read_text(encoding="utf-8", errors="replace")):
        problems += [f"{line}: missing path {p}" for p in named_paths(text)
                     if not (repo / p).exists() and not (path.parent / p).exists()]
        problems += [f"{line}: cites {c}" for c in citations(text)]
    return problems


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
            "Existing: `README.md`, `tests/`, `units/lib/harness.py`, [b](BENCHMARKS.md).",
            "Ignored: `units/<name>/README.md`, `tests/*.py`, `bench/results/{a,b}.json`,",
            "`evals/...`, `https://example.com/a/b.py`, [u](https://example.com/x.md),",
            "`/tmp/x/y.py`, `~/KernelBench/level1`, `fla/ops/chunk.py`, `1/sqrt(D)`.",
            "```bash",
            "python -m pytest -q tests/gpu/test_missing_gpu.py --out=bench/results/x-<gpu>.json",
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


def test_no_document_cites_an_absent_document_or_an_issue():
    cited = [f"{doc.relative_to(REPO)}: {c}" for doc in documents() for c in citations(doc.read_text(encoding="utf-8"))]
    assert not cited, "documents citing what the repository does not have:\n" + "\n".join(cited)


def test_python_docstrings_and_comments_name_existing_paths_and_cite_nothing_absent():
    files = [f for f in python_files() if f != Path(__file__).resolve()]  # this file spells the patterns
    assert REPO / "hawkeye_env" / "judge" / "shared" / "verdict.py" in files
    assert not any(".venv" in f.relative_to(REPO).parts for f in files)
    problems = [f"{f.relative_to(REPO)}:{p}" for f in files for p in python_problems(f)]
    assert not problems, "docstrings and comments naming what does not exist:\n" + "\n".join(problems)


def test_citations_of_absent_documents_and_project_issues_are_found():
    text = (
        "Caught by the guards (REWARD_HACKS #8, see REWARD_HACKS.md); sizes per STYLE.md item 5,\n"
        "layers per ARCHITECTURE.md and MISSION.md. Target (issue 18): 1.04; Issue 21 measured it;\n"
        "fixed in issue #12 and issues 7; move with the issue-22 layout.\n"
        "Fine: triton issue 11584, triton 3.4 issue 8260, KernelBench #165, its issue #142,\n"
        "their issue 3, openai/triton issue 9, threat model #8, docs/threat-model.md #20, (#18)."
    )
    assert citations(text) == ["REWARD_HACKS", "REWARD_HACKS.md", "STYLE.md", "ARCHITECTURE.md", "MISSION.md",
                               "issue 18", "Issue 21", "issue #12", "issues 7", "issue-22"]


def test_docstrings_and_comments_are_read_and_other_strings_are_not(tmp_path):
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "real.py").write_text("")
    module = tmp_path / "mod.py"
    module.write_text(
        '"""Module docstring: see `tests/real.py` and `tests/gone.py` (issue 4)."""\n\n'
        "MESSAGE = 'a plain string: `tests/also_gone.py`, issue 5, REWARD_HACKS.md'\n\n\n"
        "class C:\n"
        '    """Per STYLE.md."""\n\n'
        "    def f(self):  # the comment names `docs/none.md`\n"
        '        """Triton issue 11584 is upstream."""\n'
        "        return MESSAGE\n"
    )
    assert python_problems(module, repo=tmp_path) == [
        "1: missing path tests/gone.py", "1: cites issue 4", "7: cites STYLE.md", "9: missing path docs/none.md"]
    assert python_texts("def broken(:\n    # `tests/x.py` survives\n") == [(2, "# `tests/x.py` survives")]
    assert python_texts("X = 1  # a comment with nothing to check\n") == []  # not even tokenized
