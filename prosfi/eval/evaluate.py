"""`evaluate`: problems -> completions -> scored records -> summary (+ files in an output folder).

The one function behind `prosfi eval`, the training callback and the demo's before/after report:

    from prosfi.eval import evaluate, load_sources, generate_hf
    sources = load_sources(["kk:2..4"], count=20)
    result = evaluate(sources, lambda ps: generate_hf(ps, "runs/tiny-model"), out_dir="runs/eval/base")
    result.summary["overall"]["reward_hit"]

Outputs in `out_dir` (when given): completions.jsonl (one scored record per completion),
summary.json (the contract in `prosfi.eval.metrics` / docs/eval.md), summary.md, and PNG plots.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from prosfi import jsonl
from prosfi.data.problem import Problem
from prosfi.eval.generate import Generation, Generator
from prosfi.eval.sources import Source

log = logging.getLogger(__name__)


@dataclass
class EvalResult:
    summary: dict[str, Any]
    records: list[dict[str, Any]] = field(default_factory=list)
    out_dir: Path | None = None


def _as_sources(items: Sequence[Source] | Sequence[Problem]) -> list[Source]:
    if items and isinstance(items[0], Problem):
        return [Source("problems", "problems", list(items))]  # type: ignore[arg-type]
    return list(items)  # type: ignore[arg-type]


def evaluate(sources: Sequence[Source] | Sequence[Problem],
             generations: Sequence[Generation] | Generator,
             *, verifier=None, verifier_config=None, reward_config=None, chain_config=None,
             out_dir: str | Path | None = None, model: str | None = None, judge=None,
             n_boot: int = 1000, seed: int = 0, plots: bool = True, progress: bool = False,
             notes: Sequence[str] = (), extra: dict[str, Any] | None = None) -> EvalResult:
    """Evaluate completions on problems and return (and write) the summary.

    sources: `Source`s from `load_sources` (or plain problems: one group per problem.source/difficulty).
    generations: a list of `Generation`s (e.g. `read_completions`), or a callable problems -> generations
      (`lambda ps: generate_hf(ps, model, tok, cfg)`); generations for problems not in `sources` are
      reported as unknown and left out of the metrics.
    verifier: a `prosfi.verify.Verifier` (kept open); else one is built from `verifier_config` (default
      `VerifierConfig(workers=1)`) and closed here.
    judge: an optional `prosfi.eval.judge.Judge`; its verdicts add `judge_soundness`.
    Returns EvalResult(summary, records, out_dir); summary follows the summary.json contract:
    {"overall", "groups", "n_problems", "n_completions", "model", "judge", ...}.
    """
    from prosfi.eval.metrics import summarize
    from prosfi.eval.scoring import score_generations

    srcs = _as_sources(sources)
    problems = [p for s in srcs for p in s.problems]
    by_id = {p.id: p for p in problems}
    gens = list(generations(problems) if callable(generations) else generations)
    own = verifier is None
    if own:
        from prosfi.verify.config import VerifierConfig
        from prosfi.verify.verifier import Verifier

        verifier = Verifier(verifier_config or VerifierConfig(workers=1))
    try:
        records = score_generations(by_id, gens, verifier, reward_config, chain_config, progress=progress)
    finally:
        if own:
            verifier.close()
    if judge is not None:
        judge.annotate(records, by_id)
    scored = [r for r in records if r.get("source") is not None]
    unknown = len(records) - len(scored)
    summary = summarize(scored, n_boot=n_boot, seed=seed)
    all_notes = list(notes)
    if unknown:
        from prosfi.data.problem import unknown_ids_note

        scored_ids = {id(r) for r in scored}
        strangers = [str(r.get("problem_id")) for r in records if id(r) not in scored_ids]
        all_notes.append(f"{unknown} completions name a problem id not among the evaluated problems "
                         f"(left out of the metrics): {unknown_ids_note(strangers, by_id)}")
    missing = len(problems) - len({r["problem_id"] for r in scored})
    if missing:
        all_notes.append(f"{missing} problems have no completion (left out of the metrics)")
    failures = getattr(judge, "failures", None)
    if failures:
        all_notes.append(f"{len(failures)} judge requests failed after their retries (left out of judge_soundness; "
                         f"first: {failures[0][:300]})")
    for s in srcs:
        all_notes += s.notes
    mode = getattr(reward_config, "mode", "prosfi")
    from prosfi.rewards.formats import format_for

    all_notes += format_for(mode).eval_notes(scored)  # e.g. proofs Lean could not check here
    from prosfi.eval.answers import answer_spread, constant_line

    answers = answer_spread(scored)
    constant = constant_line(answers, "the model", summary["overall"].get("accuracy"))
    if constant:
        all_notes.insert(0, constant)
    vcfg = getattr(verifier, "config", None)
    summary.update(
        n_problems=len({r["problem_id"] for r in scored}),
        n_completions=len(scored),
        model=model,
        judge=getattr(judge, "name", None),
        reward_mode=mode,
        verifier=",".join(getattr(vcfg, "backends", ()) or ()) or None,
        sources=[{"spec": s.spec, "name": s.name, "problems": len(s.problems), "skipped": len(s.skipped),
                  "skipped_reasons": [f"{i}: {r}" for i, r in s.skipped[:20]], "notes": s.notes[:50]}
                 for s in srcs],
        notes=all_notes,
        answers=answers,
        **(extra or {}),
    )
    out = Path(out_dir) if out_dir else None
    if out is not None:
        write_outputs(out, summary, records, plots=plots)
    return EvalResult(summary, records, out)


def evaluate_checkpoint(model_path: str | Path, specs: Sequence[str], *, count: int = 20, limit: int | None = None,
                        settings=None, config=None, out_dir: str | Path | None = None, label: str | None = None,
                        verifier=None, verifier_config=None, device: str | None = None, **kwargs: Any) -> EvalResult:
    """One call for a local checkpoint: `--data` specs -> transformers generation -> `evaluate`.

    `settings`: PromptSettings (e.g. `prosfi.eval.cli.prompt_settings(recipe)`), `config`: GenerationConfig;
    other keyword arguments go to `evaluate`. Used by demos for before/after numbers."""
    from prosfi.eval.generate import generate_hf, load_hf
    from prosfi.eval.sources import load_sources

    sources = load_sources(list(specs), count=count, limit=limit)

    def generate(problems):
        model, tok = load_hf(str(model_path), device)
        return generate_hf(problems, model, tok, config, settings, progress=kwargs.get("progress", False))

    return evaluate(sources, generate, verifier=verifier, verifier_config=verifier_config, out_dir=out_dir,
                    model=label or str(model_path), **kwargs)


def write_outputs(out: Path, summary: dict[str, Any], records: Sequence[dict[str, Any]], plots: bool = True) -> None:
    """completions.jsonl, summary.json, summary.md and (optionally) the PNG plots in `out`."""
    from prosfi.eval.report import to_markdown

    out.mkdir(parents=True, exist_ok=True)
    with (out / "completions.jsonl").open("w", encoding="utf-8") as fh:
        for r in records:
            fh.write(jsonl.dumps(r) + "\n")  # standard JSON whatever the completion text holds
    if plots:
        try:
            from prosfi.eval.plots import plot_summaries

            summary["plots"] = [p.name for p in plot_summaries([summary], out)]
        except ImportError as exc:  # matplotlib is in the train extra
            log.warning("no plots: %s", exc)
    # backslashreplace: a lone surrogate (echoed from a bad record) becomes its JSON escape, not a crash
    (out / "summary.json").write_bytes((json.dumps(summary, indent=2, ensure_ascii=False) + "\n")
                                       .encode("utf-8", "backslashreplace"))
    (out / "summary.md").write_bytes(to_markdown(summary).encode("utf-8", "backslashreplace"))


def read_summary(directory: str | Path) -> dict[str, Any]:
    """summary.json of an evaluation folder; ValueError that says what is wrong with the folder."""
    path = Path(directory) / "summary.json"
    if not Path(directory).is_dir():
        raise ValueError(f"{directory}: no such folder (give folders written by `prosfi eval -o DIR`)")
    if not path.is_file():
        raise ValueError(f"{directory}: no summary.json (not a `prosfi eval -o DIR` output folder)")
    summary, why = jsonl.loads(path.read_bytes().decode("utf-8", "replace"))
    if why is not None or not isinstance(summary, dict):
        raise ValueError(f"{path}: not a prosfi eval summary ({why or 'not a JSON object'})")
    if not isinstance(summary.get("groups", []), list) or not isinstance(summary.get("overall", {}), dict):
        raise ValueError(f"{path}: not a prosfi eval summary (no 'overall' object / 'groups' list)")  # noqa: TRY004 - a usage error, one line
    summary["groups"] = [g for g in summary.get("groups", []) if isinstance(g, dict) and "source" in g]
    for g in summary["groups"]:
        g.setdefault("difficulty", None)
    return summary


def read_records(directory: str | Path, skipped: list | None = None) -> list[dict[str, Any]]:
    """The scored records of completions.jsonl (lines that are not records go to `skipped`)."""
    path = Path(directory) / "completions.jsonl"
    if not path.is_file():
        raise ValueError(f"{directory}: no completions.jsonl (not a `prosfi eval -o DIR` output folder)")
    rows, bad = jsonl.read_objects(str(path))
    out = []
    for lineno, rec in rows:
        if "problem_id" in rec:
            out.append(rec)
        else:
            bad.append((lineno, "no 'problem_id'"))
    if skipped is not None:
        skipped.extend(sorted(bad))
    return out


__all__ = ["EvalResult", "evaluate", "evaluate_checkpoint", "read_records", "read_summary", "write_outputs"]
