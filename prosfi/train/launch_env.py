"""`python -m prosfi.train.launch_env RECIPE [--key value ...]`: what a launcher needs to know about a
recipe, as shell assignments (`eval "$(...)"`).

The recipe is resolved with the same overrides the trainers get, so `--model_name_or_path` or
`--sft false` on a launcher's command line reaches the vLLM server and the stage plan too. Nothing is
loaded (it is a dry run), but the trainers' preflight runs (`launch_checks`): a missing data file, sets that
do not fit in it, or `report_to: wandb` without a login stop the launcher in one line, before it starts a
server.
"""

from __future__ import annotations

import contextlib
import shlex
import sys


def assignments(argv: list[str]) -> dict[str, str]:
    from prosfi.train.recipe import resolve, split_argv

    recipe, overrides = split_argv(argv)
    with contextlib.redirect_stdout(sys.stderr):
        resolved = resolve(recipe, overrides, dry_run=True)
        launch_checks(resolved)
    model, script, training = resolved.model, resolved.script, resolved.training
    return {
        "PROSFI_MODEL": str(model.model_name_or_path),
        "PROSFI_MODEL_REVISION": str(model.model_revision or ""),
        "PROSFI_SFT": "1" if script.sft else "",
        "PROSFI_OUTPUT_DIR": str(training.output_dir),
        "PROSFI_BATCH": resolved.batch.line() if resolved.batch else "",
    }


def launch_checks(resolved) -> None:
    """The trainers' preflight, before the launcher starts a vLLM server or a warm-up: model path, output_dir,
    backends, wandb login, and a file dataset's sets (a data file missing, or too small for the warm-up and
    held-out sets). Generated datasets are left to the trainers, which draw them within seconds of starting."""
    from prosfi.train import preflight
    from prosfi.train.problems import is_file_dataset

    script = resolved.script
    preflight.check_model_path(script, resolved.model)
    preflight.check_run_dir(resolved)
    preflight.check_backends(script)
    preflight.check_wandb(resolved.training)
    if is_file_dataset(script) or script.dataset_path:
        preflight.check_data(script)


def main(argv: list[str] | None = None) -> int:
    from prosfi.train.recipe import RecipeError

    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    try:
        values = assignments(argv)
    except RecipeError as e:
        print(f"prosfi: error: {e}", file=sys.stderr)
        return 2
    for key, value in values.items():
        print(f"{key}={shlex.quote(value)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
