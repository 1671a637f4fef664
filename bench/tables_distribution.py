"""BENCHMARKS.md's tables of a generated task distribution (``bench.task_distribution``'s file):
generation, drop reasons, coverage, splits and difficulty, and listing and loading at scale."""

from __future__ import annotations

from bench.tables import Loaded, md_table


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "-"


def _seconds(x: dict) -> str:
    """``median (min-max)`` of a scale figure, in seconds (ms below a second)."""
    scale, unit = (1e3, " ms") if x["median"] < 1 else (1, " s")
    med, lo, hi = (x[k] * scale for k in ("median", "min", "max"))
    return f"{med:.3g}{unit} ({lo:.3g}-{hi:.3g})"


def _short(text: str, limit: int = 110) -> str:
    """``text`` cut at a word boundary within ``limit`` characters."""
    return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0] + " ..."


def _coverage(rows: dict) -> list[list[str]]:
    return [[name, str(r["drafted"]), str(r["kept"]), _pct(r["kept"], r["drafted"])] for name, r in rows.items()]


def _generation(g: dict) -> list[str]:
    gates = "every gate" + (f"; compile gate ({g['compile']}) on every {g['compile_every']}th draft"
                            if g["compile"] != "none" else "; no compile gate")
    out = md_table(["drafts", "kept", "wall", "per draft (median / p90)", "workers", "gates"], [[
        str(g["n"]), f"{g['kept']} ({_pct(g['kept'], g['n'])})", f"{g['wall_s'] / 60:.1f} min",
        f"{g['per_task_s']['median']:.2f} / {g['per_task_s']['p90']:.2f} s", str(g["workers"]), gates]])
    dropped = sum(g["dropped"].values())
    examples = {code: (found or [{}])[0] for code, found in g["dropped_examples"].items()}
    reasons = [[code, str(count), _pct(count, dropped),
                f"`{examples[code].get('id', '')}`: {_short(examples[code].get('detail', ''))}"]
               for code, count in g["dropped"].items()]
    out += ["", "Why drafts were dropped (one example each):", "",
            *md_table(["reason", "drafts", "of the dropped", "example"], reasons)]
    out += ["", "Kept by family and by dtype:", "",
            *md_table(["family", "drafted", "kept", "kept %"], _coverage(g["coverage"]["family"])), "",
            *md_table(["dtype", "drafted", "kept", "kept %"], _coverage(g["coverage"]["dtype"])), "",
            *md_table(["backward", "drafted", "kept", "kept %"], _coverage(g["coverage"]["backward"]))]
    splits = [[name, str(s["tasks"]), str(s["graphs"]), str(s["held_out_graph_tasks"])]
              for name, s in g["splits"].items()]
    out += ["", f"Splits ({g['distinct_graphs']} distinct graphs; {g['held_out_graphs']} held-out graphs of the "
            "curated suite):", "", *md_table(["split", "tasks", "graphs", "tasks with a held-out graph"], splits)]
    levels = g["coverage"]["level"]
    out += ["", "Difficulty level (1 one op, 2 a fusion, 3 a GEMM or attention with more, or a loop): "
            + ", ".join(f"level {k}: {v}" for k, v in levels.items()) + "."]
    return out


def _scale(s: dict) -> list[str]:
    rows = [["registry and curated suite imported", _seconds(s["import_s"])],
            [f"folder registered, {s['tasks']} ids listed (index read)", _seconds(s["list_s"])],
            [f"train split selected ({s['train']} ids)", _seconds(s["split_s"])],
            ["one generated task loaded (get_task, median of 50)", _seconds(s["get_one_s"])],
            [f"every task loaded (the {s['generated']} generated modules imported)", _seconds(s["load_all_s"])],
            ["`hawkeye tasks list --split train --json`, process start to exit", _seconds(s["cli_list_s"])]]
    return [f"Listing and loading {s['generated']} generated tasks beside the curated suite ({s['tasks']} tasks; "
            f"{s['repeats']} fresh interpreters; writing the folder took {s['write_s']:.0f} s):", "",
            *md_table(["step", "seconds, median (min-max)"], rows)]


def task_distribution(files: list[Loaded]) -> list[str]:
    """The tables of the newest file (module docstring)."""
    data = files[-1].data
    out = _generation(data["generation"])
    if "scale" in data:
        out += ["", *_scale(data["scale"])]
    host = data.get("host", {})
    if host:
        out += ["", f"Host: {host['cpus']} CPUs, load average {host['load_average_start'][0]:.1f} at the start "
                f"and {host['load_average_end'][0]:.1f} at the end (a shared machine: times are upper bounds)."]
    return out
