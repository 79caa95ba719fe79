"""`prosfi train RECIPE.yaml [--key value ...]` (also `accelerate launch -m prosfi.train ...`)."""

from __future__ import annotations

import argparse
import contextlib
import sys
import warnings
from pathlib import Path

USAGE = """prosfi train RECIPE.yaml [--key value ...] [--dry-run]

Keys are the fields of prosfi's script arguments, TRL's GRPOConfig and ModelConfig; nested
keys are dotted (--reward.right_verified 1.0) or prefixed (--reward_right_verified 1.0).
`prosfi train RECIPE.yaml --help` lists every key with its help and the recipe's value."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.usage = USAGE
    parser.add_argument("argv", nargs=argparse.REMAINDER, help="the recipe, then --key value overrides")


def split_argv(argv: list[str]) -> tuple[str | None, list[str]]:
    """(recipe path, overrides): the recipe is the first bare argument or the value of --config."""
    argv = list(argv)
    if "--config" in argv:
        i = argv.index("--config")
        if i + 1 >= len(argv):
            raise SystemExit("prosfi train: --config needs a path")
        recipe = argv[i + 1]
        return recipe, argv[:i] + argv[i + 2:]
    if argv and not argv[0].startswith("-"):
        return argv[0], argv[1:]
    return None, argv


def print_keys(recipe: str | None) -> None:
    """Every key with its help; defaults shown are the recipe's values where it sets them."""
    import yaml

    from prosfi.train.recipe import _dests, flatten, make_parser

    parser = make_parser()
    parser.prog = "prosfi train" + (f" {recipe}" if recipe else "")
    if recipe:
        known = _dests(parser)
        config = flatten(yaml.safe_load(Path(recipe).read_text()) or {}, known, recipe)
        parser.set_defaults_with_config(**{k: v for k, v in config.items() if k in known})
    parser.print_help()


def run(args: argparse.Namespace, sft_only: bool = False) -> int:
    from prosfi.train.recipe import RecipeError, resolve

    name = "sft" if sft_only else "train"
    recipe, overrides = split_argv(args.argv)
    if recipe is None and not overrides:
        print(f"usage: {USAGE.replace('prosfi train', f'prosfi {name}')}", file=sys.stderr)
        return 2
    # TRL's GRPOConfig sets `gradient_checkpointing`, which transformers 5 reports as deprecated on every
    # run; the user cannot act on it.
    warnings.filterwarnings("ignore", message="`gradient_checkpointing` is deprecated", category=FutureWarning)
    warnings.filterwarnings("ignore", message="`is_gradient_checkpointing` is deprecated", category=FutureWarning)
    if "--help" in overrides or "-h" in overrides:
        print_keys(recipe)
        return 0
    try:
        # stdout carries the dry run's YAML: anything printed while resolving (transformers prints
        # "[INFO] Running in WANDB offline mode" on import when WANDB_MODE=offline) goes to stderr
        with contextlib.redirect_stdout(sys.stderr):
            resolved = resolve(recipe, overrides)
    except RecipeError as e:
        print(f"prosfi {name}: error: {e}", file=sys.stderr)
        return 2
    if resolved.script.dry_run:
        print(resolved.to_yaml(), end="")
        return 0
    from prosfi.train.grpo import SetupError
    from prosfi.train.grpo import run as run_recipe

    try:
        run_recipe(resolved, sft_only=sft_only)
    except SetupError as e:
        print(f"prosfi {name}: error: {e}", file=sys.stderr)
        return 2
    return 0
