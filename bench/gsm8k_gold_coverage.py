"""GSM8K gold-trace coverage: how many records of a GSM8K JSONL file get a gold trace, and why the rest do not
(issue #25's "gold traces for at least 90 % of the records whose annotations all hold"). Not a test.

    python bench/gsm8k_gold_coverage.py PATH [--limit N] [--dump OUT.jsonl] [--show CLASS]

PATH is a GSM8K JSONL file the user supplies (e.g. grade_school_math/data/test.jsonl; the data is not
shipped). Prints:

- records: non-empty lines in the file, and those `prosfi.data.gsm8k.load_gsm8k` loads (the rest skipped
  with a reason: bad JSON, no `#### N`);
- annotation-valid: loaded records that have at least one calculator annotation `<<lhs=rhs>>` and whose every
  annotation holds arithmetically: each `lhs` (normalised by `gsm8k.normalise`: `x` for `*`, `$`, commas and
  unit words dropped, `N%` as N/100) evaluates exactly to the `rhs` within 1 % of it, rounding as GSM8K's
  calculator does (an annotation that does not parse as arithmetic does not hold). This is the issue's
  denominator (1,301 on the full test split in the issue's counting);
- gold traces built (`prosfi data gsm8k` = `load_gsm8k`, which keeps a chain only when the quantity domain's
  own rules give it the top reward), and of those, how many score 1.0 through `prosfi.rewards.score_batch`
  with the rendered gold completion (the path `prosfi data gold` + `prosfi score` takes);
- coverage: gold traces at 1.0 over the annotation-valid records (and over all loaded records);
- the refusal classes (`gsm8k.issue_class` of `extra["gold_issue"]`) with counts, over all loaded records
  and over the annotation-valid ones.

`--dump` writes one line per record (id, gold or issue, steps) for hand checks; `--show CLASS` prints the
issues of that class.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from fractions import Fraction
from pathlib import Path


def annotations_hold(solution: str) -> bool | None:
    """True when the solution has annotations and every one holds; False when one does not; None when it has
    none. A `lhs` that is no plain arithmetic (after `normalise`) does not hold."""
    from prosfi.data.gsm8k import _ANNOTATION, literal_value, normalise, parse_number

    found = False
    for m in _ANNOTATION.finditer(solution):
        body = m.group(1)
        found = True
        if "=" not in body:
            return False
        lhs, _, rhs = body.rpartition("=")
        value, norm = parse_number(rhs), normalise(lhs)
        if value is None or norm is None:
            return False
        got = literal_value(norm[0])
        if got is None:
            return False
        if got != value and abs(got - value) > max(abs(value) * Fraction(1, 100), Fraction(1, 100)):
            return False
    return True if found else None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("path", type=Path, help="a GSM8K JSONL file (question, answer with <<a=b>> and #### N)")
    ap.add_argument("--limit", type=int, default=None, help="only the first N loadable records")
    ap.add_argument("--dump", type=Path, default=None, help="write one JSON line per record here")
    ap.add_argument("--show", default=None, help="print every issue of this refusal class")
    args = ap.parse_args(argv)

    import prosfi.domains.quantity  # noqa: F401  (registers the chain rules gold chains are built under)
    from prosfi.data.gsm8k import LoadReport, issue_class, load_gsm8k
    from prosfi.data.quant_gold import gold_completion
    from prosfi.rewards import score_batch
    from prosfi.verify.config import VerifierConfig
    from prosfi.verify.verifier import Verifier

    lines = sum(1 for ln in args.path.read_text(encoding="utf-8", errors="replace").splitlines() if ln.strip())
    t0 = time.perf_counter()
    report = LoadReport()
    problems = load_gsm8k(args.path, limit=args.limit, report=report)
    built = [p for p in problems if "gold_steps" in p.extra]
    with Verifier(VerifierConfig(workers=0)) as v:
        results = score_batch(built, [gold_completion(p) for p in built], v)
    top = {p.id for p, r in zip(built, results) if r.reward == 1.0}
    elapsed = time.perf_counter() - t0

    valid = {p.id for p in problems if annotations_hold(str(p.extra.get("solution", ""))) is True}
    no_ann = sum(1 for p in problems if annotations_hold(str(p.extra.get("solution", ""))) is None)
    classes, classes_valid = Counter(), Counter()
    for p in problems:
        if "gold_steps" in p.extra:
            continue
        cls = issue_class(str(p.extra.get("gold_issue", "unknown")))
        classes[cls] += 1
        if p.id in valid:
            classes_valid[cls] += 1
        if args.show and cls == args.show:
            print(f"{p.id}: {p.extra.get('gold_issue')}")

    def pct(a: int, b: int) -> str:
        return f"{100 * a / b:.1f} %" if b else "-"

    top_valid = len(top & valid)
    print(f"file: {args.path} ({lines} non-empty lines)")
    print(f"records loaded:                 {len(problems)} ({len(report.skipped)} skipped: "
          f"{'; '.join(why for _, why in report.skipped[:3])}{' ...' if len(report.skipped) > 3 else ''})")
    print(f"annotation-valid records:       {len(valid)} (every <<lhs=rhs>> holds; {no_ann} without annotations, "
          f"{len(problems) - len(valid) - no_ann} with one that does not hold)")
    print(f"gold traces built:              {len(built)}")
    print(f"gold traces scoring 1.0:        {len(top)} of {len(built)}")
    print(f"coverage (1.0, annotation-valid): {top_valid} of {len(valid)} = {pct(top_valid, len(valid))}")
    print(f"coverage (1.0, all loaded):       {len(top)} of {len(problems)} = {pct(len(top), len(problems))}")
    print("refusal classes (all loaded / annotation-valid):")
    for cls, n in classes.most_common():
        print(f"  {cls:<24} {n:>5} {classes_valid[cls]:>5}")
    print(f"({elapsed:.1f} s)")
    if args.dump:
        with open(args.dump, "w", encoding="utf-8") as fh:
            for p in problems:
                fh.write(json.dumps({"id": p.id, "valid": p.id in valid, "top": p.id in top,
                                     "issue": p.extra.get("gold_issue"), "steps": p.extra.get("gold_steps"),
                                     "givens": [(g["id"], g["value"], g["unit"], g["text"]) for g in p.givens],
                                     "question": p.question, "solution": p.extra.get("solution"),
                                     "answer": p.answer}, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
