"""`prosfi prm label|train|score|rerank|negatives`: the FoVer and NS-PRM pipelines.

    prosfi prm label --data kk:2..3 --model runs/demo --n 8 -o runs/prm/data --balance 0.5 --val-fraction 0.1
    prosfi prm train recipes/prm/cpu_fover.yaml --train_file runs/prm/data/train.jsonl
    prosfi prm score --prm runs/prm/model --labelled runs/prm/data/val.jsonl -o runs/prm/val_scores.jsonl
    prosfi prm score --prm runs/prm/model --data kk:2..3 --model runs/demo --n 8 -o runs/prm/scored.jsonl
    prosfi prm rerank --scores runs/prm/scored.jsonl -o runs/prm/rerank
    prosfi prm negatives --data fol:easy --completions samples.jsonl -o runs/prm/pairs.jsonl

Problems and completions come from `prosfi eval`'s flags and code (`--data`, `--model | --endpoint |
--completions`, `--n`); the verifier takes `prosfi check`'s flags.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from prosfi.usage import UsageError

SUBCOMMANDS = ("label", "train", "score", "rerank", "negatives")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from prosfi.eval.cli import add_generation_arguments, add_source_arguments
    from prosfi.usage import add_overwrite_argument
    from prosfi.verify.cli import add_verifier_arguments

    sub = parser.add_subparsers(dest="prm_command", required=True, metavar="{" + ",".join(SUBCOMMANDS) + "}")

    p = sub.add_parser("label", help="label each step of sampled chains with the verifier (TRL stepwise format)")
    add_source_arguments(p, required=True)
    add_generation_arguments(p, required=True)
    add_verifier_arguments(p)
    from prosfi.rewards.cli import add_quantity_rule_arguments

    add_quantity_rule_arguments(p)  # the chain rules of --completion-format prosfi
    p.add_argument("-o", "--output", required=True, help="output folder: train.jsonl, val.jsonl, "
                   "completions.jsonl (the scored samples), stats.json")
    p.add_argument("--balance", type=float, default=None, metavar="RATIO",
                   help="target fraction of correct steps in the train split (FoVer: 0.5); default: no balancing")
    p.add_argument("--no-truncate", action="store_true",
                   help="balance by dropping chains only (default: first cut chains after their first error)")
    p.add_argument("--val-fraction", type=float, default=0.1, help="problems held out for validation "
                   "(split by problem, never by step; default: %(default)s)")
    p.add_argument("--split-seed", type=int, default=0, help="seed of the split and of balancing")
    p.add_argument("--no-dedupe", action="store_true", help="keep chains identical to an earlier chain")
    p.add_argument("--completion-format", choices=("prosfi", "gsm8k"), default="prosfi",
                   help="prosfi: completions with a <steps> array (default); gsm8k: solutions in GSM8K's own "
                   "style (<<expr=value>> annotations, `#### N` or `A: N`), each annotation one step; the file "
                   "is {problem_id, completion} lines or GSM8K's example_model_solutions.jsonl (docs/prm.md)")
    add_overwrite_argument(p)

    p = sub.add_parser("train", help="fine-tune a PRM from a recipe (objective sft or pairwise) plus overrides",
                       usage="prosfi prm train RECIPE.yaml [--key value ...] [--dry-run]")
    p.add_argument("argv", nargs=argparse.REMAINDER, help="the recipe, then --key value overrides")

    p = sub.add_parser("score", help="score every step of completions (or of labelled chains) with a trained PRM")
    p.add_argument("--prm", required=True, help="a trained PRM folder (`prosfi prm train` output)")
    p.add_argument("--labelled", help="`prosfi prm label` records: score their steps and report the step-level "
                   "meta-evaluation against the verifier's labels")
    add_source_arguments(p)
    add_generation_arguments(p)
    add_verifier_arguments(p)
    p.add_argument("-o", "--output", required=True, help="output JSONL (records with step_scores)")
    p.add_argument("--prm-batch-size", type=int, default=16, help="steps per PRM forward pass")
    p.add_argument("--threshold", type=float, default=0.5, help="meta-evaluation: a step scored below this is "
                   "predicted incorrect (default: %(default)s)")

    p = sub.add_parser("rerank", help="Best-of-K by PRM score next to majority vote, random pick and oracle")
    p.add_argument("--scores", help="`prosfi prm score` output (records with step_scores); or score here with "
                   "--prm and the problem/completion flags")
    p.add_argument("--prm", help="a trained PRM folder")
    add_source_arguments(p)
    add_generation_arguments(p)
    add_verifier_arguments(p)
    p.add_argument("--aggregation", choices=("min", "mean", "last", "product"), default="min",
                   help="how step scores make a completion's score, for picks.jsonl (the table shows all)")
    p.add_argument("--verifier-filter", action="store_true",
                   help="picks.jsonl: only fully verified chains compete (the table shows both)")
    p.add_argument("-o", "--output", default=None, help="output folder: rerank.json, rerank.md, picks.jsonl")
    p.add_argument("--prm-batch-size", type=int, default=16, help="steps per PRM forward pass")
    p.add_argument("--bootstrap", type=int, default=1000, help="bootstrap resamples for the intervals")
    add_overwrite_argument(p)

    p = sub.add_parser("negatives", help="counterfactual hard negatives (CSP) and natural negatives as pairs")
    add_source_arguments(p, required=True)
    add_generation_arguments(p)
    add_verifier_arguments(p)
    p.add_argument("-o", "--output", required=True, help="output JSONL, one pair per line")
    p.add_argument("--margin", type=float, default=None,
                   help="margin of CSP pairs (default: the domain's `pair_margin`: 1.0 for logic, 0.5 = NS-PRM's γ "
                        "for quantity pairs)")
    p.add_argument("--natural-margin", type=float, default=0.5,
                   help="margin of natural pairs (a step off the gold path may lie on another proof)")
    p.add_argument("--per-kind", type=int, default=2, help="CSP twins per gold step and kind (default: %(default)s)")
    p.add_argument("--no-csp", action="store_true", help="natural negatives only")


def run(args: argparse.Namespace) -> int:
    if args.prm_command == "train":
        return _train(args.argv)
    commands = {"label": _label, "score": _score, "rerank": _rerank, "negatives": _negatives}
    return guarded(f"prosfi prm {args.prm_command}", commands[args.prm_command], args)


def guarded(name: str, command, args: argparse.Namespace) -> int:
    """Run a prm/search command: a usage mistake is one line and exit 2, an endpoint or hub that stays
    unreachable one line and exit 1, `| head` ends quietly (prosfi.cli)."""
    from prosfi.usage import one_line

    try:
        return command(args)
    except BrokenPipeError:  # `… | head`: prosfi.cli exits quietly
        raise
    except (ValueError, OSError) as exc:
        raise UsageError(one_line(exc), command=name.removeprefix("prosfi ")) from None
    except RuntimeError as exc:  # an endpoint that still failed after its retries, a hub file not reachable here
        from prosfi.data.hub import HubUnavailable
        from prosfi.eval.endpoint import EndpointError

        if not isinstance(exc, (EndpointError, HubUnavailable)):
            raise
        print(f"{name}: {one_line(exc)}", file=sys.stderr)
        return 1


# -- shared ------------------------------------------------------------------------------------------

def _write_jsonl(path: str | Path, rows) -> int:
    from prosfi import jsonl

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    n = 0
    with open(path, "w", encoding="utf-8") as fh:
        for r in rows:
            fh.write(jsonl.dumps(r) + "\n")  # standard JSON whatever a completion holds
            n += 1
    return n


def _output_file(path: str) -> None:
    """-o FILE checked before any work: not a folder, its folder creatable (ValueError otherwise)."""
    target = Path(path)
    if target.is_dir():
        raise ValueError(f"-o {path} is a folder; give a file name (e.g. {Path(path) / 'out.jsonl'})")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ValueError(f"-o {path}: cannot create its folder: {exc.strerror or exc}") from None


def _problems(args: argparse.Namespace, verifier) -> dict[str, Any]:
    from prosfi.eval.cli import no_problems, sources_from_args

    sources = sources_from_args(args, verifier=verifier)
    problems = {p.id: p for s in sources for p in s.problems}
    if not problems:
        raise ValueError(no_problems(sources))
    return problems


def _generations(args: argparse.Namespace, problems: dict[str, Any], out_dir: Path | None = None):
    from prosfi.eval.cli import generator_from_args

    generator, _ = generator_from_args(args, out_dir)
    generations = generator(list(problems.values()))
    if args.completions and not any(g.problem_id in problems for g in generations):
        raise ValueError(f"none of the {len(generations)} completions in {args.completions} names a problem of "
                         f"--data (first problem_id {generations[0].problem_id!r}); give the --data the "
                         "completions were made for")
    kept = [g for g in generations if g.problem_id in problems]
    if len(kept) < len(generations):  # another source, or --limit: as `prosfi eval`, left out and counted
        first = next(g.problem_id for g in generations if g.problem_id not in problems)
        print(f"[prosfi prm {args.prm_command}] note: {len(generations) - len(kept)} completion(s) name a problem "
              f"not loaded from --data (first: {first!r}; another source, or --limit): left out", file=sys.stderr)
    return kept


def _check_generation_flags(args: argparse.Namespace) -> None:
    """Usage errors of the completion flags, before the verifier starts or problems are generated."""
    from prosfi.eval.cli import generation_config
    from prosfi.usage import check_model_path

    if not (args.completions or args.model or args.endpoint):
        raise ValueError("give the completions to use: --completions FILE, --model M or --endpoint URL")
    if args.completions and not Path(args.completions).is_file():
        raise ValueError(f"--completions: no such file {args.completions!r}")
    if args.model:
        check_model_path(args.model)
    if not args.completions:
        generation_config(args)


def _verifier(args: argparse.Namespace):
    from prosfi.verify.cli import verifier_config
    from prosfi.verify.verifier import Verifier

    return Verifier(verifier_config(args))


def _log(command: str, message: str) -> None:
    print(f"[prosfi prm {command}] {message}", file=sys.stderr)


# -- label -------------------------------------------------------------------------------------------

def _label(args: argparse.Namespace) -> int:
    from prosfi.eval.scoring import score_generations
    from prosfi.prm import dataset as ds
    from prosfi.prm.label import label_completions
    from prosfi.usage import output_folder

    if args.balance is not None and not 0.0 < args.balance < 1.0:
        raise ValueError(f"--balance {args.balance}: give a fraction of correct steps between 0 and 1, e.g. 0.5")
    if not 0.0 <= args.val_fraction < 1.0:
        raise ValueError(f"--val-fraction {args.val_fraction}: give a fraction in [0, 1), e.g. 0.1")
    _check_generation_flags(args)
    from prosfi.eval.cli import resumes_from_cache

    out = Path(args.output)
    resume = resumes_from_cache(args, out)
    output_folder(out, create=False, overwrite=args.overwrite, resume=resume)
    if resume:
        _log("label", f"resuming from {out / 'requests.jsonl'} (the endpoint's cached answers)")
    if getattr(args, "completion_format", "prosfi") == "gsm8k":
        from prosfi.rewards.cli import quantity_rule_kwargs

        if quantity_rule_kwargs(args):  # not silently ignored
            raise ValueError("--quantity-*: the gsm8k completion format labels each annotation's arithmetic "
                             "(prosfi.prm.quant_label), not a chain under the chain rules; they apply with "
                             "--completion-format prosfi")
        return _label_gsm8k(args, out)
    from prosfi.rewards.cli import chain_config_from_args

    chain_config = chain_config_from_args(args)
    with _verifier(args) as verifier:
        problems = _problems(args, verifier)
        generations = _generations(args, problems, out)
        output_folder(out, overwrite=True)  # checked above
        scored = score_generations(problems, generations, verifier, chain_config=chain_config,
                                   progress=not args.no_progress)
        items = [{"problem_id": g.problem_id, "completion": g.completion, "index": i, "sample": g.sample}
                 for i, g in enumerate(generations)]
        records, stats = label_completions(problems, items, verifier, chain_config=chain_config)
    if not records:  # empty train/val files would only fail later, in `prosfi prm train`
        _write_jsonl(out / "completions.jsonl", scored)
        raise ValueError(no_chains(stats, out))
    n_raw = len(records)
    if not args.no_dedupe:
        records = ds.dedupe_records(records)
    train, val = ds.split_by_problem(records, args.val_fraction, args.split_seed)
    before = ds.stats(train)
    if args.balance is not None:
        train = ds.balance(train, args.balance, truncate=not args.no_truncate, seed=args.split_seed)
    if not train:
        raise ValueError(f"the train split is empty ({len(records)} chains, all on the problems held out for "
                         f"validation or dropped by --balance {args.balance}); lower --val-fraction, leave out "
                         "--balance, or label more problems")
    _write_jsonl(out / "train.jsonl", train)
    _write_jsonl(out / "val.jsonl", val)
    _write_jsonl(out / "completions.jsonl", scored)
    report = {"labelling": stats.to_json(), "duplicate_chains_dropped": n_raw - len(records),
              "train_before_balancing": before, "train": ds.stats(train), "val": ds.stats(val),
              "balance": args.balance}
    (out / "stats.json").write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))
    _log("label", f"wrote {out}/train.jsonl ({len(train)} chains), val.jsonl ({len(val)}), completions.jsonl, "
         "stats.json")
    return 0


def _label_gsm8k(args: argparse.Namespace, out: Path) -> int:
    """`--completion-format gsm8k`: every <<expr=value>> annotation of a GSM8K-style solution is a step
    (prosfi.prm.quant_label); writes the TRL stepwise split, labels.jsonl, fover.jsonl, processbench.jsonl."""
    from prosfi.domains import domain_for
    from prosfi.prm import dataset as ds
    from prosfi.prm import quant_label as ql
    from prosfi.usage import output_folder

    if not args.completions:
        raise ValueError("--completion-format gsm8k reads a file: give --completions FILE")
    with _verifier(args) as verifier:
        problems = _problems(args, verifier)
    problems = {k: p for k, p in problems.items() if "gsm8k" in domain_for(p).completion_formats}
    if not problems:
        raise ValueError("--completion-format gsm8k needs quantity problems: give --data gsm8k:FILE")
    report = ql.ReadReport()
    items = ql.read_completions(args.completions, problems, report)
    for why in report.bad[:5]:
        print(f"warning: --completions {args.completions}: {why}", file=sys.stderr)
    if not any(i["problem_id"] in problems for i in items):
        raise ValueError(f"none of the {report.solutions} solutions in {args.completions} belongs to a problem of "
                         "--data (matched by problem_id, or by question text for GSM8K's example_model_solutions)")
    records = ql.label_items(problems, items)
    labelled = [r for r in records if r["labels"]]
    if not labelled:
        raise ValueError(f"no chain to label: none of the {len(records)} matched solutions has a readable "
                         "<<expr=value>> annotation")
    output_folder(out, overwrite=args.overwrite)
    n_raw = len(labelled)
    kept = labelled if args.no_dedupe else ds.dedupe_records(labelled)
    train, val = ds.split_by_problem(kept, args.val_fraction, args.split_seed)
    if args.balance is not None:
        train = ds.balance(train, args.balance, truncate=not args.no_truncate, seed=args.split_seed)
    _write_jsonl(out / "labels.jsonl", records)
    _write_jsonl(out / "train.jsonl", train)
    _write_jsonl(out / "val.jsonl", val)
    _write_jsonl(out / "fover.jsonl", (ql.fover_record(r) for r in labelled))
    _write_jsonl(out / "processbench.jsonl", (ql.processbench_record(r) for r in labelled))
    _write_jsonl(out / "scores.jsonl", ql.score_records(records, args.split_seed))
    report_json = {
        "solutions_read": report.solutions, "solutions_unmatched": report.unmatched, "bad_lines": len(report.bad),
        "solutions_labelled": len(records), **ql.label_stats(records),
        "duplicate_chains_dropped": n_raw - len(kept), "train": ds.stats(train), "val": ds.stats(val),
    }
    (out / "stats.json").write_text(json.dumps(report_json, indent=2) + "\n")
    print(json.dumps(report_json, indent=2))
    _log("label", f"wrote {out}/labels.jsonl ({len(records)} solutions), train.jsonl ({len(train)}), val.jsonl "
         f"({len(val)}), fover.jsonl, processbench.jsonl, scores.jsonl, stats.json")
    return 0
def no_chains(stats: Any, out: Path) -> str:
    """Why labelling gave no chain, in one line (the scored completions are in `out`)."""
    if not stats.completions:
        why = "there were no completions"
    elif stats.format_failures >= stats.completions:
        why = (f"all {stats.completions} completions are malformed (no readable <steps> block); a policy that "
               "writes the steps format is needed (an SFT warm-up, `prosfi sft`, teaches it)")
    else:
        why = (f"of {stats.completions} completions {stats.format_failures} are malformed and the rest have no "
               f"step with a valid or invalid verdict ({stats.unknown_steps} unknown steps left out)")
    return f"no chain to label: {why}; see {out / 'completions.jsonl'}"


# -- train -------------------------------------------------------------------------------------------

def _train(argv: list[str]) -> int:
    import warnings

    from prosfi.prm.train import resolve
    from prosfi.prm.train import run as run_training
    from prosfi.train.recipe import RecipeError, split_argv

    # as `prosfi train`: transformers 5 reports TRL's own `gradient_checkpointing` as deprecated on every run
    warnings.filterwarnings("ignore", message="`gradient_checkpointing` is deprecated", category=FutureWarning)
    warnings.filterwarnings("ignore", message="`is_gradient_checkpointing` is deprecated", category=FutureWarning)
    recipe, overrides = split_argv(argv)
    if recipe is None and not overrides:
        print("usage: prosfi prm train RECIPE.yaml [--key value ...] [--dry-run]", file=sys.stderr)
        return 2
    from prosfi.usage import one_line

    def error(exc: BaseException) -> UsageError:
        text = one_line(exc).replace("`prosfi train --help`", "`prosfi prm train RECIPE.yaml --help`")
        return UsageError(f"error: {text}", command="prm train")

    if "--help" in overrides or "-h" in overrides:
        from prosfi.prm.train import dataclass_types, objective_of
        from prosfi.train.recipe import make_parser

        try:
            make_parser(dataclass_types(objective_of(recipe, overrides))).print_help()
        except RecipeError as exc:
            raise error(exc) from None
        return 0
    dry = "--dry-run" in overrides
    overrides = [o for o in overrides if o != "--dry-run"]
    from prosfi.usage import stdout_kept_clean

    try:
        with stdout_kept_clean():  # stdout carries the dry run's YAML
            resolved = resolve(recipe, overrides, dry_run=dry)
    except (RecipeError, ValueError) as exc:
        raise error(exc) from None
    if resolved.script.dry_run:
        print(resolved.to_yaml(), end="")
        return 0
    from prosfi.data.hub import HubUnavailable
    from prosfi.train.deepspeed_cpu import skip_shm_op

    skip_shm_op()  # DeepSpeed on CPU: no build (and no build lock) of an op training never calls
    try:
        out = run_training(resolved)
    except BrokenPipeError:
        raise
    except (ValueError, OSError) as exc:
        raise error(exc) from None
    except HubUnavailable as exc:  # `problems: proverqa:hard` without the hub
        print(f"prosfi prm train: {error(exc)}", file=sys.stderr)  # not a usage mistake: exit 1
        return 1
    _log("train", f"saved the PRM ({resolved.script.objective}) to {out}")
    return 0


# -- score -------------------------------------------------------------------------------------------

def _check_prm_flags(args: argparse.Namespace) -> None:
    if args.prm_batch_size < 1:
        raise ValueError(f"--prm-batch-size {args.prm_batch_size}: give at least 1")
    if args.prm is not None and not Path(args.prm).is_dir():
        raise ValueError(f"--prm {args.prm}: no such folder; give a `prosfi prm train` output folder")


def score_records(prm, records: list[dict[str, Any]], problems: dict[str, Any]) -> None:
    """Add `step_scores` to scored completion records (an empty list where no step array parses)."""
    from prosfi.domains import domain_for

    items, owners = [], []
    for i, rec in enumerate(records):
        rec["step_scores"] = []
        problem = problems.get(rec["problem_id"])
        if problem is None or not rec.get("format_ok"):
            continue
        domain = domain_for(problem)
        trace = domain.parse_trace(problem, rec["completion"]).trace
        if trace is None:
            continue
        prompt = domain.user_prompt(problem)
        for k, step in enumerate(trace.steps):
            items.append((prompt, trace.steps[:k], step))
            owners.append(i)
    for i, s in zip(owners, prm.score_steps(items)):
        records[i]["step_scores"].append(round(float(s), 6))


def _score(args: argparse.Namespace) -> int:
    from prosfi.prm.dataset import labelled_records
    from prosfi.prm.model import load_prm, read_marker

    _check_prm_flags(args)
    _output_file(args.output)
    if args.labelled:
        records = labelled_records(args.labelled, "--labelled")
    else:
        _check_generation_flags(args)
    read_marker(args.prm)  # not a trained PRM: say so before loading anything
    if args.labelled:
        from prosfi.prm.metaeval import meta_eval

        prm = load_prm(args.prm, device=args.device, batch_size=args.prm_batch_size)

        items = [(r["prompt"], r["steps"][:k], r["steps"][k]) for r in records for k in range(len(r["steps"]))]
        flat = prm.score_steps(items)
        pos = 0
        for r in records:
            r["scores"] = [round(float(x), 6) for x in flat[pos:pos + len(r["steps"])]]
            pos += len(r["steps"])
        report = meta_eval(records, [r["scores"] for r in records], args.threshold)
        from prosfi.prm.metaeval import ablation_table

        ablations = ablation_table(records, [r["scores"] for r in records], args.threshold)
        if ablations:
            report["ablations_valid_and_grounded"] = ablations
        _write_jsonl(args.output, records)
        Path(str(args.output) + ".metaeval.json").write_text(json.dumps(report, indent=2) + "\n")
        print(json.dumps(report, indent=2))
        _log("score", f"wrote {args.output} and {args.output}.metaeval.json")
        return 0
    from prosfi.eval.scoring import score_generations

    with _verifier(args) as verifier:
        problems = _problems(args, verifier)
        generations = _generations(args, problems)
        records = score_generations(problems, generations, verifier, progress=not args.no_progress)
    prm = load_prm(args.prm, device=args.device, batch_size=args.prm_batch_size)  # after the inputs proved usable
    score_records(prm, records, problems)
    _write_jsonl(args.output, records)
    _log("score", f"wrote {len(records)} records with step_scores to {args.output} ({prm.calls} steps scored)")
    return 0


# -- rerank ------------------------------------------------------------------------------------------

def _score_records(path: str) -> list[dict[str, Any]]:
    """`prosfi prm score` records: a problem id, a sample number and a list of numeric step scores."""
    import math

    from prosfi.prm.dataset import read_records

    records = read_records(path, "--scores", {"problem_id": (str, int), "step_scores": list})
    good = []
    for r in records:
        sample = r.get("sample", 0)
        if (all(isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) for x in r["step_scores"])
                and (sample is None or isinstance(sample, int) and not isinstance(sample, bool))):
            good.append(r)
    if len(good) < len(records):
        print(f"warning: --scores {path}: {len(records) - len(good)} record(s) left out (a step score that is "
              "not a number, or a sample that is not an integer)", file=sys.stderr)
    if not good:
        raise ValueError(f"--scores {path}: no record with numeric step_scores")
    return good


def _rerank(args: argparse.Namespace) -> int:
    from prosfi.prm.rerank import group, picks, rerank_table, table_markdown

    if args.bootstrap < 1:
        raise ValueError(f"--bootstrap {args.bootstrap}: give at least 1 resample")
    if args.output:
        from prosfi.usage import output_folder

        output_folder(args.output, overwrite=args.overwrite)

    if args.scores:
        records = _score_records(args.scores)
    elif args.prm:
        _check_prm_flags(args)
        _check_generation_flags(args)
        from prosfi.eval.scoring import score_generations
        from prosfi.prm.model import load_prm, read_marker

        read_marker(args.prm)
        with _verifier(args) as verifier:
            problems = _problems(args, verifier)
            records = score_generations(problems, _generations(args, problems), verifier,
                                        progress=not args.no_progress)
        prm = load_prm(args.prm, device=args.device, batch_size=args.prm_batch_size)
        score_records(prm, records, problems)
    else:
        raise ValueError("give --scores FILE, or --prm DIR with --data and completions")
    known = [r for r in records if not ("source" in r and r["source"] is None)]  # scored without its problem
    if len(known) < len(records):
        print(f"[prosfi prm rerank] note: {len(records) - len(known)} record(s) name a problem not loaded when "
              "they were scored (reason 'unknown problem'): left out", file=sys.stderr)
    records = known
    if not records:
        raise ValueError("no scored completion of a known problem to rerank")
    sizes = sorted({len(c) for c in group(records).values()})
    if len(sizes) > 1:  # K differs: the oracle and random baselines mean different things per problem
        print(f"[prosfi prm rerank] warning: problems have {sizes[0]} to {sizes[-1]} candidates (K differs); "
              "the table is clearest with the same K for every problem", file=sys.stderr)
    rows = rerank_table(records, n_boot=args.bootstrap)
    text = table_markdown(rows)
    if args.output:  # the files first: `… | head` must not cost them
        out = Path(args.output)
        out.mkdir(parents=True, exist_ok=True)
        (out / "rerank.json").write_text(json.dumps(rows, indent=2) + "\n")
        (out / "rerank.md").write_text(text + "\n")
        _write_jsonl(out / "picks.jsonl", picks(records, args.aggregation, args.verifier_filter))
        _log("rerank", f"wrote {out}/rerank.json, rerank.md, picks.jsonl")
    print(text)
    return 0


# -- negatives ---------------------------------------------------------------------------------------

def _negatives(args: argparse.Namespace) -> int:
    from collections import Counter

    from prosfi.domains import domain_for
    from prosfi.prm.negatives import csp_pairs, natural_pairs

    stats: dict[str, int] = {}
    pairs: list[dict[str, Any]] = []
    if args.per_kind < 1 and not args.no_csp:
        raise ValueError(f"--per-kind {args.per_kind}: give at least 1 (or --no-csp)")
    if args.no_csp and not (args.completions or args.model or args.endpoint):
        raise ValueError("--no-csp leaves natural negatives only: give --completions, --model or --endpoint")
    if args.completions or args.model or args.endpoint:
        _check_generation_flags(args)
    _output_file(args.output)
    with _verifier(args) as verifier:
        problems = _problems(args, verifier)
        if not args.no_csp:
            for p in problems.values():  # each domain proposes its twins (`Domain.perturbations`, `pair_margin`)
                pairs += csp_pairs(p, verifier, args.margin, args.per_kind, stats=stats)
        if args.completions or args.model or args.endpoint:
            chains: dict[str, list] = {}
            for g in _generations(args, problems):
                problem = problems.get(g.problem_id)
                if problem is None:
                    continue
                trace = domain_for(problem).parse_trace(problem, g.completion).trace
                if trace is not None and trace.steps:
                    chains.setdefault(g.problem_id, []).append(trace.steps)
            for pid, cs in chains.items():  # none for a domain without a groundedness (`Domain.groundedness`)
                pairs += natural_pairs(problems[pid], cs, verifier, args.natural_margin, stats=stats)
    _write_jsonl(args.output, pairs)
    kinds = Counter(p["kind"] for p in pairs)
    print(json.dumps({"pairs": len(pairs), "by_kind": dict(kinds), "problems": len(problems), **stats}, indent=2))
    _log("negatives", f"wrote {len(pairs)} pairs to {args.output}")
    return 0


__all__ = ["add_arguments", "run", "score_records"]
