"""PNG plots of one or more summaries: accuracy and reward hit against difficulty (K&K: number of
people), one panel per source, one line per model, 95% intervals as error bars. matplotlib, Agg backend
(no display needed)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from prosfi.data.sources import level_name

PLOTTED = (("accuracy", "answer accuracy", "accuracy (%)"),
           ("reward_hit", "reward hit (verified chain + right answer)", "reward hit (%)"))


def domain_plots(summaries: Sequence[dict[str, Any]]) -> tuple[tuple[str, str, str], ...]:
    """(metric, title, y label) of each domain rate (`Domain.eval_columns`) some summary reports."""
    from prosfi.eval.metrics import domain_metrics

    keys = [k for s in summaries for k, v in s.get("overall", {}).items() if v is not None]
    return tuple((m, f"{c.heading} (steps)", f"{c.heading} (% of steps)") for m, c in domain_metrics(keys).items())


def _hit_titled(summaries: Sequence[dict[str, Any]]) -> tuple[tuple[str, str, str], ...]:
    """PLOTTED, with reward hit's title saying what the summaries' completion format verifies (one format:
    a direct-Lean run's hit is an accepted proof, not a verified chain)."""
    from prosfi.rewards.formats import format_of

    formats = {format_of(s.get("reward_mode")).name: format_of(s.get("reward_mode")) for s in summaries}
    if len(formats) != 1:
        return PLOTTED
    (fmt,) = formats.values()
    return tuple((k, f"reward hit ({fmt.hit_means})" if k == "reward_hit" else t, y) for k, t, y in PLOTTED)


def _label(summary: dict[str, Any], i: int) -> str:
    return str(summary.get("label") or summary.get("model") or f"run {i + 1}")


def _sort_key(d: str | None) -> tuple:
    from prosfi.eval.metrics import difficulty_order

    return difficulty_order(d)


def plot_summaries(summaries: Sequence[dict[str, Any]], out_dir: str | Path,
                   metrics: Sequence[tuple[str, str, str]] | None = None) -> list[Path]:
    """One PNG per metric (`accuracy.png`, `reward_hit.png`, and one per domain rate that some summary
    reports, e.g. quantity's `dimension_error_rate.png`, `grounding_failure_rate.png`) in out_dir; returns
    their paths."""
    if metrics is None:
        metrics = _hit_titled(summaries) + domain_plots(summaries)
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    sources: list[str] = []
    for s in summaries:
        for g in s.get("groups", []):
            if g["source"] not in sources:
                sources.append(g["source"])
    paths = []
    for key, title, ylabel in metrics:
        fig, axes = plt.subplots(1, max(1, len(sources)), figsize=(4.2 * max(1, len(sources)), 3.6),
                                 squeeze=False)
        for ax, source in zip(axes[0], sources or ["(none)"]):
            diffs = sorted({g["difficulty"] for s in summaries for g in s.get("groups", [])
                            if g["source"] == source}, key=_sort_key)
            xs = list(range(len(diffs)))
            for i, s in enumerate(summaries):
                by_d = {g["difficulty"]: g for g in s.get("groups", []) if g["source"] == source}
                pts = [(x, by_d[d]) for x, d in zip(xs, diffs) if d in by_d and by_d[d].get(key) is not None]
                if not pts:
                    continue
                ys = [100 * g[key] for _, g in pts]
                cis = [g.get(f"{key}_ci") or [g[key], g[key]] for _, g in pts]
                err = [[y - 100 * c[0] for y, c in zip(ys, cis)], [100 * c[1] - y for y, c in zip(ys, cis)]]
                shift = (i - (len(summaries) - 1) / 2) * 0.08  # runs side by side, not on top of each other
                ax.errorbar([x + shift for x, _ in pts], ys, yerr=err, marker="o", capsize=3, label=_label(s, i))
            ax.set_xlim(-0.5, len(xs) - 0.5)
            ax.set_xticks(xs)
            ax.set_xticklabels(["all" if d is None else str(d) for d in diffs])
            ax.set_xlabel(level_name(source))
            ax.set_ylim(-2, 102)
            ax.set_title(source)
            ax.grid(alpha=0.3)
        axes[0][0].set_ylabel(ylabel)
        handles, labels = axes[0][0].get_legend_handles_labels()
        if labels:
            fig.legend(handles, labels, loc="lower center", ncol=min(4, len(labels)), frameon=False)
            fig.subplots_adjust(bottom=0.28)
        fig.suptitle(title, y=1.03)
        path = out / f"{key}.png"
        fig.savefig(path, dpi=110, bbox_inches="tight")
        plt.close(fig)
        paths.append(path)
    return paths


__all__ = ["PLOTTED", "domain_plots", "plot_summaries"]
