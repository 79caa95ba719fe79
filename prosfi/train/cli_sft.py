"""`prosfi sft RECIPE.yaml [--key value ...]`: only the SFT warm-up stage of a recipe."""

from __future__ import annotations

import argparse

from prosfi.train import cli_train


def add_arguments(parser: argparse.ArgumentParser) -> None:
    cli_train.add_arguments(parser)
    parser.usage = cli_train.USAGE.replace("prosfi train", "prosfi sft") + (
        "\n\nRuns the recipe's SFT warm-up on gold traces (sft_* keys) and writes OUTPUT_DIR/sft."
    )


def run(args: argparse.Namespace) -> int:
    return cli_train.run(args, sft_only=True)
