"""`prosfi data`: generate or load problems, write gold traces and TRL prompt rows.

    prosfi data kk --people 3 --count 100 --seed 0 -o kk3.jsonl
    prosfi data kk --hub --people 3 -o kk3_test.jsonl          (K-and-K/knights-and-knaves)
    prosfi data fol --difficulty hard --count 300 --seed 0 -o hard.jsonl
    prosfi data toy --depth 1 --layout fixed --count 200 --seed 5 -o toy.jsonl   (the CPU demo's rule chains)
    prosfi data proverqa --split hard -o pqa_hard.jsonl           (opendatalab/ProverQA)
    prosfi data gsm8k --file test.jsonl -o gsm8k_test.jsonl       (GSM8K's public JSONL)
    prosfi data physics --difficulty easy --count 100 --seed 0 -o phys.jsonl
    prosfi data gsm_symbolic --count 100 --seed 0 -o gsms.jsonl   (reasoning-gym templates)
    prosfi data scibench --file atkins.json -o sb.jsonl           (SciBench's public JSON)
    prosfi data gold problems.jsonl -o gold.jsonl [--sft]
    prosfi data prompts problems.jsonl -o rows.jsonl [--few-shot 1]
    prosfi data validate problems.jsonl
Generators are deterministic: the same arguments and seed write the same bytes.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Iterable, Iterator

from prosfi.data.problem import Problem, read_problems, write_problems


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="data_command", required=True,
                                metavar="{kk,fol,toy,proverqa,gsm8k,physics,gsm_symbolic,scibench,gold,prompts,validate}")

    p = sub.add_parser("kk", help="Knights & Knaves puzzles: generate (seeded) or load from the hub (--hub)")
    p.add_argument("--people", type=int, default=3, help="inhabitants per puzzle (2-8)")
    p.add_argument("--count", type=int, default=100, help="puzzles to generate")
    p.add_argument("--seed", type=int, default=0, help="random seed")
    p.add_argument("--depth", type=int, default=2, help="maximum nesting depth of a claim (1-3)")
    p.add_argument("--width", type=int, default=2, help="maximum operands of and/or (2-4)")
    p.add_argument("--hub", action="store_true", help="load K-and-K/knights-and-knaves instead of generating")
    p.add_argument("--split", default="test", choices=("test", "train"), help="hub split (with --hub)")
    p.add_argument("--file", help="a local copy of a hub JSONL file (with --hub)")
    p.add_argument("--limit", type=int, help="at most this many hub records")
    p.add_argument("-o", "--output", required=True, help="output JSONL ('-' for stdout)")

    p = sub.add_parser("fol", help="ProverQA-style problems from the offline generator")
    p.add_argument("--difficulty", default="hard", choices=("easy", "medium", "hard", "extra"),
                   help="reasoning depth: easy 1-2, medium 3-5, hard 6-9, extra 10-14")
    p.add_argument("--count", type=int, default=100, help="problems (labels True/False/Uncertain in turn)")
    p.add_argument("--seed", type=int, default=0, help="random seed")
    p.add_argument("--no-verify", action="store_true", help="skip confirming every label with the verifier")
    p.add_argument("--backends", default="z3", help="verifier backends for the label check")
    p.add_argument("-o", "--output", required=True, help="output JSONL ('-' for stdout)")

    p = sub.add_parser("toy", help="the CPU demo's toy rule chains (prosfi.data.toy), as a problems file")
    p.add_argument("--depth", default="1", help="rules per chain: a number or a range such as 1-3 (the demo: 1)")
    p.add_argument("--layout", default="fixed", choices=("fixed", "shuffled"),
                   help="fixed: fact h1, rules h2.., distractors after (the demo's toy_layout); shuffled: any order")
    p.add_argument("--count", type=int, default=100, help="problems (labels True/False in turn)")
    p.add_argument("--seed", type=int, default=0, help="random seed (the demo draws SFT, GRPO and held-out "
                   "problems from seeds of its own; another seed gives other problems)")
    p.add_argument("-o", "--output", required=True, help="output JSONL ('-' for stdout)")

    p = sub.add_parser("proverqa", help="ProverQA from the hub (opendatalab/ProverQA) or a local copy")
    p.add_argument("--split", default="hard", choices=("easy", "medium", "hard", "train"), help="dev split")
    p.add_argument("--file", help="a local copy of the split's JSON file instead of the hub")
    p.add_argument("--limit", type=int, help="at most this many records")
    p.add_argument("-o", "--output", required=True, help="output JSONL ('-' for stdout)")

    p = sub.add_parser("gsm8k", help="GSM8K in its public JSONL format -> quantity problems with gold chains")
    p.add_argument("--file", required=True, help="a GSM8K JSONL file (question, answer with <<expr=value>> and #### N)")
    p.add_argument("--limit", type=int, help="at most this many records")
    p.add_argument("-o", "--output", required=True, help="output JSONL ('-' for stdout)")

    p = sub.add_parser("physics", help="physics problems with units (kinematics, energy, circuits, gas law)")
    p.add_argument("--difficulty", default="easy", choices=("easy", "medium", "hard"),
                   help="chain length: easy 1-2 steps, medium 3-4, hard 5-6")
    p.add_argument("--count", type=int, default=100, help="problems to generate")
    p.add_argument("--seed", type=int, default=0, help="random seed")
    p.add_argument("-o", "--output", required=True, help="output JSONL ('-' for stdout)")

    p = sub.add_parser("gsm_symbolic", help="GSM-Symbolic templates through reasoning-gym (answers checked)")
    p.add_argument("--count", type=int, default=100, help="problems to generate")
    p.add_argument("--seed", type=int, default=0, help="random seed")
    p.add_argument("-o", "--output", required=True, help="output JSONL ('-' for stdout)")

    p = sub.add_parser("scibench", help="SciBench in its public JSON format (evaluation; no gold chains)")
    p.add_argument("--file", required=True, help="a SciBench JSON file (problem_text, answer_number, unit)")
    p.add_argument("--symbolic", choices=("skip", "coefficient"), default="skip",
                   help="records whose unit is a symbolic expression ($m l^2$): skip them (default), or grade the "
                        "number that multiplies it, as SciBench does (not unit-checked)")
    p.add_argument("--limit", type=int, help="at most this many records")
    p.add_argument("-o", "--output", required=True, help="output JSONL ('-' for stdout)")

    p = sub.add_parser("gold", help="gold completions ({problem_id, completion}) or SFT rows (--sft)")
    p.add_argument("problems", help="problems JSONL")
    p.add_argument("--sft", action="store_true", help="write SFT rows (prompt + completion messages)")
    p.add_argument("--few-shot", type=int, default=0, help="worked examples in SFT prompts")
    p.add_argument("--no-verify", action="store_true", help="do not re-check every step with the verifier")
    p.add_argument("--backends", default="z3", help="verifier backends for the step check")
    p.add_argument("-o", "--output", required=True, help="output JSONL ('-' for stdout)")

    p = sub.add_parser("prompts", help="TRL rows: prompt messages plus the problem column for rewards")
    p.add_argument("problems", help="problems JSONL")
    p.add_argument("--few-shot", type=int, default=0, help="worked examples before each problem")
    p.add_argument("--system-prompt-file", help="replace the built-in system prompt with this file's text")
    p.add_argument("-o", "--output", required=True, help="output JSONL ('-' for stdout)")

    p = sub.add_parser("validate", help="check a problems file: formulas parse, ids unique, answers fit")
    p.add_argument("problems", help="problems JSONL")


@contextlib.contextmanager
def _out(path: str) -> Iterator:
    if path == "-":
        yield sys.stdout
    else:
        with open(path, "w", encoding="utf-8") as fh:
            yield fh


def _write(problems: Iterable[Problem], path: str) -> int:
    if path != "-":
        return write_problems(problems, path)
    n = 0
    for p in problems:
        sys.stdout.write(json.dumps(p.to_dict(), ensure_ascii=False) + "\n")
        n += 1
    return n


def _write_rows(rows: Iterable[dict], path: str) -> int:
    n = 0
    with _out(path) as fh:
        for r in rows:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
            n += 1
    return n


def _verifier(backends: str):
    from prosfi.verify.config import VerifierConfig
    from prosfi.verify.verifier import Verifier

    return Verifier(VerifierConfig(backends=backends))


def _say(msg: str) -> None:
    print(msg, file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    import os

    bad = number_errors(args)
    if bad is not None:
        _say(f"prosfi data {args.data_command}: {bad}")
        return 2
    output = getattr(args, "output", None)
    if output and output != "-":  # before minutes of work, not after
        folder = os.path.dirname(output) or "."
        if not os.path.isdir(folder):
            _say(f"prosfi data {args.data_command}: cannot write {output}: no folder {folder} (create it first)")
            return 2
    try:
        return _COMMANDS[args.data_command](args)
    except ValueError as exc:
        _say(f"prosfi data {args.data_command}: {exc}")
        return 2
    except BrokenPipeError:  # `prosfi data kk -o - | head`: prosfi.cli exits quietly
        raise
    except OSError as exc:  # a missing input, an output folder that does not exist: say which
        what = f"{exc.strerror}: {exc.filename}" if exc.filename else str(exc)
        hint = " (check the path)" if isinstance(exc, FileNotFoundError) else ""
        _say(f"prosfi data {args.data_command}: {what}{hint}")
        return 2


def _kk(args) -> int:
    from prosfi.data import kk

    if args.hub or args.file:
        from prosfi.data.hub import HubUnavailable, read_records

        try:
            if args.file:
                records = read_records(args.file)[: args.limit]
                problems = [kk.problem_from_kk_record(r, pid=f"kk-{len(r['names'])}-{i:04d}")
                            for i, r in enumerate(records)]
            else:
                problems = kk.load_kk_hub(args.people, args.split, args.limit)
        except HubUnavailable as exc:
            _say(str(exc))
            return 1
    else:
        problems = kk.generate(kk.KKConfig(people=args.people, depth=args.depth, width=args.width),
                               args.count, args.seed)
    n = _write(problems, args.output)
    _say(f"wrote {n} Knights & Knaves problems to {args.output}")
    return 0


def _fol(args) -> int:
    from prosfi.data.labels import label_mismatches
    from prosfi.data.pqa_gen import FOLGenConfig, generate

    problems = generate(FOLGenConfig(difficulty=args.difficulty), args.count, args.seed)
    if not args.no_verify:
        with _verifier(args.backends) as v:
            bad = label_mismatches(problems, v)
        if bad:
            for pid, gold, got in bad[:10]:
                _say(f"{pid}: generated label {gold}, verifier says {got or 'nothing decisive'}")
            _say(f"{len(bad)} of {len(problems)} labels not confirmed; nothing written")
            return 1
        _say(f"all {len(problems)} labels confirmed by the verifier ({args.backends})")
    n = _write(problems, args.output)
    _say(f"wrote {n} ProverQA-style problems ({args.difficulty}) to {args.output}")
    return 0


def _toy(args) -> int:
    from prosfi.data.toy import ToyConfig, generate

    lo, _, hi = str(args.depth).partition("-")
    try:
        depths = (int(lo), int(hi or lo))
    except ValueError:
        raise ValueError(f"--depth: a number or a range such as 1-3, got {args.depth!r}") from None
    problems = generate(ToyConfig(min_depth=depths[0], max_depth=depths[1], layout=args.layout),
                        args.count, args.seed)
    n = _write(problems, args.output)
    _say(f"wrote {n} toy rule chains (depth {args.depth}, {args.layout} layout) to {args.output}")
    return 0


def _proverqa(args) -> int:
    from prosfi.data.hub import HubUnavailable
    from prosfi.data.proverqa import load_proverqa

    skipped: list = []
    try:
        problems = load_proverqa(args.split, path=args.file, limit=args.limit, skipped=skipped)
    except HubUnavailable as exc:
        _say(str(exc))
        return 1
    n = _write(problems, args.output)
    _say(f"wrote {n} ProverQA problems ({args.split}) to {args.output}")
    for index, reason in skipped[:10]:
        _say(f"skipped record {index}: {reason}")
    if skipped:
        _say(f"skipped {len(skipped)} record(s) that could not be formalised")
    return 0


def _report_skipped(skipped, what: str) -> None:
    for index, reason in skipped[:10]:
        _say(f"skipped record {index}: {reason}")
    if skipped:
        _say(f"skipped {len(skipped)} {what} record(s) that could not be converted")


def _nothing_read(path: str, what: str, fields: str, skipped) -> int:
    """Exit 2, nothing written, when a file held no usable record (an empty output file with exit 0 looked
    like success)."""
    why = f" ({len(skipped)} skipped; first: {skipped[0][0]}: {skipped[0][1]})" if skipped else ""
    _say(f"prosfi data: {path} holds no usable {what} record{why}; expected JSON lines with {fields}; nothing written")
    return 2


def number_errors(args: argparse.Namespace) -> str | None:
    """The one-line refusal of a count that cannot be meant (`--count -5`, `--few-shot -2`, `--limit 0`)."""
    for dest, least in (("count", 1), ("limit", 1), ("few_shot", 0), ("people", 2)):
        value = getattr(args, dest, None)
        if isinstance(value, int) and value < least:
            flag = "--" + dest.replace("_", "-")
            return f"{flag} must be at least {least}, got {value}"
    return None


def _gsm8k(args) -> int:
    import prosfi.domains.quantity  # noqa: F401  (gold chains are built under its rules)
    from prosfi.data.gsm8k import LoadReport, load_gsm8k

    report = LoadReport()
    problems = load_gsm8k(args.file, limit=args.limit, report=report)
    if not problems:
        return _nothing_read(args.file, "GSM8K", "question / answer with #### N", report.skipped)
    n = _write(problems, args.output)
    _say(f"wrote {n} GSM8K problems to {args.output} ({report.summary()})")
    _report_skipped(report.skipped, "GSM8K")
    return 0


def _physics(args) -> int:
    from prosfi.data.physics import generate

    n = _write(generate(args.difficulty, args.count, args.seed), args.output)
    _say(f"wrote {n} physics problems ({args.difficulty}) to {args.output}")
    return 0


def _gsm_symbolic(args) -> int:
    import prosfi.domains.quantity  # noqa: F401  (gold chains are built under its rules)
    from prosfi.data.gsm_symbolic import GymUnavailable, generate

    skipped: list = []
    try:
        problems = generate(args.count, args.seed, skipped=skipped)
    except GymUnavailable as exc:
        _say(str(exc))
        return 1
    n = _write(problems, args.output)
    with_gold = sum(1 for p in problems if p.extra.get("gold_steps"))
    _say(f"wrote {n} GSM-Symbolic problems to {args.output} ({with_gold} with a gold chain)")
    _report_skipped(skipped, "GSM-Symbolic")
    return 0


def _scibench(args) -> int:
    from prosfi.data.scibench import load_scibench

    skipped: list = []
    problems = load_scibench(args.file, limit=args.limit, skipped=skipped, symbolic=args.symbolic)
    if not problems:
        return _nothing_read(args.file, "SciBench", "problem_text / answer_number / unit", skipped)
    n = _write(problems, args.output)
    _say(f"wrote {n} SciBench problems to {args.output}")
    _report_skipped(skipped, "SciBench")
    return 0


def _gold(args) -> int:
    from prosfi.domains import domain_for
    from prosfi.domains.prompts import to_sft_row

    problems = list(read_problems(args.problems))
    found: list[tuple[Problem, str]] = []
    missing: list[str] = []
    skipped: list[tuple[str, str]] = []  # (problem id, why): a failure or a trace below the top reward
    ctx = contextlib.nullcontext(None) if args.no_verify else _verifier(args.backends)
    with ctx as verifier:
        for p in problems:
            try:
                text = domain_for(p).gold_completion(p, verifier)
            except Exception as exc:  # noqa: BLE001 - one bad problem never costs the others
                skipped.append((p.id, f"gold search failed: {exc!r}"[:200]))
                continue
            if text is None:
                missing.append(p.id)
            else:
                found.append((p, text))
        if verifier is not None and found:  # every trace written earns the top reward, or is not written
            from prosfi.rewards.config import RewardConfig
            from prosfi.rewards.score import score_batch

            top = RewardConfig().right_verified
            results = score_batch([p for p, _ in found], [t for _, t in found], verifier)
            kept = []
            for (p, text), r in zip(found, results):
                if r.reward == top:
                    kept.append((p, text))
                else:
                    skipped.append((p.id, f"gold trace scores {r.reward}: {r.reason}"[:200]))
            found = kept
    rows = [{"problem_id": p.id, **to_sft_row(p, text, few_shot=args.few_shot)} if args.sft
            else {"problem_id": p.id, "completion": text} for p, text in found]
    n = _write_rows(rows, args.output)
    total = len(problems)
    share = f" ({100 * n / total:.0f}%)" if total else ""
    _say(f"wrote {n} gold {'SFT rows' if args.sft else 'completions'} for {n} of {total} problems{share} "
         f"to {args.output}")
    if missing:
        _say(f"no gold trace for {len(missing)} problem(s) (no known derivation): {', '.join(missing[:10])}")
    for pid, why in skipped[:10]:
        _say(f"skipped {pid}: {why}")
    if skipped:
        _say(f"skipped {len(skipped)} problem(s) (reasons above)")
    return 0


def _prompts(args) -> int:
    from prosfi.domains.prompts import prompt_rows

    system = None  # each problem's domain prompt
    if args.system_prompt_file:
        with open(args.system_prompt_file, encoding="utf-8") as fh:
            system = fh.read().strip()
    rows = prompt_rows(read_problems(args.problems), system, args.few_shot)
    n = _write_rows(rows, args.output)
    _say(f"wrote {n} prompt rows to {args.output}")
    return 0


def _validate(args) -> int:
    n = sum(1 for _ in read_problems(args.problems, validate=True))
    _say(f"{args.problems}: {n} problems, all valid")
    return 0


_COMMANDS = {"kk": _kk, "fol": _fol, "toy": _toy, "proverqa": _proverqa, "gsm8k": _gsm8k, "physics": _physics,
             "gsm_symbolic": _gsm_symbolic, "scibench": _scibench, "gold": _gold, "prompts": _prompts,
             "validate": _validate}
