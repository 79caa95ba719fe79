"""Which premises bear on a goal: those sharing a predicate with it, transitively.

Two layers use it: the gold derivation of an Uncertain problem (`prosfi.data.fol_proof`) and the
Uncertain chain check on the reward path (`prosfi.chain.uncertain`). It lives here, below both,
because the data layer sits below the chain layer; it reads formulas only (premises as
`(id, formula text)` pairs), never a `Problem`.
"""

from __future__ import annotations

from collections.abc import Sequence

from prosfi.logic.parser import parse
from prosfi.logic.syntax import constants, has_forall, predicates

Premises = Sequence[tuple[str, str]]  # (premise id, formula text)


def relevant_premises(goal: str, premises: Premises) -> tuple[frozenset[str], frozenset[str]]:
    """(premise ids, predicate names) bearing on the goal: start from the goal's predicates; a
    premise naming one of them bears on the goal, and its predicates join the set (transitively)."""
    preds = predicates(parse(goal))
    pending = {pid: predicates(parse(formal)) for pid, formal in premises}
    ids: set[str] = set()
    grew = True
    while grew:
        grew = False
        for pid, names in list(pending.items()):
            if names & preds:
                ids.add(pid)
                preds |= names
                del pending[pid]
                grew = True
    return frozenset(ids), frozenset(preds)


def goal_constants(goal: str) -> frozenset[str]:
    """The constants the goal names (what an Uncertain answer must say something about)."""
    return frozenset(constants([parse(goal)]))


def nothing_bears(goal: str, premises: Premises) -> bool:
    """Whether no premise bears on the goal's subject: none shares a predicate with it (transitively,
    `relevant_premises`), or, for a goal about constants, none of those that do names one of them or
    is universally quantified (so no instance about them exists: `∃ x, Turtle x` says nothing about
    `Turtle rock`). Then the relevant derivation is empty and so is the honest Uncertain chain."""
    ids, _ = relevant_premises(goal, premises)
    if not ids:
        return True
    consts = goal_constants(goal)
    if not consts:
        return False
    for pid, formal in premises:
        if pid in ids:
            f = parse(formal)
            if consts & set(constants([f])) or has_forall(f):
                return False
    return True


__all__ = ["Premises", "goal_constants", "nothing_bears", "relevant_premises"]
