"""Opaque operators are licensed, not free (docs/quantity.md, "Composites", rule 3).

floor, ceil, round, `%`, `//`, min, max and abs throw information away: `16 % 3` is a free 1, `max(g1, g2)` a
free restatement, `round(g / 7)` a free count. Each may appear only in the pattern this table gives, where the
question's words ask for it. The patterns are read off the composites of the operator's arguments: a quotient
has a denominator that depends on something (a given, a step, a listed constant), a difference has terms of
both signs, and an argument "moves" when a given or an atom is in it (it is not built from literals alone).
"""

from __future__ import annotations

from dataclasses import dataclass

from prosfi.quant.licensed import mentions_word


@dataclass(frozen=True)
class OpaqueLicence:
    """Where one opaque operator may appear: its pattern (in words, for the docs) and the words that ask."""

    funcs: tuple[str, ...]
    pattern: str
    words: tuple[str, ...]
    last_step_only: bool = False  # the whole of the last step's expression (the answer is asked that way)


OPAQUE = (
    OpaqueLicence(("floor", "floordiv"), "floor(a / b) or a // b: how many whole groups fit",
                  ("full", "whole", "complete", "completely", "fit", "fits", "at most", "maximum", "most",
                   "entire", "how many times", "can")),
    OpaqueLicence(("ceil",), "ceil(a / b): how many are needed to cover a quotient",
                  ("at least", "minimum", "enough", "need", "needs", "needed", "required", "fewest", "least")),
    OpaqueLicence(("mod",), "a % b as the whole last step: what is left over",
                  ("left over", "leftover", "leftovers", "remain", "remains", "remaining", "remainder", "left"),
                  last_step_only=True),
    OpaqueLicence(("round",), "round(x) or round(x, n) as the whole last step: the answer rounded as asked",
                  ("round", "rounded", "rounding", "nearest"), last_step_only=True),
    OpaqueLicence(("min", "max"), "min/max of two or more values that each move with the givens, whose value is "
                  "no given's number", ("at most", "at least", "maximum", "minimum", "larger", "smaller",
                                        "greater", "greatest", "largest", "smallest", "higher", "highest", "lower",
                                        "lowest", "cheaper", "cheapest", "more expensive", "best", "most", "least",
                                        "longer", "shorter")),
    OpaqueLicence(("abs",), "abs(a - b): the size of a difference",
                  ("difference", "apart", "between", "far")),
)
OPAQUE_FUNCS = frozenset(f for lic in OPAQUE for f in lic.funcs)


def licence(func: str) -> OpaqueLicence | None:
    return next((lic for lic in OPAQUE if func in lic.funcs), None)


def asked(lic: OpaqueLicence, context: str) -> bool:
    return mentions_word(context, lic.words)


def opaque_table() -> str:
    """The licence table as docs/quantity.md shows it (a test keeps the two equal)."""
    rows = ["| operator | allowed only as | asked by the words |", "|---|---|---|"]
    for lic in OPAQUE:
        funcs = ", ".join("`//`" if f == "floordiv" else "`%`" if f == "mod" else f"`{f}`" for f in lic.funcs)
        rows.append(f"| {funcs} | {lic.pattern} | {', '.join(lic.words)} |")
    return "\n".join(rows)


__all__ = ["OPAQUE", "OPAQUE_FUNCS", "OpaqueLicence", "asked", "licence", "opaque_table"]
