"""Completion formats: what a completion looks like, what prompt asks for it and what scores it.

A reward mode (`RewardConfig.mode`, a recipe's `reward_mode`, `--reward`) is the user's name; it selects a
completion format once, in `MODE_FORMATS` below. The `steps` format (`<think>`, `<steps>`, `<answer>`; the
domains' prompts, worked examples and gold traces) serves the modes prosfi, outcome, step_fraction and
format; the `lean_proof` format (`<think>`, `<answer>`, `<lean>`: a whole Lean proof,
`prosfi.rewards.direct_lean`) serves the mode direct_lean.

    from prosfi.rewards.formats import format_for
    fmt = format_for("direct_lean")          # by reward mode
    rows = fmt.prompt_rows(problems)         # the GRPO / eval prompts
    funcs = fmt.reward_funcs(reward_config, lean_config=lean)

Training rows, reward functions, eval prompts and scoring, the recipe checks, preflight and serve ask the
format, never compare a mode's name (`tests/test_domain_seam.py` greps those layers and runs a toy format,
registered in the test, through rows, reward functions and eval scoring). A format is orthogonal to the
problem's domain: the domain still reads the problem (its user prompt, answer, content key); the format says
what the policy writes about it. That is why it is registered here, beside the reward functions that are
its checkers, and not as a Domain (which `domain_for` picks by the problem's kind).

This module imports nothing at import time (`prosfi.rewards.config` derives the mode lists from it);
formats are loaded on first use, so asking for the steps format never imports the Lean one.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

# format name -> (module, class); modules are imported on first use
_REGISTRY: dict[str, tuple[str, str]] = {
    "steps": ("prosfi.rewards.funcs", "StepsFormat"),
    "lean_proof": ("prosfi.rewards.direct_lean", "DirectLeanFormat"),
}
# The one place a reward mode's name is mapped to what it means: reward mode (the user's spelling in recipes,
# RewardConfig and flags) -> format name. Order is the order the modes are listed in messages and help.
MODE_FORMATS: dict[str, str] = {
    "prosfi": "steps",
    "outcome": "steps",
    "step_fraction": "steps",
    "format": "steps",
    "direct_lean": "lean_proof",
}
DEFAULT_FORMAT = "steps"
_LOADED: dict[str, CompletionFormat] = {}


@dataclass(frozen=True)
class FormatColumn:
    """One metric `prosfi eval` reports for a format's completions: `summary.json`'s `metric` = the sum of the
    record column `record` over a problem's completions / the sum of `per` (a record column; "" counts the
    completions), ratio of sums over problems with a bootstrap interval; `summary.md` heads it `heading` (a
    percentage, or a plain number when `mean`)."""

    metric: str  # summary.json key, e.g. "step_validity"
    record: str  # completions.jsonl column (a count or a bool), e.g. "verified_steps"
    heading: str  # summary.md column, e.g. "verified steps"
    per: str = ""  # completions.jsonl column of the denominator; "": completions
    mean: bool = False  # a mean per `per`, shown as a number, not a rate in %


# the steps format's: what its completions' chains did (each completion's `steps` verdicts)
STEP_COLUMNS = (
    FormatColumn("step_validity", "verified_steps", "verified steps", per="n_steps"),
    FormatColumn("unknown_rate", "unknown_steps", "unknown", per="n_steps"),
    FormatColumn("mean_steps", "n_steps", "steps", mean=True),
)


class CompletionFormat:
    """One completion format. The defaults are the steps format's prompts and eval scoring, so a format
    overrides what differs; `reward_funcs` has no default (it is the format's checker)."""

    name: str = ""
    title: str = ""  # how messages name it, e.g. "direct-Lean"
    # the domains' worked examples (`few_shot`) and gold traces (SFT warm-up) are in the steps format: a format
    # whose completions look otherwise has neither
    few_shot: bool = True
    gold_traces: bool = True
    # `prosfi serve` and a recipe's `reward_url` score the steps format only (the service's engine)
    served: bool = True
    # the eval callback (eval_data) may score its completions during training
    eval_scored: bool = True
    # eval's metrics of its completions beside accuracy, format_rate and reward_hit (`FormatColumn`); the
    # record column whose truth (with a right answer) is a reward hit, and what that means in summary.md
    eval_columns: tuple[FormatColumn, ...] = STEP_COLUMNS
    hit_record: str = "chain_valid"
    hit_means: str = "fully verified chain and right answer"

    def prompt_rows(self, problems: Sequence[Any], system_prompt: str | None = None, few_shot: int = 0,
                    chain: Any = None) -> list[dict]:
        """The TRL prompt rows (`prompt` messages, `problem` JSON, ...) of `problems`: by default each
        problem's domain's system prompt under `chain` (a `ChainConfig`) unless one is given, its worked
        examples and user turn (`prosfi.domains.prompts`)."""
        from prosfi.domains.prompts import prompt_rows

        return prompt_rows(problems, system_prompt or None, few_shot, chain=chain)

    def reward_funcs(self, reward_config: Any, chain_config: Any = None, verifier: Any = None,
                     audit_path: str | None = None, *, asynchronous: bool = False,
                     lean_config: Any = None) -> list[Callable]:
        """The TRL reward functions scoring this format under `reward_config` (its levels and mode)."""
        raise NotImplementedError

    def unavailable(self, lean_config: Any = None) -> str:
        """What this machine lacks to score the format ("" when nothing), said as `needs ...: why`; the
        recipe preflight reports it before any model loads."""
        return ""

    def score(self, problems: Sequence[Any], completions: Sequence[str], verifier: Any, reward_config: Any,
              chain_config: Any = None) -> list:
        """Eval's scored records of a batch, one per completion (objects with `to_json()`: the steps format's
        `ScoreResult`s hold the answer, per-step verdicts, reward, reason). By default the steps format's;
        a format that overrides it also sets `eval_columns` and `hit_record` to what its records hold."""
        return get_format(DEFAULT_FORMAT).score(problems, completions, verifier, reward_config, chain_config)

    def eval_record(self, scored: dict) -> dict:
        """The columns `eval_columns` read, from one scored record (`score`'s `to_json()`); by default the
        steps format's step counts."""
        steps = scored.get("steps") or []
        return {"n_steps": len(steps),
                "verified_steps": sum(1 for s in steps if s.get("verdict") == "valid"),
                "unknown_steps": sum(1 for s in steps if s.get("verdict") == "unknown")}

    def eval_notes(self, records: Sequence[dict]) -> list[str]:
        """What a reader of the evaluation's summary must know about how its records were scored (e.g. a
        checker missing on this machine), one line each; none by default."""
        return []

    def __repr__(self) -> str:
        return f"<CompletionFormat {self.name}>"


def get_format(name: str) -> CompletionFormat:
    """The format called `name` (`steps`, `lean_proof`); ValueError for an unknown one."""
    hit = _LOADED.get(name)
    if hit is None:
        if name not in _REGISTRY:
            known = ", ".join(dict.fromkeys([*_REGISTRY, *_LOADED]))
            raise ValueError(f"unknown completion format {name!r}; known: {known}")
        module, cls = _REGISTRY[name]
        hit = _LOADED[name] = getattr(importlib.import_module(module), cls)()
    return hit


def format_for(mode: str) -> CompletionFormat:
    """The format a reward mode selects; ValueError naming the modes for an unknown one."""
    name = MODE_FORMATS.get(mode)
    if name is None:
        raise ValueError(f"unknown reward mode {mode!r}; choose one of {', '.join(MODE_FORMATS)}")
    return get_format(name)


def format_of(mode: Any) -> CompletionFormat:
    """The format that scored a record or a summary whose `mode` / `reward_mode` is `mode`: the steps format
    for none, or for a mode not registered here (records written before formats were, or by a format
    registered elsewhere)."""
    name = MODE_FORMATS.get(mode) if isinstance(mode, str) else None
    return get_format(name or DEFAULT_FORMAT)


def mode_names() -> tuple[str, ...]:
    """Every reward mode, in `MODE_FORMATS` order (read at call time: a format registered later adds its own)."""
    return tuple(MODE_FORMATS)


def modes_of(name: str) -> tuple[str, ...]:
    """The reward modes that select the format `name`, in `MODE_FORMATS` order."""
    return tuple(m for m, f in MODE_FORMATS.items() if f == name)


def register_format(fmt: CompletionFormat, modes: Sequence[str]) -> CompletionFormat:
    """Add a format instance and the reward modes that select it at run time (e.g. one defined outside
    prosfi). A format name or a mode that is taken already is a ValueError."""
    if not fmt.name or not modes:
        raise ValueError(f"{fmt!r}: a format needs a name and at least one reward mode")
    if fmt.name in _REGISTRY or fmt.name in _LOADED:
        raise ValueError(f"a completion format called {fmt.name!r} is registered already")
    taken = [m for m in modes if m in MODE_FORMATS]
    if taken:
        raise ValueError(f"reward modes {', '.join(taken)} select format {MODE_FORMATS[taken[0]]!r} already")
    _LOADED[fmt.name] = fmt
    MODE_FORMATS.update(dict.fromkeys(modes, fmt.name))
    return fmt


__all__ = ["DEFAULT_FORMAT", "MODE_FORMATS", "STEP_COLUMNS", "CompletionFormat", "FormatColumn", "format_for",
           "format_of", "get_format", "mode_names", "modes_of", "register_format"]
