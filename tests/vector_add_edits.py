"""The env-facing cases several test modules share: the ``vector_add_fp32`` expert, a broken copy
(``a - b``) and the SEARCH/REPLACE edit that fixes it, a copy whose forward raises, and the fenced
reply the env parses."""

from __future__ import annotations

from hawkeye_env.tasks.registry import get_task, solution_source

TASK = "vector_add_fp32"
SOLUTION = solution_source(get_task(TASK))
STORE_LINE = "    tl.store(out_ptr + offs, a + b, mask=mask)"
BROKEN = SOLUTION.replace(STORE_LINE, STORE_LINE.replace("a + b", "a - b"))
FIX = f"<<<<<<< SEARCH\n{STORE_LINE.replace('a + b', 'a - b')}\n=======\n{STORE_LINE}\n>>>>>>> REPLACE\n"
assert BROKEN != SOLUTION, "the expert's store line moved: update STORE_LINE"


def fenced(source: str) -> str:
    """``source`` in one ```python fenced block."""
    return f"```python\n{source}```\n"
# A module that builds and whose forward raises: judged ``runtime_error``, and its profile cannot record a forward.
RAISING = SOLUTION.replace("        return out\n", "        raise RuntimeError('the forward fails on purpose')\n")
assert RAISING != SOLUTION, "the expert's return line moved: update RAISING"
