"""The ``hawkeye`` command line: judge candidates and browse tasks.

    hawkeye check gemm_bf16                      # judge the task's expert solution (the default)
    hawkeye check gemm_bf16 cand.py --json       # judge a candidate file, print the verdict JSON
    hawkeye check kb_level1_1_relu cand.py --protocol kernelbench   # also KernelBench's own verdict
    hawkeye tasks list [--json]
    hawkeye tasks show gemm_bf16 [--json]
    hawkeye tasks import-kernelbench KernelBench/level1 [--out DIR] [--json]
    hawkeye kernelbench eval --level 1 --solutions DIR [--baseline JSON]   # KernelBench's fast_p
    hawkeye baselines [--tasks a,b] [--device cuda] [--json] [--refresh]   # eager, compile, vendor times
    hawkeye eval --policy search                 # best-of-N eval of the knob-search baseline, with report
    hawkeye eval --policy openai --base-url http://localhost:8000/v1 --model NAME --n 16 --turns 2
    hawkeye serve --port 8000 --device cuda      # the env over OpenEnv (HTTP + WebSocket), one shared judge

``hawkeye check`` exits 0 whenever a verdict was reached, whatever it says, and 2 on usage errors
(unknown task, unreadable file), so scripts can tell "judged" from "not judged". ``hawkeye eval``
exits 0 when the evaluation finished, whatever the candidates scored, 1 when the policy failed
(every failed request is in ``results.json``'s ``policy_errors``), and 2 on usage errors.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from evals.kernelbench_eval import kernelbench_app
from hawkeye_env.cli_baselines import baselines_command
from hawkeye_env.cli_tasks import SPLIT_HELP, TASKS_HELP, list_tasks_command, selected_ids, tasks_generate
from hawkeye_env.cli_throughput import throughput_command
from hawkeye_env.cli_units import units_app
from hawkeye_env.server.limits import DEFAULT_MAX_PER_CLIENT, DEFAULT_SESSION_TIMEOUT_S
from hawkeye_env.tasks.registry import get_task, solution_source
from reward import REWARD_VERSION, REWARDS
from training.cli import train_app

app = typer.Typer(help="hawkeye-env: a trustworthy judge and RL environment for GPU kernels.",
                  no_args_is_help=True, add_completion=False)
tasks_app = typer.Typer(help="Browse the task suite.", no_args_is_help=True)
tasks_app.command("generate")(tasks_generate)
app.add_typer(tasks_app, name="tasks")
app.add_typer(units_app, name="units")
app.add_typer(train_app, name="train")
app.add_typer(kernelbench_app, name="kernelbench")
app.command("baselines")(baselines_command)
app.command("throughput")(throughput_command)
console = Console()
# `hawkeye eval`'s samples per task. On the CPU interpreter a verdict checks correctness only (reward
# 0.2 for every correct kernel) and costs about 7 CPU seconds (3.4 of them the sandboxed worker's
# start-up): the default run over all 28 tasks at 2 samples judged 56 candidates in 270 s on a
# 2-core machine (2026-12-03), so more samples add minutes and little signal there.
GPU_SAMPLES, CPU_SAMPLES = 4, 2
PROTOCOL_HELP = ("hawkeye, or kernelbench: also judge by KernelBench's protocol (its get_inputs, default init, "
                 "allclose 1e-2, mean time), reported in the verdict's protocols, never in the reward.")


def _fail(message: str) -> None:
    from rich.markup import escape

    Console(stderr=True).print(f"[red]error:[/red] {escape(message)}")
    raise typer.Exit(2)


def _read_candidate(task_id: str, candidate: str | None, reply: bool) -> str:
    if candidate is None:
        return solution_source(get_task(task_id))
    try:
        text = sys.stdin.read() if candidate == "-" else Path(candidate).read_text(encoding="utf-8")
    except OSError as exc:
        _fail(f"cannot read candidate {candidate}: {exc}")
    if reply:
        from hawkeye_env.edits import EditError, extract_source

        try:
            return extract_source(text)
        except EditError as exc:
            _fail(f"no candidate in the reply: {exc}")
    return text


@app.command()
def check(
    task: str = typer.Argument(..., help="Task id (see `hawkeye tasks list`)."),
    candidate: str | None = typer.Argument(
        None, help="Candidate .py file defining ModelNew, or '-' for stdin. "
        "Default: the task's expert solution."),
    device: str = typer.Option("auto", help="cpu (Triton interpreter, untimed), cuda, or auto."),
    as_json: bool = typer.Option(False, "--json", help="Print the verdict as one JSON object."),
    reply: bool = typer.Option(False, help="The file is an LLM reply: take its fenced code."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Judge again even if the store has this verdict."),
    store: Path | None = typer.Option(None, help="SQLite results store (default: user cache)."),
    timeout: float = typer.Option(300.0, help="Hard limit for the worker, in seconds."),
    protocol: str = typer.Option("hawkeye", help=PROTOCOL_HELP),
) -> None:
    """Judge one candidate kernel on one task and print its verdict."""
    from hawkeye_env.judge.parent.evaluator import EvalConfig, Evaluator, resolve_device
    from hawkeye_env.judge.parent.store import ResultStore

    try:
        get_task(task)
        device = resolve_device(device)
        config = EvalConfig(timeout_s=timeout, protocol=protocol)
    except (KeyError, ValueError) as exc:
        _fail(str(exc.args[0]) if exc.args else str(exc))
    source = _read_candidate(task, candidate, reply)
    evaluator = Evaluator(ResultStore(store), config)
    verdict = evaluator.evaluate(task, source, device, use_cache=not no_cache)
    if as_json:
        typer.echo(json.dumps(verdict.to_dict(), sort_keys=True))
        return
    style = "green" if verdict.correct else "red"
    console.print(f"[bold {style}]{verdict.stage.value}[/]  reward {verdict.reward:.3f}"
                  f"  ({verdict.wall_s:.1f} s{', cached' if verdict.cached else ''})")
    console.print(verdict.feedback, markup=False, highlight=False)
    for name, outcome in verdict.protocols.items():
        said = "correct" if outcome["correct"] else f"incorrect: {outcome['reason']}"
        console.print(f"{name} protocol (allclose atol {outcome['atol']:g}, rtol {outcome['rtol']:g}, "
                      f"{outcome['trials']} trials): {said}", markup=False, highlight=False)


@tasks_app.command("list")
def tasks_list(
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    split: str | None = typer.Option(None, help="train, validation or test: that split only, read from the "
                                     "indexes without importing generated tasks (hawkeye_env/tasks/selection.py)."),
) -> None:
    """List every registered task, or one split's."""
    list_tasks_command(split, as_json, console)


@tasks_app.command("show")
def tasks_show(
    task: str = typer.Argument(..., help="Task id."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Show one task: description, shapes, tolerances, allowed ops and the reference source."""
    try:
        spec = get_task(task)
    except KeyError as exc:
        _fail(str(exc.args[0]))
    from hawkeye_env.judge.parent.decide.speed_of_light import JUDGED_GPUS, speed_of_light

    summary = spec.summary()
    lights = {gpu: speed_of_light(spec, dict(spec.gpu_shapes[0]), gpu) for gpu in JUDGED_GPUS}
    summary["speed_of_light"] = {gpu: {"ms": x.ms, "bound": x.bound, "precision": x.precision, "tflops": x.tflops,
                                       "tbps": x.tbps} for gpu, x in lights.items()}
    if as_json:
        typer.echo(json.dumps(summary, sort_keys=True))
        return
    console.print(f"[bold]{spec.id}[/bold] ({spec.family})\n{spec.description}\n")
    for key in ("dtypes", "cpu_shapes", "gpu_shapes", "gpu_flops", "gpu_bytes", "tags", "distributions"):
        console.print(f"[cyan]{key}[/cyan]: {summary[key]}")
    for gpu, light in lights.items():  # at the timed (first) GPU shape, datasheet peaks and clocks
        console.print(f"[cyan]speed of light {gpu}[/cyan]: {light.describe()}", highlight=False)
    if spec.no_cpu_reason:
        from rich.markup import escape

        console.print(f"[cyan]no_cpu_reason[/cyan]: {escape(spec.no_cpu_reason)}", highlight=False)
    console.print(f"[cyan]allowed torch ops[/cyan]: {', '.join(summary['allowed_ops'])}")
    for dtype, tol in spec.tolerances.items():
        console.print(f"[cyan]tolerance {dtype}[/cyan]: {tol.describe()} ({tol.source})")
    import importlib.util

    origin = importlib.util.find_spec(spec.module).origin
    console.print("\n[bold]reference[/bold]")
    typer.echo(Path(origin).read_text(encoding="utf-8"))  # unwrapped: source lines stay whole


@tasks_app.command("import-kernelbench")
def tasks_import_kernelbench(
    path: Path = typer.Argument(..., help="A KernelBench level folder (or one problem file)."),
    out: Path | None = typer.Option(None, "--out", help="Folder for the task modules (default: user data dir)."),
    as_json: bool = typer.Option(False, "--json", help="Print the import report as JSON."),
) -> None:
    """Convert KernelBench problem files into tasks; use them with HAWKEYE_TASK_DIRS=OUT."""
    from hawkeye_env.kernelbench.importer import import_kernelbench, render_report

    if not path.exists():
        _fail(f"no such file or folder: {path}")
    report = import_kernelbench(path, out)
    typer.echo(json.dumps(report.to_dict(), sort_keys=True) if as_json else render_report(report))


def _policy_kwargs(policy: str, seed: int, model: str | None, base_url: str, temperature: float,
                   max_tokens: int, token_param: str, tool_calls: bool = False) -> dict:
    if policy == "search":
        return {"seed": seed}
    if policy == "folder":  # pre-generated solutions, KernelBench's layout (policies/folder.py)
        if not model:
            _fail("--policy folder needs --model (the folder of level_<L>_problem_<N>_sample_<S>_kernel.py files)")
        return {"folder": model, "seed": seed}
    if policy in ("hf", "vllm", "openai") and not model:
        _fail(f"--policy {policy} needs --model (a local checkpoint path, or the served model name)")
    kwargs = {"model": model, "seed": seed, "temperature": temperature, "max_tokens": max_tokens}
    if policy == "openai":
        kwargs["base_url"], kwargs["token_param"], kwargs["tool_calls"] = base_url, token_param, tool_calls
    return kwargs


def _check_eval_options(task_ids: list[str], device: str, backend: str, policy: str, context: str,
                        wandb: str | None, split_tasks: bool, budget_s: float | None, protocol: str) -> str:
    """Check ``hawkeye eval``'s options, exit 2 with the message at the first bad one (``--backend ray``: Ray
    must import). Returns the device: resolved for the local backend, as given for Ray (the cluster's)."""
    from evals.wandb_log import MODES
    from hawkeye_env.judge.parent.evaluator import resolve_device
    from hawkeye_env.judge.parent.trial_plan import PROTOCOLS
    from policies import POLICIES
    from units.lib.index import CONTEXT_MODES

    try:  # task_ids: checked by selected_ids
        device = resolve_device(device) if backend == "local" else device  # ray: the cluster's devices
    except (KeyError, ValueError) as exc:
        _fail(str(exc.args[0]) if exc.args else str(exc))
    if policy not in POLICIES:
        _fail(f"unknown policy {policy!r}; known policies: {', '.join(POLICIES)}")
    if context not in CONTEXT_MODES:
        _fail(f"--context must be one of {', '.join(CONTEXT_MODES)}")
    if wandb is not None and wandb not in MODES:
        _fail(f"--wandb must be one of {', '.join(MODES)}")
    if backend not in ("local", "ray"):
        _fail("--backend must be local or ray")
    if budget_s is not None and not split_tasks:
        _fail("--budget-s applies to --split-tasks runs")
    if protocol not in PROTOCOLS:
        _fail(f"--protocol must be one of {', '.join(PROTOCOLS)}")
    if backend == "ray":
        from hawkeye_env.judge.parent.batch.ray_backend import import_ray

        try:
            import_ray()
        except ImportError as exc:
            _fail(str(exc))
    return device


def _make_sampler(policy: str, seed: int, model: str | None, base_url: str, temperature: float, max_tokens: int,
                  token_param: str, tool_calls: bool):
    """The ``policies.base.Policy`` that ``--policy`` names, built from its options; exit 2 if it cannot be."""
    from policies import make_policy

    kwargs = _policy_kwargs(policy, seed, model, base_url, temperature, max_tokens, token_param, tool_calls)
    try:
        return make_policy(policy, **kwargs)
    except (ImportError, ValueError, OSError) as exc:
        _fail(str(exc))


def _run_evaluation(sampler, task_ids: list[str], out: Path, split_tasks: bool, budget_s: float | None,
                    eval_kwargs: dict) -> dict:
    """Evaluate ``sampler`` on ``task_ids`` (empty: every task) into ``out``: one ``run_eval``, or with ``split_tasks``
    one run per task merged after each (``evals/by_task.py``; exit 2 when ``budget_s`` let no task finish).
    ``eval_kwargs`` go to either unchanged. Returns the ``results.json`` dict."""
    if split_tasks:
        from evals.by_task import run_by_task

        results = run_by_task(sampler, task_ids or None, out, budget_s=budget_s, **eval_kwargs)
        if not results:
            _fail(f"no task finished within the --budget-s of {budget_s:g} s")
        return results
    from evals.best_of_n import run_eval

    return run_eval(sampler, task_ids or None, out_dir=out, **eval_kwargs)


def _print_eval_table(results: dict, policy: str, n: int, turns: int) -> None:
    """Print the results' table: per task and overall, the compile, correct and violation rates, the
    best-of-``n`` reward, pass@``n`` and the best speedup (the overall row: its geomean over solved tasks)."""
    table = Table(title=f"hawkeye eval: {policy}, n={n}, turns={turns}, {results['config']['device']}")
    rows = [*results["tasks"].items(), ("overall", results["overall"])]
    table.add_column("task", no_wrap=True, min_width=max(len(name) for name, _ in rows))
    for col in ("compile", "correct", "violations", f"best-of-{n} reward", f"pass@{n}", "best speedup"):
        table.add_column(col)
    def fmt(value, spec: str) -> str:  # None: nothing obtained (the policy failed every sample)
        return "-" if value is None else format(value, spec)

    for name, m in rows:
        best = m.get("best_speedup", {}).get("best")
        geo = m.get("geomean_best_speedup", {}).get("best", {}).get("over_solved")
        speed = best if best is not None else geo
        table.add_row(name, fmt(m["compile_rate"], ".2f"), fmt(m["correct_rate"], ".2f"),
                      fmt(m["violation_rate"], ".2f"), fmt((m.get("best_of_k_reward") or [None])[-1], ".3f"),
                      fmt((m.get("pass_at_k") or [None])[-1], ".2f"), f"{speed:.2f}x" if speed is not None else "-")
    console.print(table)


def _print_eval_outcome(results: dict, out: Path) -> None:
    """Print the timing note, candidate count and report path; if the policy failed, its error (stderr), exit 1."""
    if results["timing_note"]:
        console.print(f"[yellow]note:[/yellow] {results['timing_note']}")
    judge = results["judge"]
    console.print(f"{judge['candidates']} candidates ({judge['cached']} from the store) in "
                  f"{results['wall_s']['total']:.1f} s; report: {out / 'report.md'}")
    if results.get("policy_errors"):
        from rich.markup import escape

        Console(stderr=True).print(f"[red]error:[/red] {escape(results['error'])} (every failure is in "
                                   f"{escape(str(out / 'results.json'))} under policy_errors)", highlight=False)
        raise typer.Exit(1)


@app.command("eval")
def eval_(
    policy: str = typer.Option("search", help="search (knob search, no LLM), openai, hf, vllm or folder "
                               "(pre-generated solutions in --model's folder)."),
    tasks: list[str] | None = typer.Option(None, help=TASKS_HELP),
    n: int | None = typer.Option(None, min=1, help="Samples (trajectories) per task (default: 4; 2 on the CPU "
                                 "interpreter, whose verdicts check correctness only)."),
    turns: int = typer.Option(1, min=1, help="Turns per trajectory; later turns see source and feedback."),
    context: str = typer.Option("docs", help="Unit context in the prompt: none, docs, units or full."),
    workers: int | None = typer.Option(None, min=1, help="Candidates judged at once (default: 2 on CPU, 4 per "
                                       "GPU on CUDA; timed sections never share a GPU)."),
    backend: str = typer.Option("local", help="Where candidates are judged: local (this machine's worker "
                                "pool) or ray (one actor per GPU of a Ray cluster; needs the ray extra)."),
    ray_address: str | None = typer.Option(None, help="ray: cluster address (e.g. auto); default a local Ray."),
    gpus: int | None = typer.Option(None, min=1, help="local: how many visible GPUs to judge on (default all)."),
    out: Path | None = typer.Option(None, help="Output folder. Default: out/eval/<policy>-<time>."),
    device: str = typer.Option("auto", help="cpu (Triton interpreter, untimed), cuda, or auto."),
    wandb: str | None = typer.Option(None, help="W&B mode: offline, online (needs WANDB_API_KEY) or disabled. "
                                     "Default: W&B's own (WANDB_MODE; online with WANDB_API_KEY, else offline); "
                                     "WANDB_MODE=disabled always wins."),
    store: Path | None = typer.Option(None, help="SQLite results store (default: user cache)."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Judge again even if the store has a verdict."),
    seed: int = typer.Option(0, help="Policy seed (search mutations, sampling seeds)."),
    model: str | None = typer.Option(None, help="hf/vllm: local checkpoint path; openai: served model name; "
                                     "folder: the solutions folder."),
    base_url: str = typer.Option("http://localhost:8000/v1", help="openai: server URL including /v1."),
    temperature: float = typer.Option(0.8, help="LLM sampling temperature."),
    max_tokens: int = typer.Option(4096, help="LLM reply length limit, in tokens."),
    token_param: str = typer.Option("max_tokens", help="openai: the request field of --max-tokens; "
                                    "max_completion_tokens for reasoning models (o-series, gpt-5)."),
    tool_calls: bool = typer.Option(False, "--tool-calls", help="openai: offer the training tool submit_kernel "
                                    "and judge a call's source argument."),
    context_budget_chars: int = typer.Option(12_000, min=0, help="Unit context budget in characters (the env's and "
                                             "training's default)."),
    timeout: float = typer.Option(300.0, help="Hard limit per candidate worker, in seconds."),
    quiet: bool = typer.Option(False, help="No progress bars."),
    split_tasks: bool = typer.Option(False, "--split-tasks", help="One run per task in OUT/<task>, merged into "
                                     "OUT after each; a re-run keeps finished tasks (evals/by_task.py)."),
    budget_s: float | None = typer.Option(None, "--budget-s", min=0, help="--split-tasks: start no task after "
                                          "this many seconds (the rest wait for a re-run)."),
    protocol: str = typer.Option("hawkeye", help=PROTOCOL_HELP),
    split: str | None = typer.Option(None, help=SPLIT_HELP),
) -> None:
    """Best-of-N / multi-turn evaluation of a policy: sample, judge, score, plot, report."""
    import datetime

    from hawkeye_env.judge.parent.evaluator import EvalConfig

    task_ids = selected_ids(tasks, split)
    device = _check_eval_options(task_ids, device, backend, policy, context, wandb, split_tasks, budget_s, protocol)
    n = n or (CPU_SAMPLES if device == "cpu" else GPU_SAMPLES)
    sampler = _make_sampler(policy, seed, model, base_url, temperature, max_tokens, token_param, tool_calls)
    if out is None:
        out = Path("out/eval") / f"{policy}-{datetime.datetime.now():%Y%m%d-%H%M%S}"
    eval_kwargs = dict(n=n, turns=turns, context=context, device=device, context_budget_chars=context_budget_chars,
                       workers=workers, store=store, wandb_mode=wandb, progress=not quiet,
                       config=EvalConfig(timeout_s=timeout, protocol=protocol), use_cache=not no_cache,
                       backend=backend, ray_address=ray_address, gpus=gpus)
    results = _run_evaluation(sampler, task_ids, out, split_tasks, budget_s, eval_kwargs)
    _print_eval_table(results, policy, n, turns)
    _print_eval_outcome(results, out)


@app.command()
def serve(
    host: str = typer.Option("127.0.0.1", help="Address to listen on (0.0.0.0 for every interface)."),
    port: int = typer.Option(8000, help="Port to listen on."),
    tasks: list[str] | None = typer.Option(None, help=f"Tasks sessions may reset on: {TASKS_HELP}"),
    split: str | None = typer.Option(None, help=SPLIT_HELP),
    device: str = typer.Option("auto", help="cpu (Triton interpreter, untimed), cuda, or auto."),
    context: str = typer.Option("docs", help="Unit context in the prompt: none, docs, units or full."),
    max_turns: int = typer.Option(4, min=1, help="Steps per episode before truncation."),
    target_speedup: float | None = typer.Option(1.0, help="Speedup that ends an episode (0: the first correct "
                                                "kernel ends it)."),
    max_sessions: int = typer.Option(64, min=1, help="Concurrent WebSocket sessions."),
    session_timeout: float = typer.Option(DEFAULT_SESSION_TIMEOUT_S, min=0, help="Close WebSocket sessions idle "
                                          "this many seconds with no step pending (0: never)."),
    max_per_client: int = typer.Option(DEFAULT_MAX_PER_CLIENT, min=1, help="Candidates one client (a WebSocket "
                                       "session, an HTTP peer address) may have waiting or being judged."),
    workers: int | None = typer.Option(None, min=1, help="Candidates judged at once (default: 2 on CPU, 4 per GPU)."),
    gpus: int | None = typer.Option(None, min=1, help="How many visible GPUs to judge on (default all)."),
    store: Path | None = typer.Option(None, help="SQLite results store (default: user cache)."),
    timeout: float = typer.Option(300.0, help="Hard limit per candidate worker, in seconds."),
    allow_profile: bool = typer.Option(False, "--allow-profile", help="Accept the reply PROFILE: the current "
                                       "source judged again plus its kernels' profile (hawkeye_env.profile_action)."),
    reward: str = typer.Option(REWARD_VERSION, help="The reward version sessions are paid by (reward.REWARDS, e.g. "
                               "sol-v1)."),
) -> None:
    """Serve hawkeye/KernelOpt-v3 over the OpenEnv protocol: many sessions, one shared judge."""
    from hawkeye_env.server import INSTALL_HINT

    task_ids = selected_ids(tasks, split)
    try:
        from hawkeye_env.judge.parent.evaluator import resolve_device

        device = resolve_device(device)
    except (KeyError, ValueError) as exc:
        _fail(str(exc.args[0]) if exc.args else str(exc))
    from units.lib.index import CONTEXT_MODES

    if context not in CONTEXT_MODES:
        _fail(f"--context must be one of {', '.join(CONTEXT_MODES)}")
    if reward not in REWARDS:
        _fail(f"--reward must be one of {', '.join(REWARDS)}")
    try:
        from hawkeye_env.server.app import serve as serve_app
    except ImportError:
        _fail(INSTALL_HINT)
    from hawkeye_env.judge.parent.evaluator import EvalConfig, Evaluator
    from hawkeye_env.judge.parent.store import ResultStore

    evaluator = Evaluator(ResultStore(store), EvalConfig(timeout_s=timeout))
    serve_app(evaluator, host=host, port=port, device=device, workers=workers, gpus=gpus, max_sessions=max_sessions,
              session_timeout_s=session_timeout or None, max_per_client=max_per_client, tasks=task_ids or None,
              context=context, max_turns=max_turns, target_speedup=target_speedup or None,
              allow_profile=allow_profile, reward=reward)
