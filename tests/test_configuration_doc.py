"""``docs/configuration.md`` lists every ``HAWKEYE_*`` name the shipped code reads (tests may use
names of their own), and lists no name the code no longer has."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
NAME = re.compile(r"HAWKEYE_[A-Z][A-Z_]*[A-Z]")


def _names(text: str) -> set[str]:
    return set(NAME.findall(text))


def shipped_names() -> set[str]:
    files = subprocess.run(["git", "ls-files", "*.py"], cwd=REPO, capture_output=True, text=True,
                           check=True).stdout.split()
    return set().union(*(_names((REPO / f).read_text()) for f in files
                         if not f.startswith("tests/") and (REPO / f).is_file()))


def test_every_switch_the_code_reads_is_in_the_table_and_no_other():
    table = _names((REPO / "docs" / "configuration.md").read_text())
    shipped = shipped_names()
    assert "HAWKEYE_REPLAY" in shipped and "HAWKEYE_SANDBOX" in shipped  # the scan finds names at all
    assert shipped - table == set(), f"undocumented switches: {sorted(shipped - table)}"
    assert table - shipped == set(), f"documented switches the code no longer has: {sorted(table - shipped)}"


def test_the_check_sees_a_new_switch():
    assert _names('os.environ.get("HAWKEYE_NEW_THING")') == {"HAWKEYE_NEW_THING"}
