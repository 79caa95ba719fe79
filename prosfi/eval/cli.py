"""`prosfi eval`: the paper's tables for a checkpoint, a served model or a completions file.

    prosfi eval --data kk:2..8 --model runs/demo -o runs/eval/demo
    prosfi eval --data proverqa:hard=dev/hard.json --endpoint http://localhost:8000/v1 --served-model M -o DIR
    prosfi eval --data problems.jsonl --completions completions.jsonl -o DIR
    prosfi eval compare runs/eval/base runs/eval/prosfi runs/eval/outcome -o runs/eval/compare

The flag helpers (`add_source_arguments`, `add_generation_arguments`) and their readers
(`sources_from_args`, `generation_config`, `generator_from_args`) are shared with other commands
that need problems and completions (e.g. `prosfi prm label`).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from prosfi.configflags import Flags
from prosfi.eval.endpoint import EndpointConfig
from prosfi.eval.generate import GenerationConfig
from prosfi.eval.sources import spec_help
from prosfi.rewards.config import RewardConfig
from prosfi.usage import UsageError, check_model_path, one_line, output_folder

# The flags of the configs an evaluation reads (prosfi.configflags); the endpoint's in seconds as
# --request-timeout, the reward mode as --reward (only the modes the `reward` column can take).
GENERATION_FLAGS = Flags(GenerationConfig, ("n", "temperature", "top_p", "max_new_tokens", "seed",
                                            "batch_size"))
ENDPOINT_FLAGS = Flags(EndpointConfig, ("concurrency", "retries", "timeout_s"),
                       names={"timeout_s": "--request-timeout"})
EVAL_REWARD_FLAGS = Flags(RewardConfig, ("mode",), names={"mode": "--reward"},
                          choices={"mode": ("prosfi", "step_fraction")},
                          notes={"mode": "Here: the mode of the `reward` column; the metrics do not depend on it."})


def add_source_arguments(parser: argparse.ArgumentParser, required: bool = False) -> None:
    """--data (repeatable), --count, --limit, --data-seed."""
    g = parser.add_argument_group("problems")
    g.add_argument("--data", action="append", default=[], required=required, metavar="SPEC", help=spec_help())
    g.add_argument("--count", type=int, default=100,
                   help="generated problems per difficulty for kk:/fol: specs (default: %(default)s)")
    g.add_argument("--limit", type=int, default=None,
                   help="at most this many problems per source and difficulty (files are cut, generators "
                   "draw fewer)")
    g.add_argument("--data-seed", type=int, default=None,
                   help="seed of generated problems (default: a fixed evaluation seed, far from training's)")


def add_generation_arguments(parser: argparse.ArgumentParser, required: bool = False) -> None:
    """Where completions come from (--model | --endpoint | --completions) and the sampling flags."""
    g = parser.add_argument_group("completions (one of --model, --endpoint, --completions)")
    src = g.add_mutually_exclusive_group(required=required)
    src.add_argument("--model", help="a checkpoint folder or hub id: generate with transformers (or --engine vllm)")
    src.add_argument("--endpoint", help="an OpenAI-compatible base URL (vllm serve, trl vllm-serve, a hosted API)")
    src.add_argument("--completions", help='a JSONL of {"problem_id", "completion"} lines produced elsewhere')
    g.add_argument("--served-model", help="the model name the endpoint serves (with --endpoint)")
    g.add_argument("--engine", choices=("transformers", "vllm"), default="transformers",
                   help="generation engine for --model (default: %(default)s)")
    g.add_argument("--recipe", help="a training recipe: its system_prompt, few_shot and reward_mode build the "
                   "prompts, and evaluated problems that overlap its training problems are reported")
    g.add_argument("--few-shot", type=int, default=None, metavar="K",
                   help="worked examples before each problem (default: the recipe's few_shot, else 0); a "
                   "pretrained chat model that never saw the format needs them")
    GENERATION_FLAGS.add(g)
    g.add_argument("--device", default=None, help="transformers device (default: cuda if available, else cpu)")
    g.add_argument("--dtype", default="auto", help="transformers dtype: auto, float32, bfloat16, float16")
    ENDPOINT_FLAGS.add(g)
    g.add_argument("--cache", default=None,
                   help="endpoint request cache (JSONL; default: OUTPUT/requests.jsonl): a rerun resumes from it")
    g.add_argument("--no-progress", action="store_true", help="no progress bars")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("compare", nargs="*", metavar="compare DIR",
                        help="`prosfi eval compare DIR_A DIR_B ...`: compare earlier evaluations")
    add_source_arguments(parser)
    add_generation_arguments(parser)
    parser.add_argument("-o", "--output", default=None, help="output folder (default: runs/eval/<name>)")
    parser.add_argument("--label", default=None, help="the name of this run in tables and plots")
    from prosfi.usage import add_overwrite_argument

    add_overwrite_argument(parser)
    EVAL_REWARD_FLAGS.add(parser)
    parser.add_argument("--bootstrap", type=int, default=None,
                        help="bootstrap resamples (default: 1000; `eval compare`: 10000)")
    parser.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    parser.add_argument("--wandb", action="store_true", help="also log the summary, table and plots to wandb")
    parser.add_argument("--held-out-only", action="store_true",
                        help="with --recipe: leave out problems equal to one the recipe trains on (GRPO or SFT) "
                        "and repeats, so only fresh problems are scored (e.g. the quantity demo's, physics:demo)")
    j = parser.add_argument_group("LLM judge (off by default)")
    j.add_argument("--judge-endpoint", default=None, help="OpenAI-compatible URL of the judge model")
    j.add_argument("--judge-model", default=None, help="the judge's served model name")
    j.add_argument("--judge-prompt", default=None, help="judge prompt file (default: prosfi/eval/judge_prompt.txt)")
    from prosfi.rewards.cli import add_quantity_rule_arguments
    from prosfi.verify.cli import add_verifier_arguments

    add_verifier_arguments(parser)
    add_quantity_rule_arguments(parser)


def sources_from_args(args: argparse.Namespace, verifier=None):
    """`load_sources` for the --data flags (SpecError / ValueError on a bad spec)."""
    from prosfi.eval.sources import DEFAULT_SEED, load_sources

    if not args.data:
        raise ValueError("--data: give at least one problem source. " + spec_help())
    if args.count < 1:
        raise ValueError(f"--count {args.count}: give at least 1 problem per difficulty")
    if args.limit is not None and args.limit < 1:
        raise ValueError(f"--limit {args.limit}: give at least 1 (or leave --limit out for all problems)")
    seed = DEFAULT_SEED if args.data_seed is None else args.data_seed
    return load_sources(args.data, count=args.count, limit=args.limit, seed=seed, verifier=verifier)


def no_problems(sources) -> str:
    """The message for --data sources that gave no problem: the first skipped record's reason."""
    why = next((f"; {s.spec}: {len(s.skipped)} records skipped, first {s.skipped[0][0]}: {s.skipped[0][1]}"
                for s in sources if s.skipped), "")
    return f"the --data sources produced no problems{why[:400]}"


def generation_config(args: argparse.Namespace) -> GenerationConfig:
    if args.n < 1:
        raise ValueError(f"--n {args.n}: give at least 1 sample per problem")
    if args.max_new_tokens < 1:
        raise ValueError(f"--max-new-tokens {args.max_new_tokens}: give at least 1")
    if args.n > 1 and args.temperature == 0:
        raise ValueError(f"--n {args.n} with --temperature 0: greedy samples are all the same; give a temperature > 0")
    return GenerationConfig(**GENERATION_FLAGS.kwargs(args))


def prompt_settings(recipe: str | None, few_shot: int | None = None):
    """The prompts a recipe trains on (its `system_prompt`, `few_shot`, `reward_mode`); defaults without one.
    `few_shot` (--few-shot), when given, replaces the recipe's number of worked examples."""
    import dataclasses

    from prosfi.eval.generate import PromptSettings

    if few_shot is not None and few_shot < 0:
        raise ValueError(f"--few-shot {few_shot}: give 0 or more")
    settings = PromptSettings()
    if recipe:
        from prosfi.train.config import sub_config
        from prosfi.train.recipe import resolve
        from prosfi.usage import stdout_kept_clean

        with stdout_kept_clean():  # stdout carries the evaluation's table
            script = resolve(recipe, [], dry_run=True).script
        settings = PromptSettings(script.system_prompt, script.few_shot, script.reward_mode,
                                  sub_config(script, "chain"))
    return settings if few_shot is None else dataclasses.replace(settings, few_shot=few_shot)


def recipe_scoring(args: argparse.Namespace):
    """(reward settings, Lean settings or None) eval scores with: --reward's, unless --recipe trains another
    completion format than --reward's (a direct-Lean recipe): then the recipe's reward settings and lean_* keys,
    so its completions are scored in the format their prompts asked for (`CompletionFormat.score`)."""
    from prosfi.rewards.config import RewardConfig
    from prosfi.rewards.formats import format_for

    config = RewardConfig(mode=args.reward)
    if not args.recipe:
        return config, None
    from prosfi.train.config import sub_config
    from prosfi.train.recipe import resolve
    from prosfi.usage import stdout_kept_clean

    with stdout_kept_clean():
        script = resolve(args.recipe, [], dry_run=True).script
    if format_for(script.reward_mode) is format_for(args.reward):
        return config, None
    return sub_config(script, "reward"), sub_config(script, "lean")


def generator_from_args(args: argparse.Namespace, out_dir: str | Path | None = None,
                        notes: list[str] | None = None):
    """(generator, model label): a callable problems -> generations for --model / --endpoint /
    --completions. Raises ValueError for a missing companion flag, a missing file or model folder, a
    completions file without one usable line. Lines of --completions that cannot be read are appended
    to `notes` (the caller reports them), else reported on stderr."""
    from prosfi.eval import generate as gen

    if args.completions:  # samples and their number come from the file
        path = args.completions
        if not os.path.isfile(path):
            raise ValueError(f"--completions: no such file {path!r}")
        skipped: list = []
        gens = gen.read_completions(path, skipped)
        if not gens:
            from prosfi.jsonl import skipped_note

            raise ValueError(f"--completions {path}: " + ("the file is empty: no completions" if not skipped else
                             "no usable completion line; " + skipped_note(path, skipped)))
        if skipped:
            from prosfi.jsonl import skipped_note

            note = skipped_note(path, skipped)
            if notes is not None:
                notes.append(note)
            else:
                print(f"warning: --completions {note}", file=sys.stderr)
        return (lambda problems: gens), None
    cfg = generation_config(args)
    if args.batch_size < 1:
        raise ValueError(f"--batch-size {args.batch_size}: give at least 1")
    settings = prompt_settings(args.recipe, getattr(args, "few_shot", None))  # a Namespace built by hand may lack it
    progress = not args.no_progress
    if args.endpoint:
        if not args.served_model:
            raise ValueError("--endpoint needs --served-model NAME (the model name the server serves)")
        if not args.endpoint.startswith(("http://", "https://")):
            raise ValueError(f"--endpoint {args.endpoint}: give an http:// or https:// URL, e.g. "
                             "http://localhost:8000/v1")
        if args.concurrency < 1 or args.retries < 0 or not args.request_timeout > 0:
            raise ValueError("--concurrency must be >= 1, --retries >= 0 and --request-timeout > 0")
        from prosfi.eval.endpoint import generate_endpoint

        endpoint = EndpointConfig(args.endpoint, args.served_model, **ENDPOINT_FLAGS.kwargs(args))
        cache = args.cache or (Path(out_dir) / "requests.jsonl" if out_dir else None)
        return (lambda problems: generate_endpoint(problems, endpoint, cfg, settings, cache, progress)), \
            args.served_model
    if args.model:
        check_model_path(args.model)
        if args.engine == "vllm":
            return (lambda problems: gen.generate_vllm(problems, args.model, cfg, settings, progress)), args.model

        def hf(problems):
            model, tok = gen.load_hf(args.model, args.device, args.dtype)
            return gen.generate_hf(problems, model, tok, cfg, settings, progress)

        return hf, args.model
    raise ValueError("give one of --model, --endpoint or --completions")


def resumes_from_cache(args: argparse.Namespace, out: Path) -> bool:
    """An --endpoint run into a folder that holds its default request cache resumes from it."""
    return bool(getattr(args, "endpoint", None) and not args.cache and (out / "requests.jsonl").is_file())


def _default_output(args: argparse.Namespace) -> Path:
    name = args.label or Path(args.model or args.served_model or args.completions or "eval").name
    return Path("runs") / "eval" / (name.replace("/", "_") or "eval")


def help_parser(rest: list[str]) -> argparse.ArgumentParser | None:
    """`prosfi eval compare --help`: a parser of compare's own options (None: eval's full help)."""
    if not rest or rest[0] != "compare":
        return None
    parser = argparse.ArgumentParser(prog="prosfi eval compare", description="Compare earlier evaluations "
                                     "(`prosfi eval -o DIR` folders, or a training run's eval_before/eval_after) side by side: "
                                     "each run's difference from the first with a paired bootstrap interval, and plots.")
    parser.add_argument("dirs", nargs="+", metavar="DIR", help="evaluation folders, two or more")
    parser.add_argument("-o", "--output", default=None, help="output folder for the comparison")
    parser.add_argument("--overwrite", action="store_true",
                        help="write into an output folder that already holds files (they are replaced)")
    parser.add_argument("--bootstrap", type=int, default=None, help="bootstrap resamples (default: 10000)")
    parser.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    parser.add_argument("--wandb", action="store_true", help="also log the comparison to wandb")
    return parser


def run(args: argparse.Namespace) -> int:
    if args.compare:
        if args.compare[0] != "compare":
            raise UsageError(f"unexpected argument {args.compare[0]!r} (did you mean `prosfi eval compare "
                             "DIR_A DIR_B`?)")
        from prosfi.eval.compare import run_compare

        return run_compare(args.compare[1:], args.output, n_boot=args.bootstrap, plots=not args.no_plots,
                           wandb=args.wandb, overwrite=args.overwrite)
    if args.bootstrap is None:
        args.bootstrap = 1000
    from prosfi.data.hub import HubUnavailable

    try:
        return _run_eval(args)
    except BrokenPipeError:  # `… | head`: prosfi.cli exits quietly
        raise
    except (ValueError, OSError) as exc:  # a bad flag or spec, a file or model that is not there
        raise UsageError(one_line(exc)) from None
    except HubUnavailable as exc:
        print(f"prosfi eval: {one_line(exc)}", file=sys.stderr)
        return 1


def _run_eval(args: argparse.Namespace) -> int:
    from prosfi.eval.endpoint import EndpointError
    from prosfi.eval.evaluate import evaluate
    from prosfi.rewards.cli import chain_config_from_args
    from prosfi.verify.cli import verifier_config
    from prosfi.verify.verifier import Verifier

    chain_config = chain_config_from_args(args)  # a bad rule value is a usage error, before any work
    out = Path(args.output) if args.output else _default_output(args)
    resume = resumes_from_cache(args, out)
    output_folder(out, create=False, overwrite=args.overwrite, resume=resume)  # before any work
    if resume:
        print(f"[prosfi eval] resuming from {out / 'requests.jsonl'} (the endpoint's cached answers)", file=sys.stderr)
    completion_notes: list[str] = []
    generator, model_label = generator_from_args(args, out, completion_notes)
    if args.bootstrap < 1:
        raise ValueError(f"--bootstrap {args.bootstrap}: give at least 1 resample")
    if args.judge_endpoint and not args.judge_model:
        raise ValueError("--judge-endpoint needs --judge-model NAME")
    if args.judge_prompt and not os.path.isfile(args.judge_prompt):
        raise ValueError(f"--judge-prompt: no such file {args.judge_prompt!r}")
    judge = None
    if args.judge_endpoint:  # before any work: a bad judge prompt is a usage error
        from prosfi.eval.judge import Judge

        judge = Judge(args.judge_endpoint, args.judge_model, prompt_path=args.judge_prompt,
                      concurrency=args.concurrency)
    reward_config, recipe_lean = recipe_scoring(args)
    vcfg = verifier_config(args)
    if vcfg.lean is None and recipe_lean is not None:  # --lean-* flags win over the recipe's lean_* keys
        import dataclasses

        vcfg = dataclasses.replace(vcfg, lean=recipe_lean)
    with Verifier(vcfg) as verifier:
        sources = sources_from_args(args, verifier=verifier)
        if getattr(args, "held_out_only", False):
            if not args.recipe:
                raise ValueError("--held-out-only needs --recipe (the run whose training problems to leave out)")
            for s in sources:
                s.notes += keep_held_out(s, trained_problems(args.recipe))
        problems = [p for s in sources for p in s.problems]
        if not problems:
            raise ValueError(no_problems(sources))
        if args.completions:  # completions made for other problems: say so instead of an empty table
            generations = generator(problems)
            ids = {p.id for p in problems}
            if not any(g.problem_id in ids for g in generations):
                raise ValueError(f"none of the {len(generations)} completions in {args.completions} names a problem "
                                 f"of --data (first problem_id {generations[0].problem_id!r}); give the --data "
                                 f"the completions were made for{_seed_hint(generations, ids)}")
        output_folder(out, overwrite=True)  # checked above; created after the problems (a bad spec leaves none)
        notes = completion_notes + held_out_notes(problems, args.recipe)
        for s in sources:
            msg = f"[prosfi eval] {s.spec}: {len(s.problems)} problems"
            if s.skipped:
                msg += f", {len(s.skipped)} records skipped (first: {s.skipped[0][0]}: {s.skipped[0][1]})"
            if s.notes:
                msg += f"; {s.notes[0]}"
            print(msg, file=sys.stderr)
        for n in notes:
            print(f"[prosfi eval] warning: {'--completions ' if n in completion_notes else ''}{n}", file=sys.stderr)
        try:
            result = evaluate(sources, generator, verifier=verifier, reward_config=reward_config,
                              chain_config=chain_config, out_dir=out, model=args.label or model_label, judge=judge, n_boot=args.bootstrap,
                              seed=args.seed, plots=not args.no_plots, progress=not args.no_progress, notes=notes,
                              extra={"generation": _generation_info(args)})
        except EndpointError as exc:
            print(f"prosfi eval: {exc}", file=sys.stderr)
            return 1
    from prosfi.eval.report import table

    for note in result.summary.get("notes", []):  # e.g. completions naming problems not in --data
        if note not in notes and "left out" in note:
            print(f"[prosfi eval] warning: {note}", file=sys.stderr)
    if args.wandb:
        from prosfi.eval.wandb_log import log_summary

        log_summary(result.summary, out, name=args.label or model_label)
    print(f"[prosfi eval] wrote {out}/summary.json, summary.md, completions.jsonl"
          + (", plots" if not args.no_plots else ""), file=sys.stderr)
    print(table(result.summary))  # last: `… | head` must not cost the files or wandb
    return 0


def _generation_info(args: argparse.Namespace) -> dict[str, Any]:
    return {"source": "completions" if args.completions else "endpoint" if args.endpoint else "model",
            "engine": args.engine if args.model else None, "n": args.n,
            "temperature": None if args.completions else generation_config(args).effective_temperature,
            "max_new_tokens": args.max_new_tokens, "seed": args.seed, "recipe": args.recipe}


def trained_problems(recipe: str) -> list:
    """The problems a recipe's run trains on: GRPO's, and the SFT warm-up's when it has one (a small generated
    space, like the quantity demo's, is mostly covered by the warm-up)."""
    from prosfi.train.problems import from_script_args
    from prosfi.train.recipe import resolve

    script = resolve(recipe, [], dry_run=True).script
    problems = list(from_script_args(script))
    if getattr(script, "sft", False):
        from prosfi.train.sft import sft_problems

        problems += sft_problems(script)
    return problems


def keep_held_out(source, training: Sequence) -> list[str]:
    """`--held-out-only`: drop from `source` the problems equal to a training problem, and repeats of one
    content; the note says how many remain."""
    from prosfi.eval.sources import content_key

    seen = {content_key(p) for p in training}
    kept = []
    for p in source.problems:
        key = content_key(p)
        if key not in seen:
            seen.add(key)
            kept.append(p)
    dropped, source.problems = len(source.problems) - len(kept), kept
    return [f"--held-out-only: {len(kept)} problems never trained on ({dropped} trained on or repeated: not scored)"]


def held_out_notes(problems: Sequence, recipe: str | None) -> list[str]:
    """A warning when evaluated problems equal (premises and goal) a recipe's training problems."""
    if not recipe:
        return []
    from prosfi.eval.sources import overlap

    try:
        training = trained_problems(recipe)
    except Exception as exc:  # noqa: BLE001 - a hub dataset not reachable here: say so, do not fail
        return [f"held-out check skipped: cannot rebuild the training problems of {recipe} ({exc})"]
    shared = overlap(problems, training)
    if not shared:
        return []
    return [(f"{len(shared)} of {len(problems)} evaluated problems have the same premises and goal as a training "
             f"problem of {recipe} (e.g. {', '.join(shared[:3])}): not held out")]


def _seed_hint(generations, ids) -> str:
    """'' or '; <why>' when the completions name generated problems of another seed (`unknown_ids_note`)."""
    from prosfi.data.problem import unknown_ids_note

    note = unknown_ids_note([g.problem_id for g in generations], ids)
    return "; " + note.split("; not scored; ", 1)[1] if "; not scored; " in note else ""


__all__ = [
    "add_arguments",
    "add_generation_arguments",
    "add_source_arguments",
    "generation_config",
    "generator_from_args",
    "held_out_notes",
    "no_problems",
    "prompt_settings",
    "resumes_from_cache",
    "run",
    "sources_from_args",
]
