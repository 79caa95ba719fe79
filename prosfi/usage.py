"""Newcomer mistakes answered in one line (issue #10's convention for every command): an exception as one
short line, an output folder or a model path checked before any work is done."""

from __future__ import annotations

import contextlib
import io
import os
import sys
from collections.abc import Iterator
from pathlib import Path


class UsageError(ValueError):
    """A mistake in how a command was called (a bad flag value, a missing input file, an output that cannot
    be written): `prosfi`'s entry point prints it as one line, `prosfi CMD: message`, and exits 2. Raise it
    instead of printing and returning 2, so every command answers a usage mistake the same way. `command`
    names a sub-subcommand for the prefix (`UsageError(msg, command="model merge")` prints `prosfi model
    merge: msg`); by default the prefix is the command being run."""

    def __init__(self, message: str, command: str | None = None) -> None:
        super().__init__(message)
        self.command = command


def check_model_path(model: str, flag: str = "--model") -> None:
    """ValueError for a --model that names a local folder which is not there (a hub id passes)."""
    if os.path.exists(model):
        if not os.path.isdir(model):
            raise ValueError(f"{flag} {model} is a file; give a saved model folder or a hub id")
        if os.path.isdir(model) and not os.path.isfile(os.path.join(model, "config.json")):
            raise ValueError(f"{flag} {model}: no config.json in that folder; give a saved model folder "
                             "(e.g. a `prosfi train` output or `prosfi model tiny --out DIR`)")
        return
    if looks_local(model):
        raise ValueError(f"{flag} {model}: no such folder; give a saved model folder (e.g. `prosfi model tiny "
                         "--out DIR`) or a hub id like Qwen/Qwen2.5-0.5B-Instruct")


LOCAL_ROOTS = ("runs", "outputs", "checkpoints", "models")  # prosfi's own output folders


def looks_local(path: str) -> bool:
    """A model path that names a local folder rather than a hub id (`org/name`): `./x`, `/abs`, `~/x`,
    `a/b/c`, a trailing slash, or `runs/x` where `runs/` is a folder here (or one of prosfi's output roots)."""
    if path.startswith(("/", ".", "~")) or path.endswith("/") or path.count("/") > 1 or os.sep == "\\" and "\\" in path:
        return True
    head = path.split("/", 1)[0]
    return "/" in path and (head in LOCAL_ROOTS or os.path.isdir(head))


def one_line(exc: BaseException) -> str:
    """An exception as one line of at most ~500 characters (transformers' errors run over many lines); a long
    one keeps its start and its end, where the advice usually is."""
    if isinstance(exc, OSError) and exc.filename is not None and exc.strerror:
        return f"{exc.filename}: {exc.strerror}"
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 500 else text[:240] + " … " + text[-250:]


def output_folder(path: str | Path, create: bool = True, overwrite: bool = False, resume: bool = False) -> Path:
    """The -o folder, checked before any work: not an existing file, not a folder that already holds files
    (another run's outputs would be silently replaced) unless `overwrite` (--overwrite) or `resume` (the
    command resumes from what is there), creatable (created unless `create` is False, for a check before
    the inputs are known to be usable). ValueError otherwise."""
    out = Path(path)
    if out.exists() and not out.is_dir():
        raise ValueError(f"-o {path} is a file; give a folder to create")
    if out.is_dir() and not (overwrite or resume):
        held = sorted(p.name for p in out.iterdir())
        if held:
            shown = ", ".join(held[:3]) + (", ..." if len(held) > 3 else "")
            raise ValueError(f"-o {path} already holds files ({shown}); add --overwrite to write over them, "
                             "or give another -o")
    if not create:
        return out
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ValueError(f"-o {path}: cannot create the folder: {exc.strerror or exc}") from None
    return out


# top-level module -> the optional extra (pyproject.toml) that installs it
EXTRA_OF = {**dict.fromkeys(("torch", "trl", "transformers", "peft", "accelerate", "datasets", "tokenizers", "wandb",
                             "deepspeed", "matplotlib", "httpx", "safetensors", "huggingface_hub"), "train"),
            "vllm": "vllm", "lean_dojo": "lean"}
_HINT = {"train": " (install torch first: pip install torch==2.13.0, or a CUDA build on GPU nodes)",
         "vllm": " (GPU nodes)", "lean": " (and a Lean toolchain: see docs/lean.md)"}


def missing_extra(exc: ModuleNotFoundError, command: str) -> str | None:
    """The one-line message for a module that an optional extra installs (None: not an extra's module)."""
    top = (exc.name or "").split(".")[0]
    extra = EXTRA_OF.get(top)
    if extra is None:
        return None
    return (f"{command} needs the `{extra}` extra (no module named {top!r}): pip install -e '.[{extra}]' in the "
            f"prosfi checkout{_HINT.get(extra, '')}")



OUTPUT_DESTS = ("output", "out")  # the argparse dests every prosfi writer uses for its output path


def clobbered_input(args) -> str | None:
    """The one-line refusal when a command's output path is one of its inputs (`prosfi check X -o X` would
    empty X before reading it; `prosfi score P C -o C` would replace the completions), else None. Inputs are
    the other string arguments (and list items, and the PATH of `kind:PATH` / `split=PATH` specs) that name an
    existing file; the same file under another name (a link, `./X`) counts."""
    values = vars(args)
    for dest in OUTPUT_DESTS:
        out = values.get(dest)
        if not isinstance(out, str) or out in ("", "-") or not os.path.isfile(out):
            continue  # an output folder is output_folder's business (it refuses one that holds files)
        for name, value in values.items():
            if name in OUTPUT_DESTS:
                continue
            for text in value if isinstance(value, (list, tuple)) else [value]:
                if isinstance(text, str) and any(_same_file(out, p) for p in _paths_in(text)):
                    flag = "-o" if dest == "output" else "--out"
                    return (f"{flag} {out} is also an input ({name.replace('_', '-')} {text}): writing it would "
                            "destroy it; give another output path")
    return None


def _paths_in(text: str) -> list[str]:
    """`text`, and the path in `kind:PATH` or `split=PATH` (eval's --data specs)."""
    out = [text]
    for sep in (":", "="):
        if sep in text:
            out.append(text.split(sep, 1)[1])
            out.append(text.rsplit(sep, 1)[1])
    return out


def _same_file(a: str, b: str) -> bool:
    try:
        return b not in ("", "-") and os.path.exists(b) and os.path.samefile(a, b)
    except OSError:
        return False


def add_overwrite_argument(parser) -> None:
    """--overwrite, for a command that writes an output folder."""
    parser.add_argument("--overwrite", action="store_true",
                        help="write into an output folder that already holds files (they are replaced)")


# printed by transformers on import when WANDB_MODE=offline: it only repeats the user's own setting
WANDB_OFFLINE_NOTICE = "Running in WANDB offline mode"


@contextlib.contextmanager
def stdout_kept_clean() -> Iterator[None]:
    """Run a block whose imports may print (transformers' WANDB offline notice): stdout carries a command's
    YAML, table or JSON, so what the block prints goes to stderr afterwards, without that notice, and not at
    all when the block raises (the error is then the one line)."""
    with contextlib.redirect_stdout(io.StringIO()) as printed:
        yield
    sys.stderr.write("".join(line for line in printed.getvalue().splitlines(keepends=True)
                             if WANDB_OFFLINE_NOTICE not in line))


__all__ = [
    "EXTRA_OF",
    "UsageError",
    "add_overwrite_argument",
    "check_model_path",
    "clobbered_input",
    "looks_local",
    "missing_extra",
    "one_line",
    "output_folder",
    "stdout_kept_clean",
]
