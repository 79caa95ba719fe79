"""`prosfi train RECIPE.yaml [--key value ...]` (also `accelerate launch -m prosfi.train ...`)."""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
import warnings

from prosfi.usage import UsageError

USAGE = """prosfi train RECIPE.yaml [--key value ...] [--dry-run]

Keys are the fields of prosfi's script arguments, TRL's GRPOConfig and ModelConfig; nested
keys are dotted (--reward.right_verified 1.0) or prefixed (--reward_right_verified 1.0).
`prosfi train RECIPE.yaml --help` lists every key with its help and the recipe's value."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.usage = USAGE
    parser.add_argument("argv", nargs=argparse.REMAINDER, help="the recipe, then --key value overrides")


def print_keys(recipe: str | None) -> None:
    """Every key with its help; defaults shown are the recipe's values where it sets them."""
    from prosfi.train.recipe import flatten, load_yaml, make_parser, parser_dests

    parser = make_parser()
    parser.prog = "prosfi train" + (f" {recipe}" if recipe else "")
    if recipe:
        known = parser_dests(parser)
        loaded = load_yaml(recipe)
        config = flatten(loaded if isinstance(loaded, dict) else {}, known, recipe)
        parser.set_defaults_with_config(**{k: v for k, v in config.items() if k in known})
    parser.print_help()


def run(args: argparse.Namespace, sft_only: bool = False) -> int:
    from prosfi.train.recipe import RecipeError, resolve, split_argv

    name = "sft" if sft_only else "train"
    recipe, overrides = split_argv(args.argv)
    if recipe is None and not overrides:
        print(f"usage: {USAGE.replace('prosfi train', f'prosfi {name}')}", file=sys.stderr)
        return 2
    if "--help" not in overrides and "-h" not in overrides:
        from prosfi.train.fastcheck import quick_refusal

        refusal = quick_refusal(recipe, overrides)  # before the training stack's imports (seconds)
        if refusal is not None:
            raise UsageError(f"error: {refusal}")
    # TRL's GRPOConfig sets `gradient_checkpointing`, which transformers 5 reports as deprecated on every
    # run; the user cannot act on it.
    warnings.filterwarnings("ignore", message="`gradient_checkpointing` is deprecated", category=FutureWarning)
    warnings.filterwarnings("ignore", message="`is_gradient_checkpointing` is deprecated", category=FutureWarning)
    from prosfi.train.preflight import preflight

    try:
        if "--help" in overrides or "-h" in overrides:
            print_keys(recipe)
            return 0
        # stdout carries the dry run's YAML: anything printed while resolving (transformers prints
        # "[INFO] Running in WANDB offline mode" on import when WANDB_MODE=offline) goes to stderr,
        # and not at all when the recipe is refused (the error is then the one line)
        with contextlib.redirect_stdout(io.StringIO()) as notices:
            resolved = resolve(recipe, overrides)
            data = preflight(resolved, sft_only=sft_only)
    except RecipeError as e:
        raise UsageError(f"error: {e}") from None
    sys.stderr.write(notices.getvalue())
    if resolved.wandb_notice and os.environ.get("RANK", "0") == "0":  # once per launch, not per process
        print(resolved.wandb_notice, file=sys.stderr, flush=True)
    if resolved.script.dry_run:
        print(resolved.to_yaml(), end="")
        print(f"# {data}")
        if resolved.run_plan is not None:
            from prosfi.train.rundir import finished

            plan = resolved.run_plan if sft_only else finished(resolved.run_plan, resolved.training.output_dir,
                                                                resolved.training.max_steps)
            print(f"# output_dir: {plan.line or 'a fresh run'}")
        return 0
    from prosfi.train.deepspeed_cpu import skip_shm_op
    from prosfi.train.grpo import SetupError
    from prosfi.train.grpo import run as run_recipe
    from prosfi.train.interrupt import EXIT_INTERRUPTED, Interrupted

    skip_shm_op()  # DeepSpeed on CPU: no build (and no build lock) of an op training never calls
    try:
        run_recipe(resolved, sft_only=sft_only)
    except SetupError as e:
        raise UsageError(f"error: {e}") from None
    except Interrupted as e:  # Ctrl-C, after the stage saved what it could
        print(f"prosfi {name}: {e}", file=sys.stderr)
        return EXIT_INTERRUPTED
    except KeyboardInterrupt:
        print(f"\nprosfi {name}: interrupted (nothing saved at this point: re-running resumes from the last "
              "checkpoint or the finished warm-up, if any)", file=sys.stderr)
        return EXIT_INTERRUPTED
    except OSError as e:
        if not _is_model_load_error(e, resolved.model.model_name_or_path):
            raise
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise UsageError(f"error: cannot load model_name_or_path {resolved.model.model_name_or_path!r}: "
                         f"{first[:300]}. Give a local model folder or a hub id this machine can reach "
                         "(HF_HUB_OFFLINE=1 needs it in the cache).") from None
    return 0


def _is_model_load_error(exc: OSError, model: str) -> bool:
    """transformers' OSError for a model it cannot find or fetch (not a disk error mid-run)."""
    text = str(exc)
    markers = ("not a valid model identifier", "does not appear to have a file named", "huggingface.co",
               "couldn't find them in the cached files")
    return (bool(model) and model in text) or any(m in text for m in markers)
