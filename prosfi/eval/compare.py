"""`prosfi eval compare DIR_A DIR_B ...`: earlier evaluations side by side, with paired bootstrap
significance of each run's difference from the first (the baseline) on the problems they share.

Paired bootstrap: per shared problem, the run's value minus the baseline's (accuracy and reward hit
averaged over that problem's samples); problems are resampled with replacement; the interval is the
percentile interval of the mean difference and p the two-sided share of resampled means on the
other side of zero (x2, capped at 1). Differences are computed overall and per (source, difficulty).
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from prosfi.usage import UsageError

COMPARED = ("accuracy", "reward_hit")


def per_problem(records: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """problem id -> {"group": (source, difficulty), "accuracy": mean, "reward_hit": mean}."""
    from prosfi.eval.metrics import formats_of, is_hit

    formats = formats_of(records)
    acc: dict[str, list] = defaultdict(lambda: [None, 0, 0.0, 0.0])
    for r in records:
        if r.get("source") is None:
            continue
        row = acc[str(r["problem_id"])]
        row[0] = (str(r["source"]), None if r.get("difficulty") is None else str(r["difficulty"]))
        row[1] += 1
        row[2] += bool(r.get("answer_correct"))
        row[3] += is_hit(r, formats[r.get("mode")])  # the format's verified reasoning and a right answer
    return {pid: {"group": g, "accuracy": c / n, "reward_hit": h / n} for pid, (g, n, c, h) in acc.items()}


N_BOOT = 10_000  # resamples of `prosfi eval compare` (docs/eval.md)


def paired_bootstrap(a: np.ndarray, b: np.ndarray, n_boot: int = N_BOOT, seed: int = 0,
                     level: float = 0.95, block: int = 1000) -> dict[str, Any]:
    """Mean of b - a over paired problems, its percentile interval and a two-sided p-value. Resamples
    are drawn `block` at a time (vectorised, memory bounded by block x problems)."""
    d = np.asarray(b, float) - np.asarray(a, float)
    if len(d) == 0:
        return {"n": 0, "diff": None, "diff_ci": None, "p": None}
    rng = np.random.default_rng(seed)
    means = np.concatenate([d[rng.integers(0, len(d), size=(min(block, n_boot - start), len(d)))].mean(axis=1)
                            for start in range(0, n_boot, max(block, 1))])
    lo, hi = np.quantile(means, [(1 - level) / 2, 1 - (1 - level) / 2])
    mean = float(d.mean())
    if mean == 0 and not d.any():
        p = 1.0
    else:
        other = np.mean(means <= 0) if mean > 0 else np.mean(means >= 0)
        p = float(min(1.0, 2 * other))
    return {"n": len(d), "diff": round(mean, 4), "diff_ci": [round(float(lo), 4), round(float(hi), 4)],
            "p": round(p, 4)}


def compare(dirs: Sequence[str | Path], n_boot: int = N_BOOT, seed: int = 0) -> dict[str, Any]:
    """{"runs": [{dir, label, summary}], "tests": [{run, baseline, group, metric, n, diff, diff_ci, p}]}."""
    from prosfi.eval.evaluate import read_records, read_summary

    if len(dirs) < 2:
        raise ValueError("compare needs at least two evaluation folders")
    runs, tables, notes = [], [], []
    for i, d in enumerate(dirs):
        summary = read_summary(d)
        label = summary.get("label") or summary.get("model") or Path(d).name
        if any(r["label"] == label for r in runs):
            label = f"{label} ({Path(d).name})"
        summary["label"] = label
        runs.append({"dir": str(d), "label": label, "summary": summary})
        skipped: list = []
        tables.append(per_problem(read_records(d, skipped)))
        if skipped:
            from prosfi.jsonl import skipped_note

            notes.append(skipped_note(str(Path(d) / "completions.jsonl"), skipped))
    base = tables[0]
    tests = []
    for run, table in zip(runs[1:], tables[1:]):
        shared = [pid for pid in base if pid in table and table[pid]["group"] == base[pid]["group"]]
        if not shared:
            notes.append(f"{run['dir']} shares no problem with the baseline {runs[0]['dir']}: no paired test "
                         "(evaluate both on the same --data and --data-seed)")
        groups: dict[Any, list[str]] = defaultdict(list)
        for pid in shared:
            groups[base[pid]["group"]].append(pid)
        for group, pids in [(None, shared)] + sorted(groups.items(), key=lambda kv: (kv[0][0], str(kv[0][1]))):
            for metric in COMPARED:
                a = np.array([base[p][metric] for p in pids])
                b = np.array([table[p][metric] for p in pids])
                res = paired_bootstrap(a, b, n_boot, seed)
                tests.append({"run": run["label"], "baseline": runs[0]["label"],
                              "source": None if group is None else group[0],
                              "difficulty": None if group is None else group[1], "metric": metric, **res})
    return {"runs": runs, "tests": tests, "n_boot": n_boot, "notes": notes}


def _pct(v: float | None) -> str:
    return "–" if v is None else f"{100 * v:.1f}"


def to_markdown(result: dict[str, Any]) -> str:
    runs = result["runs"]
    labels = [r["label"] for r in runs]
    out = ["# prosfi eval compare", "", "Baseline: " + labels[0] + ". Rates in %.", ""]
    keys: list[tuple] = []
    for r in runs:
        for g in r["summary"].get("groups", []):
            if (g["source"], g["difficulty"]) not in keys:
                keys.append((g["source"], g["difficulty"]))
    heads = ["source", "difficulty"] + [f"{m} · {lab}" for m in COMPARED for lab in labels]
    out += ["| " + " | ".join(heads) + " |", "|" + "---|" * len(heads)]
    for key in keys + [("**overall**", "")]:
        cells = [str(key[0]), "" if key[1] is None else str(key[1])]
        for m in COMPARED:
            for r in runs:
                if key[0] == "**overall**":
                    g = r["summary"].get("overall", {})
                else:
                    g = next((x for x in r["summary"].get("groups", []) if (x["source"], x["difficulty"]) == key), {})
                cells.append(_pct(g.get(m)))
        out.append("| " + " | ".join(cells) + " |")
    out += ["", "## Paired bootstrap on shared problems (run − baseline)", "",
            "| run | group | metric | shared problems | difference | 95% interval | p |", "|---|---|---|---|---|---|---|"]
    for t in result["tests"]:
        group = "overall" if t["source"] is None else f"{t['source']} {t['difficulty'] or ''}".strip()
        ci = "–" if t["diff_ci"] is None else f"[{100 * t['diff_ci'][0]:+.1f}, {100 * t['diff_ci'][1]:+.1f}]"
        diff = "–" if t["diff"] is None else f"{100 * t['diff']:+.1f}"
        n_boot = result.get("n_boot", N_BOOT)
        if t["p"] is None:
            p = "–"
        else:  # a p of 0 means no resample crossed zero: below the bootstrap's resolution
            p = (f"< {1 / n_boot:g}" if t["p"] == 0 else f"{t['p']:.3f}") + (" *" if t["p"] < 0.05 else "")
        out.append(f"| {t['run']} | {group} | {t['metric']} | {t['n']} | {diff} | {ci} | {p} |")
    out += ["", "`*`: p < 0.05 (two-sided paired bootstrap over problems)."]
    return "\n".join(out) + "\n"


def run_compare(dirs: Sequence[str], output: str | None = None, n_boot: int | None = None, plots: bool = True,
                wandb: bool = False, overwrite: bool = False) -> int:
    """The `prosfi eval compare` command: prints the table; writes compare.{json,md} and plots to output."""
    from prosfi.usage import one_line, output_folder

    try:
        if n_boot is not None and n_boot < 1:
            raise ValueError(f"--bootstrap {n_boot}: give at least 1 resample")
        out = output_folder(output or Path("runs") / "eval" / "compare", create=False, overwrite=overwrite)
        result = compare(dirs, n_boot=N_BOOT if n_boot is None else n_boot)
        out = output_folder(out, overwrite=True)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise UsageError(one_line(exc), command="eval compare") from None
    for note in result.get("notes", []):
        print(f"[prosfi eval compare] warning: {note}", file=sys.stderr)
    text = to_markdown(result)
    if plots:
        from prosfi.eval.plots import plot_summaries

        try:
            plot_summaries([r["summary"] for r in result["runs"]], out)
        except (KeyError, TypeError, ValueError) as exc:  # a summary.json edited by hand or from elsewhere
            print(f"[prosfi eval compare] warning: no plots ({one_line(exc)})", file=sys.stderr)
    slim = {"runs": [{"dir": r["dir"], "label": r["label"], "overall": r["summary"].get("overall"),
                      "groups": r["summary"].get("groups")} for r in result["runs"]], "tests": result["tests"],
            "n_boot": result["n_boot"]}
    (out / "compare.json").write_text(json.dumps(slim, indent=2) + "\n", encoding="utf-8")
    (out / "compare.md").write_text(text, encoding="utf-8")
    if wandb:
        from prosfi.eval.wandb_log import log_compare

        log_compare(slim, out)
    print(f"[prosfi eval compare] wrote {out}/compare.md, compare.json" + (", plots" if plots else ""),
          file=sys.stderr)
    print(text)  # after the files and wandb: `… | head` must not cost them
    return 0


__all__ = ["N_BOOT", "compare", "paired_bootstrap", "run_compare", "to_markdown"]
