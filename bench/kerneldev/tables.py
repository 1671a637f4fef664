"""Markdown tables of the kernel-development measurements, one function per results schema (the
judge, suite and product ones are in ``bench.tables``, with ``Loaded`` and ``md_table``).

* ``units``: ``python -m hawkeye_env.units_verify --gpu --json`` output: a list of unit reports, or
  ``{"runs": [list, ...]}`` for repeated processes (any extra keys are metadata). A unit's rows
  in a later file replace an earlier file's; the processes of one file are its repeats.
* ``sweep``: the JSON lines of the sweeps under ``bench.kerneldev.sweeps``: ``summary`` rows
  (``median_ms`` and ``vs_<runner>`` ratios per configuration), or the unit sweeps' plain rows
  (``cfg``, ``ms``). Per shape: every fixed runner (a name) and the ``SWEEP_TOP`` fastest
  configurations (dicts).
* ``gluon_units``: ``python -m bench.kerneldev.gluon_units_check``: per Gluon unit and shape, the
  vendor, the solution and the naive twin in TFLOP/s (CUDA-graph replays), with correctness and
  compile counts.
* ``ws_pairs``: ``python -m bench.kerneldev.sweeps.ws``: specialized over unspecialized per pair.
* ``launch_share``: ``python -m bench.kerneldev.launch_share``: each runner with the host launch
  inside the events and hidden.
* ``launch_diag``: one call of a unit's solution and naive kernels, timed four ways.
* ``ncu_kernels``: Nsight Compute's text report of ``python -m bench.kerneldev.vendor_profile``;
  the kernels of a task's runner (``task:owner``) profiled in a later file replace every kernel an
  earlier file has for it (a rebuilt expert's new kernel replaces its old one).
* ``flush_probe``: ``python -m bench.kerneldev.flush_probe``: each runner's time from each L2 state.
"""

from __future__ import annotations

import math
import re

from bench.tables import Loaded, fmt, md_table, spread

SWEEP_TOP = 3


def _shape(shape) -> str:
    if isinstance(shape, dict):
        return " ".join(f"{k}={v}" for k, v in shape.items())
    return str(shape)


def _unit_runs(data) -> list[list[dict]]:
    if isinstance(data, list):
        return [data]
    if "runs" in data:
        return data["runs"]
    return [data["units"]]


def units(files: list[Loaded]) -> list[str]:
    """Solution against naive per unit: the metric, the margin over processes and the verdict."""
    by_unit: dict[str, tuple[str, list[dict]]] = {}
    for f in files:
        fresh: dict[str, list[dict]] = {}
        for run in _unit_runs(f.data):
            for r in run:
                fresh.setdefault(r["unit"], []).append(r)
        by_unit.update({u: (f.path, rows) for u, rows in fresh.items()})
    rows = []
    for unit, (path, reports) in sorted(by_unit.items()):
        first = reports[0]
        lower = first["metric_unit"].startswith("bytes") or "lower" in first["metric"]
        values = first["values"]
        passed = [r["solution_beats_naive"] for r in reports]
        verdict = "pass" if all(passed) else ("**fail**" if not any(passed) else f"pass {sum(passed)} of {len(passed)}")
        rows.append([unit, f"{first['metric']} ({first['metric_unit']}{', lower is better' if lower else ''})",
                     _shape(first["shape"]),
                     fmt(values.get("solution"), ".4g"), fmt(values.get("naive"), ".4g"),
                     spread([r["margin"] for r in reports], ".2f") + "x", f"{first['min_margin']}x",
                     str(len(reports)), verdict, f"`{path.rsplit('/', 1)[-1]}`"])
    header = ["unit", "metric", "shape", "solution", "naive", "margin, median (min-max)", "required",
              "processes", "verdict", "file"]
    return md_table(header, rows)


def gluon_units(files: list[Loaded]) -> list[str]:
    """Per Gluon unit and timed shape: each runner's TFLOP/s (median over repeats, spread), its
    ratio to the first (vendor) runner, the solution over its naive twin; then per unit the
    correctness cases and compiled configurations that passed."""
    rows, notes = [], []
    for f in files:
        for unit, entry in f.data.items():
            if unit in ("env", "versions") or not isinstance(entry, dict):
                continue
            checks = entry.get("checks", {})
            for case in checks.get("timing", []):
                runners = {k: v for k, v in case.items() if isinstance(v, dict) and "tflops" in v}
                if not runners:
                    continue
                vendor = next(iter(runners.values()))["tflops"]
                solution, naive = runners.get("solution"), runners.get("naive_triton")
                margin = solution["tflops"] / naive["tflops"] if solution and naive else None
                shape = case.get("shape", "") + (f", causal={case['causal']}" if "causal" in case else "") + \
                    (", b K-major" if case.get("b_k_major") else "")
                for name, r in runners.items():
                    tflops = f"{fmt(r['tflops'], '.0f')} (+-{100 * r.get('spread', 0) / 2:.1f}%)"
                    rows.append([unit, shape, name, tflops,
                                 fmt(r["tflops"] / vendor, ".2f") + "x",
                                 fmt(margin, ".2f") + "x" if name == "solution" and margin else ""])
            cases = checks.get("correctness", [])
            compiled = entry.get("compile", [])
            notes.append(f"{unit}: correctness {sum(c['ok'] for c in cases)} / {len(cases)} cases, "
                         f"{sum(c['ok'] for c in compiled)} / {len(compiled)} configurations compiled")
    header = ["unit", "shape", "runner", "TFLOP/s (spread)", "vs the first runner", "solution / naive"]
    return md_table(header, rows) + [""] + [f"- {n}" for n in notes]


def _cfg(cfg) -> str:
    if isinstance(cfg, dict):
        return ", ".join(f"{k}={v}" for k, v in cfg.items())
    return str(cfg)


def _sweep_rows(rows: list[dict]) -> list[dict]:
    """Rows normalised to ``group``, ``name``, ``configured`` (a swept configuration, not a fixed
    runner), ``ms`` and ``ratios``."""
    out = []
    for r in rows:
        if r.get("kind") == "summary" and "median_ms" in r:
            ms, cfg, group = r["median_ms"], r["cfg"], _shape(r["shape"])
        elif "kind" not in r and "ms" in r and r.get("cfg") not in (None, "env", "precompile"):
            if r["cfg"] == "best":
                continue
            ms, cfg = r["ms"], r.get("label") if r.get("label") not in (None, r["cfg"]) else r["cfg"]
            group = " ".join(x for x in (r.get("unit", ""), _shape(r.get("shape", ""))) if x)
        else:
            continue
        ratios = {k: v for k, v in r.items() if k.startswith(("vs_", "x_")) and isinstance(v, (int, float))}
        errors = [v for k, v in r.items() if k.startswith("err") and isinstance(v, (int, float))]
        out.append({"group": group, "name": _cfg(cfg), "configured": isinstance(r["cfg"], dict), "ms": ms,
                    "ratios": ratios, "err": max(errors) if errors else None})
    return out


def sweep(files: list[Loaded]) -> list[str]:
    """Per file and shape: the fixed runners and the fastest configurations, median ms and ratios."""
    table = []
    for f in files:
        groups: dict[str, list[dict]] = {}
        for r in _sweep_rows(f.data):
            groups.setdefault(r["group"], []).append(r)
        for group, rows in groups.items():
            fixed = [r for r in rows if not r["configured"]]
            swept = sorted((r for r in rows if r["configured"]), key=lambda r: r["ms"])
            for r in fixed + swept[:SWEEP_TOP]:
                ratios = ", ".join(f"{k} {v:.2f}" for k, v in r["ratios"].items() if v != 1.0) or "-"
                table.append([f"`{f.path.rsplit('/', 1)[-1]}`", group, r["name"], fmt(r["ms"], ".4f"), ratios,
                              fmt(r["err"], ".1e"), f"{len(swept)} swept" if r is (fixed + swept)[0] else ""])
    return md_table(["file", "shape", "runner", "median ms", "ratios (> 1: faster than the named runner)",
                     "relative L2 error (worst input)", "configurations"], table)


def sass_loops(files: list[Loaded]) -> list[str]:
    """Main-loop SASS instruction counts per configuration (``units.lib.triton_compile`` JSON lines)."""
    rows = [[r["unit"], _cfg(r["cfg"]) if r["cfg"] else "the unit's default", str(r["instructions"]),
             fmt(r["per_code"], ".2f"), str(r["shared"])]
            for f in files for r in f.data if "instructions" in r]
    return md_table(["unit", "configuration", "loop instructions", "per code and thread", "shared bytes"], rows)


def ws_pairs(files: list[Loaded]) -> list[str]:
    """Each specialized kernel over its unspecialized twin: median and min-max over rounds."""
    rows = []
    for f in files:
        for r in f.data:
            if r.get("kind") == "summary" and "speedups" in r:
                rows.append([_shape(r["shape"]), r["ws"], r["vs"], spread(r["speedups"], ".3f"),
                             str(len(r["speedups"]))])
    return md_table(["shape", "specialized", "over", "speedup, median (min-max)", "rounds"], rows)


def launch_share(files: list[Loaded]) -> list[str]:
    """Each task's runners with the launch inside the events (a call as the caller pays it) and hidden
    (device time), and the share of the call that is host launch."""
    rows, lines = [], []
    for f in files:
        for r in f.data:
            if r.get("kind") == "provenance":
                continue
            if r["task"] == "copy":
                lines.append(f"Copy bandwidth ({'launch hidden' if r['hide_launch'] else 'launch inside'}): "
                             f"{r['gbps']:.0f} GB/s.")
                continue
            if "error" in r:
                rows.append([r["task"], "error", r["error"][:80], "-", "-"])
                continue
            names = [k.removesuffix("_hidden_ms") for k in r if k.endswith("_hidden_ms")]
            for name in names:
                call, hidden = r[f"{name}_ms"], r[f"{name}_hidden_ms"]
                rows.append([r["task"], name, f"{call:.4f}", f"{hidden:.4f}", f"{(call - hidden) * 1e3:.0f}"])
    return md_table(["task", "runner", "call ms (launch inside)", "device ms (launch hidden)", "difference us"],
                    rows) + ([""] + lines if lines else [])


def launch_diag(files: list[Loaded]) -> list[str]:
    """Per unit and role: the CUDA-event median with the launch inside, a CUDA-graph replay, the
    kernels' own time (profiler) and the host enqueue time of one call."""
    rows = []
    for f in files:
        for r in f.data:
            kernels = " + ".join(f"{ms:.4f}" for ms in r.get("kernels_ms", {}).values()) or "-"
            rows.append([r["unit"], r["role"], f"{fmt(r.get('event_ms'), '.4f')} (CV {fmt(r.get('event_cv'), '.2f')})",
                         fmt(r.get("graph_ms"), ".4f"), kernels, fmt(r.get("host_launch_us"), ".0f")])
    return md_table(["unit", "role", "event ms, launch inside", "CUDA-graph replay ms", "kernels ms (profiler)",
                     "host enqueue us"], rows)


_KERNEL_RE = re.compile(r"^  (\w+):(\w+)/(.+) \(([\d, ]+)\)x\(([\d, ]+)\), Context", re.M)
_NCU_METRICS = {
    "duration": re.compile(r"^\s+Duration\s+(\w+)\s+([\d.,]+)", re.M),
    "sm": re.compile(r"^\s+Compute \(SM\) Throughput\s+%\s+([\d.,]+)", re.M),
    "registers": re.compile(r"^\s+Registers Per Thread\s+\S+\s+([\d.,]+)", re.M),
    "shared": re.compile(r"^\s+Dynamic Shared Memory Per Block\s+(\S+)\s+([\d.,]+)", re.M),
    "clock": re.compile(r"^\s+SM Frequency\s+(\w+)\s+([\d.,]+)", re.M),
    "tensor": re.compile(r"^\s+sm__pipe_tensor_cycles_active\.avg\.pct_of_peak_sustained_elapsed\s+%\s+([\d.,]+)",
                         re.M),
    "dram": re.compile(r"^\s+DRAM Throughput\s+%\s+([\d.,]+)", re.M),
}


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def _ncu_kernels(text: str) -> dict[str, dict]:
    heads = list(_KERNEL_RE.finditer(text))
    kernels = {}
    for head, nxt in zip(heads, heads[1:] + [None]):
        body = text[head.end(): nxt.start() if nxt else len(text)]
        task, owner, name, grid, block = head.groups()
        k = {"task": task, "owner": owner, "kernel": name, "ctas": math.prod(int(x) for x in grid.split(",")),
             "threads": math.prod(int(x) for x in block.split(","))}
        if m := _NCU_METRICS["duration"].search(body):
            k["duration_us"] = _number(m.group(2)) * {"ns": 1e-3, "us": 1.0, "ms": 1e3}.get(m.group(1), 1.0)
        if m := _NCU_METRICS["sm"].search(body):
            k["sm_pct"] = _number(m.group(1))
        if m := _NCU_METRICS["registers"].search(body):
            k["registers"] = int(_number(m.group(1)))
        if m := _NCU_METRICS["shared"].search(body):
            k["shared_kb"] = _number(m.group(2)) * (1.0 if m.group(1).startswith("Kbyte") else 1e-3)
        if m := _NCU_METRICS["clock"].search(body):
            k["clock_ghz"] = _number(m.group(2))
        for key in ("tensor", "dram"):
            if m := _NCU_METRICS[key].search(body):
                k[f"{key}_pct"] = _number(m.group(1))
        kernels[f"{task}:{owner}/{name}"] = k
    return kernels


def ncu_kernels(files: list[Loaded]) -> list[str]:
    """Per profiled kernel: duration, SM throughput, launch shape, shared memory and registers."""
    kernels: dict[str, tuple[str, dict]] = {}
    for f in files:
        found = _ncu_kernels(f.data)
        runners = {(k["task"], k["owner"]) for k in found.values()}
        kernels = {key: v for key, v in kernels.items() if (v[1]["task"], v[1]["owner"]) not in runners}
        kernels.update({key: (f.path, k) for key, k in found.items()})
    rows = []
    for _, (path, k) in sorted(kernels.items(), key=lambda kv: (kv[1][1]["task"], kv[1][1]["owner"] != "expert")):
        name = k["kernel"] if len(k["kernel"]) <= 60 else k["kernel"][:57] + "..."
        rows.append([k["task"], k["owner"], f"`{name}`", fmt(k.get("duration_us"), ".1f"), fmt(k.get("sm_pct"), ".1f"),
                     f"{k['threads']}, {k['ctas']}", fmt(k.get("shared_kb"), ".0f"), str(k.get("registers", "-")),
                     fmt(k.get("clock_ghz"), ".2f"), fmt(k.get("tensor_pct"), ".1f"), fmt(k.get("dram_pct"), ".1f"),
                     f"`{path.rsplit('/', 1)[-1]}`"])
    header = ["task", "owner", "kernel", "duration us", "SM throughput %", "threads per CTA, CTAs",
              "shared memory KB per CTA", "registers per thread", "SM clock GHz", "tensor pipe busy %", "DRAM %",
              "file"]
    return md_table(header, rows)


_FLUSH_MODES = ("dirty", "clean", "warm")  # bench.kerneldev.flush_probe.FLUSH_MODES, in its order


def flush_probe(files: list[Loaded]) -> list[str]:
    """``python -m bench.kerneldev.flush_probe``: per task and owner, the median time and operand
    bandwidth from each L2 state (the judge's dirty flush, a clean one, none), and each mode's
    expert-over-vendor ratio."""
    rows = []
    for f in files:
        by = {}
        for r in f.data["rows"]:
            by.setdefault((r["task"], r["owner"]), {})[r["mode"]] = r
        for (task, owner), modes in by.items():
            times = [f"{modes[m]['median_ms'] * 1e3:.1f} ({modes[m]['tb_s']:.2f})" for m in _FLUSH_MODES]
            ratios = "-"
            if owner == "expert":
                vendor = by[next(key for key in by if key[0] == task and key[1] != "expert")]
                ratios = " / ".join(fmt(vendor[m]["median_ms"] / modes[m]["median_ms"], ".2f") for m in _FLUSH_MODES)
            rows.append([task, owner, *times, ratios, f"`{f.path.rsplit('/', 1)[-1]}`"])
    header = ["task", "owner", "judge's dirty flush us (TB/s)", "clean flush us (TB/s)", "no flush us (TB/s)",
              "expert vs vendor: dirty / clean / none", "file"]
    return md_table(header, rows)


__all__ = ["flush_probe", "launch_diag", "launch_share", "ncu_kernels", "sweep", "units", "ws_pairs"]
