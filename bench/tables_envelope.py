"""BENCHMARKS.md tables of what the judge accepts and where it looks: the honest-code corpus by
style, the correctness envelope on experts and hacks, and the reply parser's worst cases."""

from __future__ import annotations

from collections import Counter

from bench.tables import Loaded, fmt, md_table


def honest_corpus(files: list[Loaded]) -> list[str]:
    """Accepted (correct, no violation) over total per style and device, then every candidate not
    accepted with its stage and the first line of its error."""
    rows, misses = [], []
    for f in files:
        device = f.data["versions"].get("gpu") or f.data["device"]
        if f.data.get("complete") is False:  # a run stopped at its time limit: what it judged
            device += f" (stopped early: {f.data['by_style']['all']['total']} of {f.data.get('planned', '?')} judged)"
        for style, t in sorted(f.data["by_style"].items(), key=lambda kv: (kv[0] == "all", kv[0])):
            rows.append([device, style, f"{t['accepted']} / {t['total']}"])
        for c in f.data["candidates"]:
            if not c["accepted"]:
                why = (c["violations"][0]["code"] if c["violations"] else c["error"])[:160]
                misses.append([device, c["file"], c["stage"], why or "-"])
    out = md_table(["device", "style", "accepted / total"], rows)
    if misses:
        out += ["", "Not accepted:", "", *md_table(["device", "candidate", "stage", "why"], misses)]
    return out


def envelope(files: list[Loaded]) -> list[str]:
    """Per run, kind (expert, hack) and stage in the full phase: verdicts, trials, hidden-shape and
    layout trials per verdict, the carried run's mean length; then each run's false negatives,
    hacks judged correct and the envelope's added replay trial seconds."""
    rows, notes = [], []
    for f in files:
        device = f.data.get("gpu") or f.data.get("device") or f.data.get("versions", {}).get("gpu", "?")
        seeds = sorted({r["seed"] for r in f.data["rows"]})
        run = f"{f.path.rsplit('/', 1)[-1]} ({device}, seeds {', '.join(map(str, seeds))})"
        full = [r for r in f.data["rows"] if r.get("phase", "full") == "full"]
        counts: Counter = Counter((r["kind"], r["stage"]) for r in full)
        for (kind, stage), n in sorted(counts.items()):
            sel = [r for r in full if r["kind"] == kind and r["stage"] == stage]
            layouts = sorted({x for r in sel for x in r["layouts"]})
            tasks = len({r["task"] for r in sel})
            which = ", ".join(sorted({r["name"] for r in sel})) if kind == "hack" else f"{tasks} tasks"
            rows.append([run, kind, stage, str(n), fmt(sum(r["trials"] for r in sel) / n, ".1f"),
                         fmt(sum(r["hidden"] for r in sel) / n, ".1f"), ", ".join(layouts),
                         fmt(sum(r.get("carried", 0) for r in sel) / n, ".1f"), which])
        s = f.data.get("summary")
        if s:
            cost = s.get("added_replay_trials_s")
            ratio = s.get("full_over_public")
            added = (f"added replay trial seconds per expert verdict median {cost['median']:.2f} "
                     f"(range {cost['min']:.2f}-{cost['max']:.2f}, {cost['n']} pairs), full over public trial "
                     f"time median {ratio['median']:.2f}x" if cost and ratio else "no cost pairs")
            missed = ", ".join(f"{n} (seed {sd})" for n, sd in s["hacks_missed"]) or "none"
            notes.append(f"- {run}: {len(s['false_negatives'])} false negatives of {s['experts']} expert verdicts; "
                         f"hacks judged correct: {missed}; {added}.")
        elif f.data.get("complete") is False:
            notes.append(f"- {run}: stopped early, {len(f.data['rows'])} of {f.data.get('planned', '?')} judged.")
    out = md_table(["run", "kind", "stage", "verdicts", "trials", "hidden shapes", "layouts", "carried calls",
                    "which"], rows)
    return out + ([""] + notes if notes else [])


def edits_worst_case(files: list[Loaded]) -> list[str]:
    """Seconds per adversarial reply or failed edit, the line scanners against the regex parser."""
    rows = []
    for f in files:
        for name, c in f.data["cases"].items():
            old = c["old"] if isinstance(c["old"], str) else fmt(c["old"], ".3f")
            rows.append([name, str(c["reply_chars"]), str(c["source_chars"]), fmt(c["new"], ".3f"), old])
    return md_table(["case", "reply chars", "source chars", "seconds", "regex parser seconds"], rows)


__all__ = ["edits_worst_case", "envelope", "honest_corpus", "native_excuse", "structure_calibration"]


def structure_calibration(files: list[Loaded]) -> list[str]:
    """Per run and task at the GPU shapes: the slice rule's honest maximum and smallest seeded-bug
    score, the fixed-position rule's honest maximum, seeded score over all calls and smallest over
    any two calls; then the seeded candidates' and experts' stages."""
    out = []
    for f in files:
        for run in f.data["calibration"]:
            rows = [[t["task"], fmt(t["slice_honest_max"], ".3f"),
                     fmt(min(t["slice_bugs_min"].values()), ".2f") if t["slice_bugs_min"] else "-",
                     fmt(t["recurrence"]["honest_max"], ".1f"), fmt(t["recurrence"]["seeded_all_calls"], ".2f"),
                     fmt(t["recurrence"]["seeded_min_pair"], ".2f"),
                     _percent(t["recurrence"]["seeded_pairs_caught"])]
                    for t in run["tasks"]]
            s = run["summary"]
            out += [f"{run['run']}: slice rule honest maximum {s['honest_max']:.3f} (fails above 1), fixed-position "
                    f"rule honest maximum {s['recurrence_honest_max']:.1f} (fails above 1).", ""]
            out += md_table(["task", "slice honest max", "slice seeded min", "fixed-position honest max",
                             "seeded, all calls", "seeded, worst pair", "pairs caught %"], rows) + [""]
        cand = [[c["kind"], c["name"], c["task"], c["stage"]] for c in f.data["candidates"]]
        out += md_table(["kind", "candidate", "task", "stage"], cand) + [""] if cand else []
    return out[:-1] if out and out[-1] == "" else out


def _percent(share: float | None) -> str:
    return "-" if share is None else f"{100 * share:.0f}"


def native_excuse(files: list[Loaded]) -> list[str]:
    """Per file: the outputs of the FlashAttention-2 variant that need the native's excuse, the
    least multiple each needed, and the evaluator's stage per verdict seed."""
    out = []
    for f in files:
        s = f.data["summary"]
        out += [f"{s['task']} with delta from the bf16 o, {s['outputs']} outputs (CPU shapes, every distribution): "
                f"{s['needing_excuse']} fail without the excuse, the largest needs {s['largest_needed']:.3f}x the "
                f"native's error (the judge allows {s['native_multiple']}x); {s['failing']} fail with it.", ""]
        rows = [[f"S={r['shape']['S']}, D={r['shape']['D']}", r["distribution"], r["seed"], r["output"],
                 fmt(r["least_multiple"], ".3f"), "yes" if r["ok"] else "no"]
                for r in f.data["trials"] if r["least_multiple"] != 0.0]
        out += md_table(["shape", "distribution", "seed", "output", "least multiple", "passes"], rows) + [""]
        out += md_table(["verdict seed", "stage"], [[v["seed"], v["stage"]] for v in f.data["verdicts"]])
    return out
