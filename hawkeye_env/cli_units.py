"""``hawkeye units``: browse the taxonomy and verify units.

    hawkeye units list [--json]
    hawkeye units show UNIT
    hawkeye units verify [UNIT ...] [--candidate FILE] [--device cpu|cuda] [--json]

``verify`` runs in a child process (``python -m hawkeye_env.units_verify``): on CPU it checks the solution,
naive and reference callables under the Triton interpreter (metrics need a GPU); on CUDA it measures
the unit's metric for the solution and the naive kernel and applies the pass rule. A ``--candidate``
file is statically checked like any candidate and only ever imported by that child process.
"""

from __future__ import annotations

import functools
import inspect
import json
from pathlib import Path

import torch
import typer
from rich.console import Console
from rich.table import Table

from units import get_unit, list_units, unit_file

units_app = typer.Typer(help="The Hawkeye unit taxonomy: strategies, solution kernels, metrics.",
                        no_args_is_help=True)
console = Console()


def _fail(message: str) -> None:
    Console(stderr=True).print(f"[red]error:[/red] {message}")
    raise typer.Exit(2)


def _row(unit) -> dict:
    return {
        "unit": unit.name, "architecture": unit.architecture, "language": unit.language, "strategy": unit.strategy,
        "precisions": list(unit.precisions), "tags": list(unit.tags),
        "metric": unit.metric.name if unit.metric else None,
        "metric_rule": (f"{'>=' if unit.metric.higher_is_better else '<='} {unit.metric.pass_fraction:.0%} "
                        f"of solution; solution beats naive by {unit.metric.min_margin}x") if unit.metric else None,
        "runnable_here": unit.runnable and (unit.architecture != "hopper" or _is_hopper()),
        "why": unit.why,
    }


def _is_hopper() -> bool:
    return torch.cuda.is_available() and torch.cuda.get_device_capability() >= (9, 0)


@units_app.command("list")
def units_list(as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """The taxonomy table: unit, architecture, strategy, precisions, metric, runnable here."""
    rows = [_row(u) for u in list_units()]
    if as_json:
        typer.echo(json.dumps(rows, sort_keys=True))
        return
    table = Table(title="hawkeye units")
    for col in ("unit", "arch", "strategy", "precisions", "metric", "runnable here"):
        table.add_column(col, no_wrap=col == "unit")
    for r in rows:
        table.add_row(r["unit"], r["architecture"], r["strategy"], ",".join(r["precisions"]),
                      r["metric"] or "-", "yes" if r["runnable_here"] else f"no ({r['why'] or 'needs Hopper'})")
    console.print(table)
    if not torch.cuda.is_available():
        console.print("No CUDA GPU here: Hopper units run under the Triton interpreter for correctness only; "
                      "Gluon units have no interpreter (their naive twin and reference run, their solution is "
                      "compiled for sm_90a by `python -m units.lib.gluon_compile`).")


@units_app.command("show")
def units_show(unit: str = typer.Argument(..., help="Unit name (see `hawkeye units list`).")) -> None:
    """The usage guide and the solution callable's signature, as an agent sees them."""
    try:
        u = get_unit(unit)
    except KeyError as exc:
        _fail(str(exc.args[0]))
    console.print(unit_file(u, "README.md") or f"{u.title}\n\n{u.summary}\n\n(not runnable here: {u.why})",
                  markup=False, highlight=False)
    if u.solution:
        module, _, name = u.solution.partition(":")
        source = unit_file(u, "kernel.py")
        tree_sig = _signature_from_source(source, name)
        console.print(f"\n[bold]from {module} import {name}[/bold]\n{tree_sig}")


def _signature_from_source(source: str, name: str) -> str:
    """``def name(...)`` and its docstring, read from source (no Triton import)."""
    import ast

    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            args = ast.unparse(node.args)
            ret = f" -> {ast.unparse(node.returns)}" if node.returns else ""
            return f"def {name}({args}){ret}\n" + inspect.cleandoc(ast.get_docstring(node) or "")
    return f"{name}: not found in kernel.py"


@units_app.command("verify")
def units_verify(
    names: list[str] | None = typer.Argument(None, help="Units to verify (default: every runnable one)."),
    candidate: Path | None = typer.Option(None, help="File defining a function named like the solution."),
    device: str = typer.Option("auto", help="cpu (interpreter, correctness), cuda (metrics), or auto."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Check units on CPU, or measure their metrics and pass rules on CUDA."""
    from hawkeye_env.judge.parent.evaluator import resolve_device
    from hawkeye_env.judge.parent.static.rules import check_source
    from hawkeye_env.units_verify import verify_in_subprocess

    try:
        device = resolve_device(device)
        units = [get_unit(n) for n in names] if names else list_units(include_on_paper=False)
    except (KeyError, ValueError) as exc:
        _fail(str(exc.args[0]))
    not_runnable = [u.name for u in units if not u.runnable]
    if not_runnable:
        _fail(f"described on paper only, not runnable here: {', '.join(not_runnable)}")
    if candidate is not None:
        try:
            findings = check_source(candidate.read_text(encoding="utf-8"))
        except (OSError, SyntaxError) as exc:
            _fail(f"cannot use candidate {candidate}: {exc}")
        if findings:
            _fail("candidate rejected: " + "; ".join(f"line {f.line}: {f.message}" for f in findings))
    from hawkeye_env.judge.parent.launch import isolation, spawn

    runner = None
    if candidate is not None:
        try:
            isolation.require()
        except isolation.SandboxUnavailable as exc:
            _fail(str(exc))
        runner = functools.partial(spawn.run_command, device=device)
    reports = verify_in_subprocess([u.name for u in units], "cpu" if device == "cpu" else "gpu",
                                   str(candidate.resolve()) if candidate else None, runner=runner)
    if as_json:
        typer.echo(json.dumps({"device": device, "reports": reports}, sort_keys=True))
        return
    for r in reports:
        if device == "cpu":
            roles = ", ".join([f"{role} {sum(c['ok'] for c in cases)}/{len(cases)}"
                               for role, cases in r["results"].items()]
                              + [f"{role} skipped ({why})" for role, why in r.get("skipped", {}).items()])
            console.print(f"{r['unit']:<22} {'ok' if r['ok'] else 'FAIL'}  {roles}")
        else:
            console.print(f"{r['unit']:<22} {r['metric']}: {r['values']}  margin {r['margin']} "
                          f"(need {r['min_margin']})  beats naive: {r['solution_beats_naive']}  "
                          f"candidate passes: {r['candidate_passes']}")
    if device == "cpu":
        console.print("Checked correctness under the Triton interpreter; unit metrics need a CUDA GPU.")
