"""FoVer labels for solutions written in GSM8K's own style: each `<<expr=value>>` annotation is a step.

A GSM8K-style solution is free text with calculator annotations and a final `#### N` or `A: N`. Each
annotation becomes a quantity step `{"id": "sK", "expr", "value", "unit"}`: its literals are mapped to the
problem's givens or to earlier annotations' results where the numbers match (Q2's reading of the annotations,
`prosfi.data.gsm8k` and `prosfi.data.quant_gold`, so a gold chain and a labelled solution read the same
text the same way), and the verifier (`prosfi.quant.check_quantity`) labels it: `True` = the step is
symbolically valid (its stated value is what its expression computes, with no dimension error on the way).

Validity is not groundedness. A separate per-step `grounded` flag with its reason records operand
provenance: a literal that is neither a given, an earlier result nor a listed constant
(`prosfi.quant.grounding`) is an invented number; the step can still be arithmetically valid. That gap
(executable but ungrounded, or valid but the wrong principle) is what a groundedness PRM has to learn.

Exports: TRL stepwise (`prompt`, `completions`, `labels`), FoVer (`solution_steps`, `error_labels`, True =
correct) and ProcessBench (`steps`, `label` = index of the first wrong step, -1 when none).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

from prosfi.data.problem import Problem

_ANNOTATION = re.compile(r"<<([^<>]*)>>")
_A_LINE = re.compile(r"^\s*A:\s*(.+?)\s*$", re.MULTILINE)
_MAX_COMBOS = 64
_MAX_LINE = 2000
_LONG_DIGITS = re.compile(r"\d{101,}")


def final_answer(text: str) -> Fraction | None:
    """The solution's final answer: `#### N` (GSM8K's gold) or `A: N` (its example model solutions)."""
    from prosfi.data.gsm8k import final_answer as hash_answer
    from prosfi.data.gsm8k import parse_number

    got = hash_answer(text)
    if got is not None:
        return got
    m = None
    for m in _A_LINE.finditer(text):
        pass
    return None if m is None else parse_number(m.group(1).split()[0] if m.group(1).split() else "")


@dataclass
class AnnotatedStep:
    """One annotation read as a step, with its verdict and its operand provenance."""

    step: dict[str, Any]          # {"id", "expr", "value", "unit"}: the step as a policy would write it
    annotation: str               # the annotation's text between << and >>
    verdict: str                  # valid | invalid | error | unknown (the verifier's)
    detail: str                   # the verifier's reason ("" when valid)
    grounded: bool
    grounded_reason: str          # "" when grounded; else which number has no provenance


def _claim_like(value: Fraction, computed):
    """The stated number as a value of the computed one's dimension and display unit: an annotation states
    no unit, so unit trouble shows only as a dimension error inside the expression (`$12 + 5 packs`)."""
    from prosfi.quant import Value
    from prosfi.quant.units import unit_info

    if computed is None:
        return Value(value)
    info = unit_info(computed.unit) if computed.unit else None
    mag = value if info is None else value * info.scale + info.offset
    return Value(mag, computed.dims, computed.unit)


def _text_results(solution: str) -> list[tuple[int, Fraction]]:
    """(line, result) of the plain-text equations the solution states without an annotation
    (`$50 - $33 = $17`): a later literal equal to one of them has that provenance."""
    from prosfi.data.gsm8k import equations

    # the text readers' regexes are quadratic in a digit run's length: numbers past the verifier's bound
    # (100 digits) and very long lines are not read as text results
    lines = ["" if len(ln) > _MAX_LINE else _LONG_DIGITS.sub("#", ln) for ln in solution.splitlines()]
    return [(e.line, e.result) for e in equations("\n".join(lines)) if e.origin == "text"]


def _near(a: Fraction, b: Fraction, rel: float = 1e-9) -> bool:
    return a == b or abs(float(a) - float(b)) <= rel * max(abs(float(a)), abs(float(b)), 1e-12)


def read_steps(problem: Problem, solution: str) -> list[AnnotatedStep]:
    """Every annotation of `solution`, in order, as a labelled step (nothing is skipped: an annotation the
    grammar cannot read is a step with verdict `error`)."""
    import itertools

    from prosfi.data.gsm8k import normalise, parse_number
    from prosfi.data.quant_gold import _Chain, _percent_rewrite, _render, _tokens
    from prosfi.quant import QuantError, check_quantity, evaluate, parse_expr

    chain = _Chain(problem)
    texts = _text_results(solution)
    out: list[AnnotatedStep] = []
    for m in _ANNOTATION.finditer(solution):
        body = m.group(1)
        line = solution.count("\n", 0, m.start())
        sid = f"s{len(out) + 1}"
        if len(body) > _MAX_LINE or _LONG_DIGITS.search(body):
            step = {"id": sid, "expr": body[:80], "value": "", "unit": ""}
            out.append(AnnotatedStep(step, body[:_MAX_LINE], "unknown", "bound: a number of more than 100 digits "
                                     "or an annotation of more than 2000 characters", False, "not read: too large"))
            continue
        lhs, eq, rhs = body.rpartition("=")
        value = parse_number(rhs) if eq else None
        norm = normalise(lhs) if eq else None
        tokens = _tokens(norm[0]) if norm is not None else None
        if value is None or tokens is None:
            why = "no '=' in the annotation" if not eq else (
                f"result {rhs.strip()!r} is not a number" if value is None else
                f"{lhs.strip()!r} is not arithmetic over numbers")
            step = {"id": sid, "expr": lhs.strip() if eq else body.strip(), "value": rhs.strip(), "unit": ""}
            out.append(AnnotatedStep(step, body, "error", why, False, f"not read: {why}"))
            continue
        tokens = _percent_rewrite(tokens, chain)
        slots = [i for i, t in enumerate(tokens) if t[0] == "num"]
        options = []
        for i in slots:
            lit = Fraction(tokens[i][1])
            refs = list(dict.fromkeys(chain.candidates(lit)))
            # None: the literal stays a literal; a number that matches a given or an earlier result stands for
            # it unless it is also a listed constant (the gold reader's convention), so `5 + 3` with 3 = $3
            # is a unit error, while 2 in `$2 + 9` may be the plain number 2
            options.append(refs + ([None] if lit in chain.constants or not refs else []))
        # every reading gives the same number (a ref stands for a value equal to the literal); readings differ
        # only in units, so take the first one free of dimension errors, else the first one
        picked, first = None, None
        for combo in itertools.islice(itertools.product(*options), _MAX_COMBOS):
            cand = list(tokens)
            for i, pick in zip(slots, combo):
                if pick is not None:
                    cand[i] = ("ref", pick)
            first = first or cand
            try:
                evaluate(parse_expr(_render(cand)), {k: chain.value_of(k) for kind, k in cand if kind == "ref"})
            except QuantError:
                continue
            picked = cand
            break
        grounded_tokens = picked or first or tokens
        expr = _render(grounded_tokens)
        env = {k: chain.value_of(k) for kind, k in grounded_tokens if kind == "ref"}
        try:
            computed = evaluate(parse_expr(expr), env)
        except QuantError:
            computed = None
        claim = _claim_like(value, computed)
        unit = claim.unit
        verdict = check_quantity(env, expr=expr, claim=claim)
        free = [t[1] for t in grounded_tokens if t[0] == "num" and Fraction(t[1]) not in chain.constants
                and not any(ln <= line and _near(r, Fraction(t[1])) for ln, r in texts)]
        reason = "" if not free else (
            f"invented number {free[0]}: neither a given, an earlier result nor a listed constant")
        step = {"id": sid, "expr": expr, "value": _json_number(value), "unit": unit}
        out.append(AnnotatedStep(step, body, verdict.status.value if hasattr(verdict.status, "value")
                                 else str(verdict.status), verdict.detail or "", not free, reason))
        # later literals may cite this result as stated (its claim, right or wrong)
        # (a float `shown` lets 99 cite a stated 99.00000000000001; exact values still compare exactly)
        chain.steps.append({"key": sid, "tokens": grounded_tokens, "value": claim,
                            "shown": value if value.denominator == 1 else float(value)})
    return out


def _json_number(x: Fraction) -> int | float:
    return x.numerator if x.denominator == 1 else float(x)


def label_solution(problem: Problem, completion: str, **provenance: Any) -> dict[str, Any]:
    """The labelled record of one GSM8K-style solution (see the module docstring for the keys)."""
    from prosfi.domains import domain_for
    from prosfi.prm.format import step_text

    error = None
    try:
        steps = read_steps(problem, completion)
    except (ValueError, ArithmeticError, RecursionError, MemoryError) as exc:  # a bad solution costs its record
        steps, error = [], f"{type(exc).__name__}: {exc}"[:300]
    labels = [s.verdict == "valid" for s in steps]
    answer = final_answer(completion)
    gold = None
    if isinstance(problem.answer, dict):
        from prosfi.data.gsm8k import parse_number

        gold = parse_number(str(problem.answer.get("value", "")))
    first_error = next((i for i, ok in enumerate(labels) if not ok), None)
    return {
        "problem_id": problem.id,
        "completion": completion,
        "prompt": domain_for(problem).user_prompt(problem),
        "steps": [s.step for s in steps],
        "completions": [step_text(s.step) for s in steps],
        "labels": labels,
        "verdicts": [s.verdict for s in steps],
        "details": [s.detail for s in steps],
        "annotations": [s.annotation for s in steps],
        "grounded": [s.grounded for s in steps],
        "grounded_reasons": [s.grounded_reason for s in steps],
        "first_error": first_error,
        "answer": None if answer is None else _json_number(answer),
        "answer_correct": None if answer is None or gold is None else answer == gold,
        **({"read_error": error} if error else {}),
        **provenance,
    }


# ------------------------------------------------------------------ exports
def fover_record(rec: dict[str, Any]) -> dict[str, Any]:
    """FoVer's format: `solution_steps` (text), `error_labels` (True = correct)."""
    return {"problem_id": rec["problem_id"], "problem": rec["prompt"], "solution_steps": list(rec["completions"]),
            "error_labels": [bool(x) for x in rec["labels"]]}


def processbench_record(rec: dict[str, Any]) -> dict[str, Any]:
    """ProcessBench's format: `steps`, `label` = index of the first wrong step (-1 when none)."""
    first = next((i for i, ok in enumerate(rec["labels"]) if not ok), -1)
    return {"id": rec["problem_id"], "problem": rec["prompt"], "steps": list(rec["completions"]), "label": first,
            "final_answer_correct": rec.get("answer_correct")}


def score_record(rec: dict[str, Any], sample: int) -> dict[str, Any]:
    """A `prosfi prm score`-style record for `prosfi prm rerank --scores`: the symbolic judge's step scores
    (1.0 = valid and grounded, 0.0 otherwise) stand in for a PRM's, so Best-of-K by min / mean / last /
    product, majority vote, random and oracle run on GSM8K-style solutions with no model at all."""
    return {"problem_id": rec["problem_id"], "sample": sample, "source": "gsm8k", "difficulty": None,
            "model": rec.get("model"), "format_ok": rec["answer"] is not None, "answer": rec["answer"],
            "answer_correct": bool(rec.get("answer_correct")), "chain_valid": bool(rec["labels"]) and all(rec["labels"]),
            "reward": 1.0 if rec.get("answer_correct") and rec["labels"] and all(rec["labels"]) else 0.0,
            "step_scores": [1.0 if ok and g else 0.0 for ok, g in zip(rec["labels"], rec["grounded"])]}


def score_records(records: Sequence[dict[str, Any]], seed: int = 0) -> list[dict[str, Any]]:
    """`score_record` for every candidate solution (GSM8K's own `ground_truth`, the answer key, left out).
    Sample numbers are a seeded shuffle within each problem: `rerank` breaks ties by sample number, and the
    file's order (6B models first) would otherwise decide them."""
    import random

    by_problem: dict[str, list[dict[str, Any]]] = {}
    for r in records:
        if r.get("model") != "ground_truth":
            by_problem.setdefault(r["problem_id"], []).append(r)
    out = []
    for pid, recs in by_problem.items():
        order = list(range(len(recs)))
        random.Random(f"{seed}:{pid}").shuffle(order)
        out += [score_record(r, k) for r, k in zip(recs, order)]
    return out


# ------------------------------------------------------------------ completion files
def _norm_question(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


@dataclass
class ReadReport:
    lines: int = 0
    solutions: int = 0
    unmatched: int = 0  # solutions whose question is not one of --data's problems
    bad: list[str] = field(default_factory=list)


def read_completions(path: str | Path, problems: dict[str, Problem], report: ReadReport | None = None,
                     ) -> list[dict[str, Any]]:
    """`{"problem_id", "completion"}` items from either completion file format (one may mix them):

    - plain: `{"problem_id": ..., "completion": "...<<a*b=c>>c ... #### N"}` (extra keys are kept);
    - GSM8K's `example_model_solutions.jsonl`: `{"question", "ground_truth", "<model>": {"is_correct",
      "solution"}, ...}`, matched to --data's problems by question text; one item per model solution
      (`model`, `is_correct` kept) and one for `ground_truth` (`model: "ground_truth"`).
    """
    report = report if report is not None else ReadReport()
    by_question = {_norm_question(p.question or ""): p.id for p in problems.values()}
    items: list[dict[str, Any]] = []
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            report.lines += 1
            try:
                data = json.loads(line)
            except json.JSONDecodeError as exc:
                report.bad.append(f"line {lineno}: not valid JSON ({exc.msg})")
                continue
            if not isinstance(data, dict):
                report.bad.append(f"line {lineno}: not a JSON object")
                continue
            if "completion" in data and "problem_id" in data:
                if not isinstance(data["completion"], str):
                    report.bad.append(f"line {lineno}: 'completion' is not text")
                    continue
                report.solutions += 1
                items.append(dict(data, problem_id=str(data["problem_id"])))
                continue
            if not isinstance(data.get("question"), str):
                report.bad.append(f"line {lineno}: neither {{problem_id, completion}} nor a GSM8K question record")
                continue
            pid = by_question.get(_norm_question(data["question"]))
            sols = [("ground_truth", data["ground_truth"], True)] if isinstance(data.get("ground_truth"), str) else []
            sols += [(k, v["solution"], v.get("is_correct")) for k, v in data.items()
                     if isinstance(v, dict) and isinstance(v.get("solution"), str)]
            report.solutions += len(sols)
            if pid is None:
                report.unmatched += len(sols)
                continue
            for model, text, ok in sols:
                items.append({"problem_id": pid, "completion": text, "model": model, "is_correct": ok})
    return items


def label_items(problems: dict[str, Problem], items: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Labelled records for completion items of known problems (items of unknown problems are left out)."""
    out = []
    for index, item in enumerate(items):
        problem = problems.get(item["problem_id"])
        if problem is None:
            continue
        extra = {k: v for k, v in item.items() if k not in ("problem_id", "completion")}
        out.append(label_solution(problem, item["completion"], completion_index=index, **extra))
    return out


# ------------------------------------------------------------------ measurements
def solution_level(records: Sequence[dict[str, Any]], judge: str = "verifier") -> dict[str, Any]:
    """Solution-level ProcessBench-style F1 against the final answer's correctness (`is_correct`, else
    `answer_correct`): an erroneous solution (wrong answer) counts as caught when the judge flags a step, a
    correct one when it flags none; F1 = harmonic mean of the two accuracies. Judges: `verifier` (a step is
    not valid), `verifier+grounding` (not valid, or not grounded). Without human step labels the first-error
    index cannot be checked here; this is the part of ProcessBench's F1 that final answers can check."""
    err = err_hit = ok = ok_hit = 0
    wrong_all_valid = 0
    for r in records:
        truth = r.get("is_correct")
        truth = r.get("answer_correct") if truth is None else truth
        if truth is None or not r["labels"]:
            continue
        flags = [not v for v in r["labels"]]
        if judge == "verifier+grounding":
            flags = [f or not g for f, g in zip(flags, r["grounded"])]
        flagged = any(flags)
        if truth:
            ok += 1
            ok_hit += not flagged
        else:
            err += 1
            err_hit += flagged
            wrong_all_valid += all(r["labels"])
    acc_err = err_hit / err if err else None
    acc_ok = ok_hit / ok if ok else None
    f1 = None if acc_err is None or acc_ok is None else (
        2 * acc_err * acc_ok / (acc_err + acc_ok) if acc_err + acc_ok else 0.0)
    return {"judge": judge, "wrong_answer_solutions": err, "right_answer_solutions": ok,
            "accuracy_erroneous": acc_err, "accuracy_correct": acc_ok, "f1": f1,
            "wrong_answer_all_steps_valid": wrong_all_valid,
            "wrong_answer_all_steps_valid_fraction": wrong_all_valid / err if err else None}


__all__ = ["AnnotatedStep", "ReadReport", "final_answer", "fover_record", "label_items", "label_solution",
           "processbench_record", "read_completions", "read_steps", "score_record", "score_records", "solution_level"]
