"""`ChainConfig`: what makes a step count as a verified, honest inference (every guard on by default)."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any

UNCERTAIN_MODES = ("verify", "cap", "exclude")


@dataclass
class ChainConfig:
    max_dependencies: int = field(
        default=4,
        metadata={"help": "A step citing more ids than this is rejected: steps must be atomic, not 'all "
                  "premises, therefore the goal'."},
    )
    max_steps: int = field(
        default=64, metadata={"help": "Steps beyond this many are rejected unchecked (padding, cost)."}
    )
    max_conjuncts: int = field(
        default=2,
        metadata={"help": "A conclusion may state at most this many facts (clauses of its CNF: `A ∧ B` is 2, "
                  "`A ∧ B → C` is 1), or as many as its largest citation (instantiating a premise is fine); the "
                  "problem's goal or its negation, as many as it states. "
                  "Stops bundling premises into one conjunction. 0 turns the guard off."},
    )
    max_weight: int = field(
        default=4,
        metadata={"help": "A step's weight is the facts its citations carry: 1 per premise, the fact count "
                  "of each cited step's conclusion. Above this the step packs more than one small inference "
                  "(bundles of bundles). 0 turns the guard off."},
    )
    max_rules: int = field(
        default=1,
        metadata={"help": "A step may apply at most this many premise rules (premises other than a literal or "
                  "a conjunction of literals), cited directly or carried in a cited step: a bundle of a rule "
                  "with other facts, or a quantified rule derived from premise rules (a contrapositive, a clause "
                  "form: it counts as the rules it restates). One step applies one rule to facts and earlier "
                  "results; to combine two rules, derive a ground instance of one first. A step concluding a "
                  "quantified rule composes rules instead: it may cite this many premise rules itself, and its "
                  "result carries all of them on. 0 turns the guard off."},
    )
    reject_unused: bool = field(
        default=True,
        metadata={"help": "Reject a step whose conclusion still follows with one of its citations removed "
                  "('unused dependency h3'): a step cites exactly what it uses."},
    )
    reject_fresh_symbols: bool = field(
        default=True,
        metadata={"help": "Reject a conclusion that names a predicate, function or constant found neither in "
                  "its citations nor anywhere in the problem."},
    )
    uncertain: str = field(
        default="verify",
        metadata={"help": "verify: a right Uncertain answer earns the top level only with an earned chain "
                  "(docs/rewards.md); cap: at most the right-but-unverified level; exclude: as cap, and "
                  "Uncertain problems are left out of training sets.", "choices": UNCERTAIN_MODES},
    )
    reject_tautology: bool = field(
        default=True, metadata={"help": "Reject a step whose conclusion is provable from no premises."}
    )
    reject_restatement: bool = field(
        default=True,
        metadata={"help": "Reject a step whose conclusion is (alpha-equivalent to) one of its citations."},
    )
    reject_repeat: bool = field(
        default=True,
        metadata={"help": "Reject a step whose conclusion was already derived by an earlier step."},
    )
    reject_premise_repeat: bool = field(
        default=False,
        metadata={"help": "Also reject a step that re-derives an (uncited) premise. Off by default: "
                  "deriving `P a` from `P a ∧ Q a` is honest even when `P a` is also a premise."},
    )
    goal_by_equivalence: bool = field(
        default=True,
        metadata={"help": "Also accept a verified step logically equivalent to the goal (or an answer "
                  "literal), checked by the verifier both ways; otherwise only textual (canonical) matches."},
    )

    min_steps: int = field(
        default=1,
        metadata={"help": "A chain with fewer steps is not fully verified, except an Uncertain claim where no "
                  "premise bears on the goal's subject (the honest chain is empty there; README 'Rewards'). "
                  "With 0, an empty chain plus a right Uncertain answer earns the top level wherever the "
                  "premises bearing on the goal force nothing about it (or with uncertain guards weakened: "
                  "without any reasoning at all)."},
    )

    # The quantity chain's rules (prosfi.domains.quantity.chain.QuantityRules), flat so a recipe (`chain:
    # {quantity_max_ops: 6}`) and the command line (`--quantity-max-ops 6`) can set them; the domain sits above
    # this layer, so unset (None) means its documented default and `quantity_rules` applies the rest.
    quantity_max_ops: int | None = field(
        default=None,
        metadata={"help": "Quantity steps: the operations one step's expression may use (binary operators, "
                  "unary minus, function calls; a primitive `op` is one). 0: no limit; unset: the domain's "
                  "default (docs/quantity.md)."},
    )
    quantity_rel_tol: float | None = field(
        default=None,
        metadata={"help": "Quantity steps: the relative tolerance of a step's claimed value against the value "
                  "recomputed from the givens. Unset: the domain's default (docs/quantity.md)."},
    )
    quantity_trials: int | None = field(
        default=None,
        metadata={"help": "Quantity chains: random joint re-assignments of the givens the chain is re-evaluated "
                  "under (grounding by dependence); 0 turns it off. Unset: the domain's default "
                  "(docs/quantity.md)."},
    )

    quantity_off: str | None = field(
        default=None,
        metadata={"help": "Quantity chains: named rules switched off for an ablation, comma-separated (grounding, "
                  "structure, insensitive, dependence, unused, collapse, merge, restatement, opaque, reference; "
                  "docs/quantity.md). Unset: every rule on."},
    )
    quantity_reference: str | None = field(
        default=None,
        metadata={"help": "Quantity chains: `auto` judges the answer's composite against the problem's reference "
                  "solution where it carries a trustworthy one, `off` never. Unset: the domain's default "
                  "(auto; docs/quantity.md)."},
    )

    def quantity_rules(self, base: Any) -> Any:
        """`base` (the domain's `QuantityRules`, e.g. `DEFAULT_RULES`) with the `quantity_*` fields set here
        (the tolerance keeps `base`'s other settings); `base` itself when none is set. The quantity chain
        reads its rules through this: `rules or config.quantity_rules(DEFAULT_RULES)`."""
        changes: dict[str, Any] = {}
        if self.quantity_max_ops is not None:
            changes["max_ops"] = self.quantity_max_ops
        if self.quantity_rel_tol is not None:
            changes["tolerance"] = dataclasses.replace(base.tolerance, rel=float(self.quantity_rel_tol))
        if self.quantity_trials is not None:
            changes["trials"] = self.quantity_trials
        if self.quantity_off is not None:
            changes["off"] = self.quantity_off
        if self.quantity_reference is not None:
            changes["reference"] = self.quantity_reference
        return dataclasses.replace(base, **changes) if changes else base

    def __post_init__(self) -> None:
        for name in ("quantity_max_ops", "quantity_trials"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 0):
                raise ValueError(f"ChainConfig.{name} must be an int >= 0 or unset, got {value!r}")
        rel = self.quantity_rel_tol
        if rel is not None and not (isinstance(rel, (int, float)) and not isinstance(rel, bool)
                                    and math.isfinite(rel) and rel >= 0):
            raise ValueError(f"ChainConfig.quantity_rel_tol must be a finite number >= 0 or unset, got {rel!r}")
        if any(getattr(self, f.name) is not None for f in dataclasses.fields(self) if f.name.startswith("quantity_")):
            # the quantity settings are the quantity domain's to judge: once, here, not inside a batch
            for check in _SETTINGS_CHECKS or _load_checks():
                check(self)
        if not isinstance(self.min_steps, int) or self.min_steps < 0:
            raise ValueError(f"ChainConfig.min_steps must be an int >= 0, got {self.min_steps!r}")
        if not isinstance(self.max_dependencies, int) or self.max_dependencies < 1:
            raise ValueError(f"ChainConfig.max_dependencies must be an int >= 1, got {self.max_dependencies!r}")
        if not isinstance(self.max_steps, int) or self.max_steps < 1:
            raise ValueError(f"ChainConfig.max_steps must be an int >= 1, got {self.max_steps!r}")
        for name in ("max_conjuncts", "max_weight", "max_rules"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError(f"ChainConfig.{name} must be an int >= 0 (0: off), got {value!r}")
        if self.uncertain not in UNCERTAIN_MODES:
            raise ValueError(f"ChainConfig.uncertain: {self.uncertain!r} is not one of {', '.join(UNCERTAIN_MODES)}")


__all__ = ["UNCERTAIN_MODES", "ChainConfig"]


# Checks a domain registers for the settings it reads from this config (`register_settings_check`): run once when
# a ChainConfig is built, so `ChainConfig(quantity_trials=17)` fails there with the domain's own message.
_SETTINGS_CHECKS: list = []


def register_settings_check(check) -> None:
    if check not in _SETTINGS_CHECKS:
        _SETTINGS_CHECKS.append(check)


def _load_checks() -> list:
    import importlib

    importlib.import_module("prosfi.domains.quantity.chain")  # registers its check; the domains sit above this layer
    return _SETTINGS_CHECKS
