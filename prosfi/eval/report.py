"""`summary.md`: the paper-style table of a summary.json (one evaluation), as Markdown."""

from __future__ import annotations

from typing import Any

# every format's columns; the summary's format adds its own between them (`CompletionFormat.eval_columns`)
HEAD = (("accuracy", "accuracy"), ("reward_hit", "reward hit"), ("format_rate", "format"))
TAIL = (("mean_tokens", "tokens"),)


def summary_format(summary: dict[str, Any]) -> Any:
    """The completion format that scored the summary's records (its `reward_mode`)."""
    from prosfi.rewards.formats import format_of

    return format_of(summary.get("reward_mode"))


def columns(summary: dict[str, Any]) -> tuple[list[tuple[str, str]], set[str]]:
    """(metric, heading) of the table's fixed columns for this summary's format, and which are means
    (numbers, not percentages)."""
    own = summary_format(summary).eval_columns
    cols = [*HEAD, *((c.metric, c.heading) for c in own), *TAIL]
    return cols, {"mean_tokens"} | {c.metric for c in own if c.mean}


def pct(value: float | None, ci: list[float] | None = None, interval: bool = True) -> str:
    if value is None:
        return "–"
    text = f"{100 * value:.1f}"
    if interval and ci:
        text += f" [{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]"
    return text


def number(value: float | None) -> str:
    return "–" if value is None else f"{value:.1f}"


def _extra_columns(summary: dict[str, Any]) -> tuple[list[str], dict[str, str]]:
    """The optional columns the summary has (judge, the domains' rates: `Domain.eval_columns`, pass@k, maj@k),
    in its order, and their headings."""
    from prosfi.eval.metrics import OPTIONAL, domain_metrics

    o = summary.get("overall", {})
    heads = {m: c.heading for m, c in domain_metrics(o).items()}
    keys = [k for k in o if (k.startswith(("pass@", "maj@")) or k in OPTIONAL or k in heads) and not k.endswith("_ci")]
    return keys, heads


def cell(metrics: dict[str, Any], key: str, means: set[str] = frozenset({"mean_tokens"})) -> str:
    if key in means:
        return number(metrics.get(key))
    return pct(metrics.get(key), metrics.get(f"{key}_ci"))


def table(summary: dict[str, Any]) -> str:
    fixed, means = columns(summary)
    extra, extra_heads = _extra_columns(summary)
    heads = ["source", "difficulty", "n"] + [h for _, h in fixed] + [extra_heads.get(k, k) for k in extra]
    lines = ["| " + " | ".join(heads) + " |", "|" + "---|" * len(heads)]
    rows = [(g["source"], g["difficulty"], g) for g in summary.get("groups", [])]
    rows.append(("**overall**", "", summary.get("overall", {})))
    for source, difficulty, m in rows:
        cells = [str(source), "" if difficulty is None else str(difficulty), str(m.get("n", 0))]
        cells += [cell(m, key, means) for key, _ in fixed] + [cell(m, key, means) for key in extra]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def to_markdown(summary: dict[str, Any]) -> str:
    """The whole report: what was evaluated, the table (percentages with 95% intervals), notes."""
    out = [f"# prosfi eval: {summary.get('model') or 'completions'}", ""]
    out.append(f"{summary.get('n_problems', 0)} problems, {summary.get('n_completions', 0)} completions; "
               f"reward mode {summary.get('reward_mode', 'prosfi')}; verifier {summary.get('verifier', '?')}.")
    judge = summary.get("judge")
    out.append(f"LLM judge: {judge}." if judge else "LLM judge: not run (off by default; see --judge-endpoint).")
    out += ["", (f"Rates in %, with 95% bootstrap intervals over problems. reward hit = "
                 f"{summary_format(summary).hit_means}."), "", table(summary), ""]
    for src in summary.get("sources", []):
        if src.get("skipped"):
            out.append(f"- `{src['spec']}`: {src['skipped']} records skipped "
                       f"(first: {src['skipped_reasons'][0] if src.get('skipped_reasons') else '?'})")
    answers = summary.get("answers")
    if answers and answers.get("top_answer") is not None:
        baseline = answers.get("majority_baseline")
        out.append(f"Answers: {answers['top_answer']!r} on {100 * answers['top_share']:.1f} % of the problems"
                   + ("" if baseline is None else f"; majority-answer baseline {100 * baseline:.1f} % "
                      f"(always {answers['majority_answer']!r})")
                   + (" — a constant answerer." if answers.get("constant") else "."))
        out.append("")
    notes = summary.get("notes", [])
    for note in notes[:30]:
        out.append(f"- {note}")
    if len(notes) > 30:
        out.append(f"- ... and {len(notes) - 30} more notes in summary.json")
    return "\n".join(out).rstrip() + "\n"


__all__ = ["columns", "summary_format", "table", "to_markdown"]
