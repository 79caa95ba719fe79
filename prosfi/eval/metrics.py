"""Evaluation metrics from scored records, with 95% bootstrap intervals.

A record is one scored completion (`prosfi.eval.scoring.score_generations` writes them):
`{"problem_id", "sample", "source", "difficulty", "mode", "format_ok", "answer", "answer_correct", "tokens",
["judge_sound"]}` and the columns of the completion format that scored it (the record's `mode` selects it:
`prosfi.rewards.formats.format_of`): the steps format's `chain_valid`, `n_steps`, `verified_steps`,
`unknown_steps`; the direct-Lean format's `proof_verified`, `proof_unknown`.

Every metric is a ratio of sums over problems (numerator / denominator), so the interval resamples
problems, not completions (the n samples of one problem are not independent):

- accuracy        right answers / completions
- format_rate     completions in the format their prompt asked for / completions
- reward_hit      verified reasoning (the format's `hit_record`: the steps format's fully verified chain, the
                  direct-Lean format's accepted proof) and right answer / completions
- the format's own metrics (`CompletionFormat.eval_columns`), e.g. the steps format's
  step_validity   verified steps / steps (all completions' steps together)
  unknown_rate    steps the provers could not decide (unknown) / steps
  mean_steps      steps / completions
  and the direct-Lean format's proof_verified_rate and proof_unknown_rate (docs/lean.md)
- mean_tokens     completion tokens / completions that report them
- judge_soundness chains the LLM judge called sound / judged completions (only when a judge ran)
- each domain's step rates (`Domain.eval_columns`, e.g. quantity's dimension_error_rate and
  grounding_failure_rate): its record column / `guarded_steps` (the steps of the domains that report
  rates); only where such steps exist. They follow judge_soundness, in registry order.
- with n > 1 samples per problem: pass@k (unbiased estimator, Chen et al. 2021) and maj@k (majority
  answer of the first k samples is right), per problem, averaged over problems.

`summarize(records) -> {"overall": metrics, "groups": [{"source", "difficulty", **metrics}]}` is the
`summary.json` contract's metric part; rates are fractions in [0, 1] with `<name>_ci: [lo, hi]`.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from math import comb
from typing import Any

import numpy as np

RATES = ("accuracy", "format_rate", "reward_hit")  # every format's; its own (`eval_columns`) follow them
MEANS = ("mean_tokens",)
# metric -> (numerator column, denominator column) of the per-problem table: the formats' metrics go between
# reward_hit and mean_tokens (`HEAD` and `TAIL`), the domains' rates last
HEAD: dict[str, tuple[str, str]] = {
    "accuracy": ("correct", "n"),
    "format_rate": ("format", "n"),
    "reward_hit": ("hit", "n"),
}
TAIL: dict[str, tuple[str, str]] = {
    "mean_tokens": ("tokens", "n_tokens"),
    "judge_soundness": ("sound", "judged"),
}
RATIOS = {**HEAD, **TAIL}
OPTIONAL = ("judge_soundness",)  # left out where undefined (so is every domain rate)
COLUMNS = ("n", "correct", "format", "hit", "tokens", "n_tokens", "sound", "judged", "guarded")
GUARDED = "guarded_steps"  # the record column of the steps a domain's rates are over (`Domain.eval_columns`)


def formats_of(records: Sequence[dict[str, Any]]) -> dict[Any, Any]:
    """record `mode` -> the completion format that scored it (`format_of`), in first-seen order."""
    from prosfi.rewards.formats import format_of

    out: dict[Any, Any] = {}
    for r in records:
        mode = r.get("mode")
        if mode not in out:
            out[mode] = format_of(mode)
    return out


def format_columns(formats: Iterable[Any]) -> tuple:
    """The `FormatColumn`s of `formats`, one per metric, in order (a steps run: step_validity, ...)."""
    seen: dict[str, Any] = {}
    for fmt in formats:
        for column in fmt.eval_columns:
            seen.setdefault(column.metric, column)
    return tuple(seen.values())


def is_hit(record: dict[str, Any], fmt: Any = None) -> bool:
    """A reward hit: a right answer whose reasoning the format's checker verified (`hit_record`)."""
    if fmt is None:
        from prosfi.rewards.formats import format_of

        fmt = format_of(record.get("mode"))
    return bool(record.get(fmt.hit_record)) and bool(record.get("answer_correct"))


def domain_columns(records: Sequence[dict[str, Any]]) -> tuple:
    """The registered domains' eval columns when some record carries domain rates (`guarded_steps`), else
    none (a run of domains without rates loads no other domain)."""
    if not any(GUARDED in r for r in records):
        return ()
    from prosfi.domains import eval_columns

    return eval_columns()


def domain_metrics(keys: Iterable[str]) -> dict[str, Any]:
    """metric -> EvalColumn of the domain rates among `keys` (a summary's metric names), in registry order."""
    from prosfi.rewards.formats import STEP_COLUMNS

    # a steps run's keys are all known: the domains are loaded only where some other key remains
    known = set(RATIOS) | {c.metric for c in STEP_COLUMNS} | {"n", "n_problems"}
    rest = {k for k in keys if k not in known and not k.endswith("_ci") and not k.startswith(("pass@", "maj@"))}
    if not rest:
        return {}
    from prosfi.domains import eval_columns

    return {c.metric: c for c in eval_columns() if c.metric in rest}


def ks_for(n: int) -> list[int]:
    """The k of pass@k / maj@k reported for n samples: 1, powers of two below n, and n."""
    if n <= 1:
        return []
    ks = {1, n}
    k = 2
    while k < n:
        ks.add(k)
        k *= 2
    return sorted(ks)


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k for n samples of which c are right (1 - C(n-c, k) / C(n, k))."""
    if k > n:
        raise ValueError(f"pass@{k} needs at least {k} samples, got {n}")
    if n - c < k:
        return 1.0
    return 1.0 - comb(n - c, k) / comb(n, k)


def maj_at_k(samples: Sequence[tuple[str | None, bool]], k: int) -> float:
    """1.0 when the most frequent answer among the first k samples (answers in the format; ties go to
    the answer seen first) is right, else 0.0. `samples`: (answer, answer_correct) in sample order."""
    first = [(a, ok) for a, ok in samples[:k] if a is not None]
    if not first:
        return 0.0
    votes = Counter(a for a, _ in first)
    best = max(votes.values())
    winner = next(a for a, _ in first if votes[a] == best)
    return 1.0 if any(ok for a, ok in first if a == winner) else 0.0


class ProblemTable:
    """Per-problem sums of the columns in COLUMNS, of the completion formats' record columns and of the domains'
    rate columns (one row per problem, in first-seen order). `ratios`: metric -> (numerator, denominator)
    column: HEAD's, the formats' metrics (`CompletionFormat.eval_columns`), TAIL's, the domains' rates last."""

    def __init__(self, records: Iterable[dict[str, Any]]):
        records = list(records)
        formats = formats_of(records)
        own = format_columns(formats.values() or [_default_format()])
        fields = tuple(dict.fromkeys(f for c in own for f in (c.record, c.per) if f))
        extra = domain_columns(records)
        self.columns = (COLUMNS + tuple(f"format:{f}" for f in fields)
                        + tuple(f"domain:{c.record}" for c in extra))
        self.ratios = {**HEAD, **{c.metric: (f"format:{c.record}", f"format:{c.per}" if c.per else "n") for c in own},
                       **TAIL, **{c.metric: (f"domain:{c.record}", "guarded") for c in extra}}
        self.optional = OPTIONAL + tuple(c.metric for c in extra)
        rows: dict[str, list[float]] = {}
        samples: dict[str, list[tuple[int, str | None, bool]]] = defaultdict(list)
        groups: dict[str, tuple[str, str | None]] = {}
        for r in records:
            pid = str(r["problem_id"])
            row = rows.get(pid)
            if row is None:
                row = rows[pid] = [0.0] * len(self.columns)
                d = r.get("difficulty")
                groups[pid] = (str(r.get("source") or "problems"), None if d is None else str(d))
            tokens = r.get("tokens")
            judged = r.get("judge_sound")
            vals = (1, bool(r.get("answer_correct")), bool(r.get("format_ok")), is_hit(r, formats[r.get("mode")]),
                    tokens if isinstance(tokens, (int, float)) else 0, isinstance(tokens, (int, float)),
                    judged is True, judged is not None, int(r.get(GUARDED) or 0),
                    *(_count(r.get(f)) for f in fields), *(int(r.get(c.record) or 0) for c in extra))
            for i, v in enumerate(vals):
                row[i] += float(v)
            answer = r.get("answer") if r.get("format_ok") else None
            samples[pid].append((int(r.get("sample") or 0), answer, bool(r.get("answer_correct"))))
        self.ids = list(rows)
        self.data = np.array([rows[i] for i in self.ids], dtype=float).reshape(len(self.ids), len(self.columns))
        self.samples = {pid: [(a, ok) for _, a, ok in sorted(s, key=lambda t: t[0])] for pid, s in samples.items()}
        self.groups = [groups[pid] for pid in self.ids]  # (source, difficulty) of each problem
        self._per_problem: dict[str, np.ndarray] = {}

    def col(self, name: str) -> np.ndarray:
        return self.data[:, self.columns.index(name)]

    def per_problem(self, metric: str) -> np.ndarray:
        """Per-problem values of a pass@k / maj@k metric (NaN where a problem has fewer than k samples)."""
        if metric in self._per_problem:
            return self._per_problem[metric]
        kind, k = metric.split("@")
        k = int(k)
        out = self._per_problem[metric] = np.full(len(self.ids), np.nan)
        for i, pid in enumerate(self.ids):
            s = self.samples[pid]
            if len(s) >= k:
                out[i] = (pass_at_k(len(s), sum(ok for _, ok in s), k) if kind == "pass" else maj_at_k(s, k))
        return out


def _default_format() -> Any:
    from prosfi.rewards.formats import format_of

    return format_of(None)


def _count(value: Any) -> float:
    """A record column as a number: a bool or a count (anything else is 0)."""
    return float(value) if isinstance(value, (bool, int, float)) else 0.0


def _ratio(num: np.ndarray, den: np.ndarray) -> float | None:
    d = den.sum()
    return None if d == 0 else float(num.sum() / d)


def bootstrap_ci(num: np.ndarray, den: np.ndarray, rng: np.random.Generator, n_boot: int = 1000,
                 level: float = 0.95, idx: np.ndarray | None = None) -> list[float] | None:
    """Percentile interval of sum(num)/sum(den) over problems resampled with replacement."""
    if len(num) == 0 or den.sum() == 0:
        return None
    if idx is None:
        idx = rng.integers(0, len(num), size=(n_boot, len(num)))
    nums, dens = num[idx].sum(axis=1), den[idx].sum(axis=1)
    ok = dens > 0
    if not ok.any():
        return None
    vals = nums[ok] / dens[ok]
    a = (1 - level) / 2
    lo, hi = np.quantile(vals, [a, 1 - a])
    return [round(float(lo), 4), round(float(hi), 4)]


def metrics(records: Sequence[dict[str, Any]], n_boot: int = 1000, seed: int = 0) -> dict[str, Any]:
    """The metrics object of summary.json for one set of records (a group, or all of them)."""
    table = ProblemTable(records)
    return table_metrics(table, np.arange(len(table.ids)), n_boot, seed)


def table_metrics(table: ProblemTable, rows: np.ndarray, n_boot: int = 1000, seed: int = 0) -> dict[str, Any]:
    """Metrics over the problems `rows` (indices into the table)."""
    rng = np.random.default_rng(seed)
    data = table.data[rows]
    out: dict[str, Any] = {"n": int(data[:, table.columns.index("n")].sum()), "n_problems": len(rows)}
    idx = rng.integers(0, len(rows), size=(n_boot, len(rows))) if len(rows) else None
    for name, (num_c, den_c) in table.ratios.items():
        num, den = data[:, table.columns.index(num_c)], data[:, table.columns.index(den_c)]
        if name in table.optional and den.sum() == 0:
            continue
        value = _ratio(num, den)
        out[name] = None if value is None else round(value, 4)
        out[f"{name}_ci"] = bootstrap_ci(num, den, rng, n_boot, idx=idx)
    n_samples = min((len(table.samples[table.ids[i]]) for i in rows), default=0)
    for k in ks_for(n_samples):
        for kind in ("pass", "maj"):
            vals = table.per_problem(f"{kind}@{k}")[rows]
            out[f"{kind}@{k}"] = round(float(np.nanmean(vals)), 4)
            out[f"{kind}@{k}_ci"] = bootstrap_ci(vals, np.ones_like(vals), rng, n_boot, idx=idx)
    return out


def difficulty_order(d: str | None) -> tuple:
    levels = {"easy": 0, "medium": 1, "hard": 2, "extra": 3}
    if d is None:
        return (2, 0, "")
    if d.isdigit():
        return (0, int(d), "")
    return (1, levels.get(d, 99), d)


def summarize(records: Sequence[dict[str, Any]], n_boot: int = 1000, seed: int = 0) -> dict[str, Any]:
    """`{"overall": metrics, "groups": [{"source", "difficulty", **metrics}, ...]}`; groups are
    (record["source"], record["difficulty"]) sorted by source then difficulty (numbers, then
    easy < medium < hard < extra). One per-problem table serves every group."""
    table = ProblemTable(records)
    members: dict[tuple[str, str | None], list[int]] = defaultdict(list)
    for i, g in enumerate(table.groups):
        members[g].append(i)
    out_groups = []
    for (source, difficulty) in sorted(members, key=lambda g: (g[0], difficulty_order(g[1]))):
        rows = np.array(members[(source, difficulty)], dtype=int)
        out_groups.append({"source": source, "difficulty": difficulty, **table_metrics(table, rows, n_boot, seed)})
    return {"overall": table_metrics(table, np.arange(len(table.ids)), n_boot, seed), "groups": out_groups}


__all__ = ["COLUMNS", "GUARDED", "HEAD", "MEANS", "OPTIONAL", "RATES", "RATIOS", "TAIL", "ProblemTable",
           "bootstrap_ci", "domain_columns", "domain_metrics", "format_columns", "formats_of", "is_hit", "ks_for",
           "maj_at_k", "metrics", "pass_at_k", "summarize", "table_metrics"]
