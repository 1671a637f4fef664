"""``hawkeye units list / show / verify`` on CPU."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from hawkeye_env.cli import app
from units import list_units, unit_file

runner = CliRunner()


def test_list_json_covers_the_taxonomy():
    result = runner.invoke(app, ["units", "list", "--json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert [r["unit"] for r in rows] == [u.name for u in list_units()]
    on_paper = [r for r in rows if r["architecture"] in ("blackwell", "mi350")]
    assert on_paper and not any(r["runnable_here"] for r in on_paper)
    assert all(r["metric"] for r in rows if r["architecture"] in ("hopper", "ampere+"))


def test_show_prints_guide_and_signature():
    result = runner.invoke(app, ["units", "show", "online_softmax"])
    assert result.exit_code == 0, result.output
    assert "## When it pays" in result.stdout
    assert "from units.online_softmax.kernel import" in result.stdout and "def " in result.stdout


def test_verify_cpu_checks_correctness_and_says_metrics_need_gpu():
    # epilogue_fusion: the unit whose CPU check is the quickest (0.6 s; coalesced_access 8.7 s)
    result = runner.invoke(app, ["units", "verify", "epilogue_fusion", "--device", "cpu", "--json"])
    assert result.exit_code == 0, result.output
    (report,) = json.loads(result.stdout)["reports"]
    assert report["ok"] and set(report["results"]) == {"solution", "naive", "reference"}
    text = runner.invoke(app, ["units", "verify", "epilogue_fusion", "--device", "cpu"]).stdout
    assert "metrics need a CUDA GPU" in text


def test_verify_candidate_runs_in_child_process(tmp_path):
    from units import get_unit

    good = tmp_path / "good.py"
    good.write_text(unit_file(get_unit("row_reduction"), "kernel.py"))
    result = runner.invoke(app, ["units", "verify", "row_reduction", "--device", "cpu",
                                 "--candidate", str(good), "--json"])
    assert result.exit_code == 0, result.output
    (report,) = json.loads(result.stdout)["reports"]
    assert all(c["ok"] for c in report["results"]["candidate"])


def test_verify_rejects_forbidden_candidate_and_on_paper_units(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import os\ndef scale(x, alpha):\n    return x\n")
    result = runner.invoke(app, ["units", "verify", "coalesced_access", "--device", "cpu", "--candidate", str(bad)])
    assert result.exit_code == 2 and "import os" in result.output
    result = runner.invoke(app, ["units", "verify", "mi350_mfma", "--device", "cpu"])
    assert result.exit_code == 2 and "on paper" in result.output


def test_a_unit_candidate_runs_in_the_os_sandbox(tmp_path):
    """The CLI runs ``--candidate`` files through ``spawn.run_command``: a candidate past the
    static rules still cannot write outside its scratch folder."""
    import functools

    import pytest

    from hawkeye_env.judge.parent.launch import isolation, spawn
    from hawkeye_env.units_verify import verify_in_subprocess
    from units import get_unit

    if isolation.mode() == isolation.OFF or isolation.probe():
        pytest.skip(f"the OS sandbox is off or cannot run here: {isolation.probe() or 'HAWKEYE_SANDBOX=off'}")
    planted = tmp_path / "planted.txt"
    evil = tmp_path / "evil.py"
    kernel = unit_file(get_unit("coalesced_access"), "kernel.py").replace("from __future__ import annotations", "")
    evil.write_text(f"open({str(planted)!r}, 'w').write('x')\n" + kernel)
    with pytest.raises(RuntimeError, match="Read-only file system"):
        verify_in_subprocess(["coalesced_access"], "cpu", str(evil),
                             runner=functools.partial(spawn.run_command, device="cpu"))
    assert not planted.exists()
