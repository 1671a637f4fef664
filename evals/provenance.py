"""Where a result came from: the repository's commit, recorded with every eval and benchmark file.

Example::

    from evals.provenance import git_commit
    git_commit()  # 'e68a50c...' or 'e68a50c...+dirty'; '' outside a git checkout
"""

from __future__ import annotations

import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def git_commit() -> str:
    """The repository's HEAD commit, with ``+dirty`` when the work tree has changes (untracked files
    included); "" without git (an installed package, no ``git`` on the PATH)."""
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True,
                              check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain"], cwd=REPO, capture_output=True, text=True,
                               check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""
    return head + ("+dirty" if dirty else "")


__all__ = ["git_commit"]
