"""The paper's table in miniature: the PRoSFI reward against the outcome reward, from the same warm-up.

The PRoSFI claim is comparative: an outcome reward (1.0 for a right answer, steps never checked) keeps or
raises accuracy but cannot see sloppy chains, so reward hit (a right answer by a fully verified chain, the
soundness proxy) does not rise; the process reward raises reward hit and keeps accuracy. With a run per
(reward, seed), each evaluated on the same held-out problems before and after GRPO, this module judges each
run and each reward pooled over seeds with `verdict.judge` (paired per problem, 95 % bootstrap intervals,
"kept" = lower bound not below -2 points), adds the head-to-head difference prosfi minus outcome after GRPO
(paired by seed and problem), and says whether the expected shape shows. Every word of that line is computed
from the intervals: if the tiny model cannot show the shape, the table says so.

A policy that gives one answer to (nearly) every problem (`prosfi.eval.answers`: >= 95 %) learnt nothing about
the problems, whatever its accuracy: a run whose policy answers so after GRPO fails its verdict, the table marks
it and gives the majority-answer baseline next to accuracy, and the shape is not shown (issue #36).

The functions on run summaries (`compare`, `table`) are pure; a run summary is
`{"before": {problem_id: {"accuracy": x, "reward_hit": y}}, "after": {...}}`, optionally with
`"answers": {"before": spread, "after": spread}` (`load_run` reads one from a run folder's `eval_before/` and
`eval_after/`). `python -m prosfi.train.comparison --prosfi DIR... --outcome DIR...`
prints the table and writes it (text, JSON, PNG); `launch/demo_ablation.sh` runs the runs and calls it.
"""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from prosfi.train.verdict import KEPT_MARGIN, METRICS, judge, run_answers

REWARDS = ("outcome", "prosfi")  # baseline first, as in the paper's table
Summary = Mapping[str, Mapping[str, Mapping[str, float]]]


def load_run(run_dir: str | Path) -> dict[str, dict[str, dict[str, float]]]:
    """A run folder's held-out evaluations as a run summary (ValueError when one is missing)."""
    from prosfi.eval.compare import per_problem
    from prosfi.eval.evaluate import read_records

    run = Path(run_dir)
    out = {}
    for stage in ("before", "after"):
        folder = run / f"eval_{stage}"
        if not (folder / "completions.jsonl").is_file():
            raise ValueError(f"{run}: no eval_{stage}/completions.jsonl (a run with eval_held_out > 0 that finished)")
        out[stage] = {pid: {m: row[m] for m in METRICS} for pid, row in per_problem(read_records(folder)).items()}
    out["answers"] = run_answers(run)
    return out


def _paired(before: Mapping[str, Mapping[str, float]], after: Mapping[str, Mapping[str, float]]
            ) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    shared = sorted(set(before) & set(after))
    if not shared:
        raise ValueError("no held-out problem is in both evaluations")
    return {m: (np.array([before[p][m] for p in shared], float), np.array([after[p][m] for p in shared], float))
            for m in METRICS}


def _concat(parts: Sequence[dict[str, tuple[np.ndarray, np.ndarray]]]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    return {m: (np.concatenate([p[m][0] for p in parts]), np.concatenate([p[m][1] for p in parts])) for m in METRICS}


def compare(runs: Mapping[str, Mapping[str, Summary]], n_boot: int = 10_000) -> dict[str, Any]:
    """`runs`: reward ("prosfi", "outcome") -> seed label -> run summary. Per reward: each seed's and the
    pooled verdict (before -> after). Head to head: prosfi's after minus outcome's after, paired by seed
    and problem, pooled over the seeds both rewards ran. Then the expected shape, computed."""
    missing = [r for r in REWARDS if not runs.get(r)]
    if missing:
        raise ValueError(f"no runs for {', '.join(missing)}")
    out: dict[str, Any] = {"kept_margin": KEPT_MARGIN, "rewards": {}}
    for reward in REWARDS:
        per_seed = {seed: _paired(s["before"], s["after"]) for seed, s in runs[reward].items()}
        answers = {seed: s.get("answers") for seed, s in runs[reward].items()}
        out["rewards"][reward] = {"runs": {seed: judge(v, n_boot, answers=[answers[seed]])
                                           for seed, v in per_seed.items()},
                                  "pooled": judge(_concat(list(per_seed.values())), n_boot,
                                                  answers=list(answers.values()))}
    seeds = [s for s in runs["prosfi"] if s in runs["outcome"]]
    if seeds:
        # outcome's after as "before", prosfi's after as "after": the change is prosfi minus outcome
        parts = [_paired(runs["outcome"][s]["after"], runs["prosfi"][s]["after"]) for s in seeds]
        h2h = judge(_concat(parts), n_boot)
        out["head_to_head"] = {"seeds": seeds, **{m: h2h[m] for m in METRICS}}
    out["shape"] = shape(out)
    return out


def _lo(v: dict[str, Any], metric: str) -> float:
    return v[metric]["diff_ci"][0]


def shape(result: Mapping[str, Any]) -> dict[str, Any]:
    """Whether the pooled figures show the expected shape, part by part, each part a plain sentence."""
    outc, pro = result["rewards"]["outcome"]["pooled"], result["rewards"]["prosfi"]["pooled"]
    margin = f"-{100 * KEPT_MARGIN:.0f} points"
    parts = {
        "outcome keeps accuracy": (outc["accuracy_kept"],
                                   f"outcome accuracy change lower bound {_pts(_lo(outc, 'accuracy'))} vs {margin}"),
        "outcome does not raise reward hit": (not outc["soundness_up"],
                                              (f"outcome reward-hit change lower bound {_pts(_lo(outc, 'reward_hit'))}"
                                              " vs 0")),
        "prosfi raises reward hit": (pro["soundness_up"],
                                     f"prosfi reward-hit change lower bound {_pts(_lo(pro, 'reward_hit'))} vs 0"),
        "prosfi keeps accuracy": (pro["accuracy_kept"],
                                  f"prosfi accuracy change lower bound {_pts(_lo(pro, 'accuracy'))} vs {margin}"),
    }
    constant = {r: result["rewards"][r]["pooled"].get("constant_after", 0) for r in REWARDS}
    parts["every policy reads the problems after GRPO"] = (
        not any(constant.values()),
        "runs whose policy gives one answer to >= 95 % of the problems after GRPO: "
        + ", ".join(f"{r} {n}" for r, n in constant.items()))
    h2h = result.get("head_to_head")
    if h2h:
        parts["prosfi beats outcome on reward hit after GRPO"] = (
            _lo(h2h, "reward_hit") > 0, f"prosfi - outcome reward hit lower bound {_pts(_lo(h2h, 'reward_hit'))} vs 0")
    shows = all(ok for ok, _ in parts.values())
    failed = [name for name, (ok, _) in parts.items() if not ok]
    line = ("expected shape: SHOWN (" + "; ".join(name for name in parts) + ")" if shows else
            "expected shape: NOT shown: " + "; ".join(f"{name}: no ({parts[name][1]})" for name in failed))
    return {"parts": {name: {"ok": bool(ok), "why": why} for name, (ok, why) in parts.items()},
            "shows": bool(shows), "line": line}


def _pts(v: float) -> str:
    return f"{100 * v:+.1f}"


def _cell(m: Mapping[str, Any]) -> str:
    lo, hi = m["diff_ci"]
    return f"{m['before']:.3f} -> {m['after']:.3f}  {_pts(m['diff'])} [{_pts(lo)}, {_pts(hi)}]"


def table(result: Mapping[str, Any]) -> str:
    """The table, plain text: one row per (reward, seed) and per reward pooled, the head-to-head row, the
    shape line."""
    width = 40
    lines = [(f"{'reward':<9}{'run':<10}{'n':>5}  {'accuracy: before -> after  change [95% CI]':<{width + 6}}"
             f"{'reward hit: before -> after  change':<{width + 6}}verdict")]
    for reward in REWARDS:
        block = result["rewards"][reward]
        for seed, v in [*block["runs"].items(), ("pooled", block["pooled"])]:
            mark = ("hit up" if v["soundness_up"] else "hit NOT up") + ", " + \
                ("acc kept" if v["accuracy_kept"] else "acc NOT kept") + \
                (", CONSTANT answers after GRPO" if v.get("constant_after") else "")
            lines.append(f"{reward:<9}{Path(seed).name:<10}{v['accuracy']['n']:>5}  {_cell(v['accuracy']):<{width + 6}}"
                         f"{_cell(v['reward_hit']):<{width + 6}}{mark}")
    lines += _answer_lines(result)
    h2h = result.get("head_to_head")
    if h2h:
        def diff(m):
            lo, hi = m["diff_ci"]
            return f"{_pts(m['diff'])} [{_pts(lo)}, {_pts(hi)}] points"

        lines.append(f"prosfi - outcome after GRPO (paired, {h2h['accuracy']['n']} problem-runs over "
                     f"{len(h2h['seeds'])} seed(s)): accuracy {diff(h2h['accuracy'])}, "
                     f"reward hit {diff(h2h['reward_hit'])}")
    lines.append(result["shape"]["line"])
    return "\n".join(lines)


def _answer_lines(result: Mapping[str, Any]) -> list[str]:
    """Per run: the most frequent answer's share before -> after GRPO, next to the majority-answer baseline (the
    accuracy of always giving the most frequent right answer)."""
    from prosfi.eval.answers import CONSTANT_SHARE, spread_cell

    cells = []
    for reward in REWARDS:
        for seed, v in result["rewards"][reward]["runs"].items():
            for a in v.get("answers") or []:
                base = (a.get("before") or a.get("after") or {}).get("majority_baseline")
                cells.append(f"{reward} {Path(seed).name}: {spread_cell(a.get('before'))} -> "
                             f"{spread_cell(a.get('after'))}" + ("" if base is None else f", baseline {base:.3f}"))
    if not cells:
        return []
    head = (f"most frequent answer's share of the problems, before -> after GRPO (CONSTANT: >= "
            f"{100 * CONSTANT_SHARE:.0f} %), and the majority-answer baseline accuracy:")
    return [head, *(f"  {c}" for c in cells)]


def plot(result: Mapping[str, Any], path: str | Path) -> Path:
    """Two panels (accuracy, reward hit): pooled before and after per reward, the after bar's error bar the
    95 % paired interval of the change (placed at before + change), each seed's after value as a dot."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(8, 3.4), sharey=True)
    for ax, metric in zip(axes, ("accuracy", "reward_hit")):
        for i, reward in enumerate(REWARDS):
            v = result["rewards"][reward]["pooled"][metric]
            lo, hi = v["diff_ci"]
            ax.bar(i - 0.18, v["before"], 0.36, color="#bbbbbb", label="before GRPO" if i == 0 else None)
            ax.bar(i + 0.18, v["after"], 0.36, color="#3b75af" if reward == "prosfi" else "#e08a2c",
                   yerr=[[v["after"] - (v["before"] + lo)], [(v["before"] + hi) - v["after"]]], capsize=4,
                   label="after GRPO" if i == 0 else None)
            seeds = [s[metric]["after"] for s in result["rewards"][reward]["runs"].values()]
            ax.plot([i + 0.18] * len(seeds), seeds, "k.", ms=5)
        ax.set_xticks(range(len(REWARDS)), [f"{r} reward" for r in REWARDS])
        ax.set_title(metric.replace("_", " ") + " (held-out)")
        ax.set_ylim(0, 1.05)
    axes[0].legend(loc="lower left", fontsize=8)
    failed = [name for name, part in result["shape"]["parts"].items() if not part["ok"]]
    title = "expected shape: shown" if result["shape"]["shows"] else "expected shape NOT shown: " + "; ".join(failed)
    fig.suptitle(textwrap.fill(title, 110), fontsize=8)
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _label(run_dir: str, seen: set[str]) -> str:
    """A run's seed label: the folder name's trailing `-s<seed>` / `s<seed>` part, else the folder name."""
    name = Path(run_dir).name
    label = name.rsplit("-", 1)[-1] if "-s" in name else name
    while label in seen:
        label += "'"
    seen.add(label)
    return label


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m prosfi.train.comparison",
                                     description="prosfi vs outcome reward on held-out problems, per seed and pooled")
    parser.add_argument("--prosfi", nargs="+", required=True, help="run folders with the prosfi reward")
    parser.add_argument("--outcome", nargs="+", required=True,
                        help="run folders with the outcome reward (same warm-ups and seeds, same order)")
    parser.add_argument("--out", default=None, help="write comparison.txt, comparison.json, comparison.png here")
    args = parser.parse_args(argv)
    runs: dict[str, dict[str, Any]] = {}
    try:
        for reward, dirs in (("prosfi", args.prosfi), ("outcome", args.outcome)):
            seen: set[str] = set()
            runs[reward] = {_label(d, seen): load_run(d) for d in dirs}
        result = compare(runs)
    except ValueError as e:
        print(f"comparison: {e}", file=sys.stderr)
        return 2
    text = table(result)
    print(text)
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "comparison.txt").write_text(text + "\n", encoding="utf-8")
        (out / "comparison.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
        plot(result, out / "comparison.png")
        print(f"wrote {out}/comparison.txt, comparison.json, comparison.png")
    return 0 if result["shape"]["shows"] else 1


if __name__ == "__main__":
    sys.exit(main())
