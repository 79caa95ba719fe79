"""What an earned Uncertain answer must show, per problem (cached: the samples of a group share it).

The premises bearing on the goal are those that share a predicate with it, transitively
(`prosfi.logic.relevance.relevant_premises`). An Uncertain chain is earned when every step is
relevant (cites only relevant premises or relevant steps, names only relevant predicates, and
says something about the goal's constants or is cited by a step that does), it derives every
literal about the goal's constants that forward chaining over the relevant premises forces
(`prosfi.data.fol_proof.relevant_derivation`), and the verifier finds countermodels to the goal and to its negation.

When no premise bears on the goal's subject (`relevance.nothing_bears`: no premise names a predicate
of the goal, transitively; or, for a goal about constants, none of those that do names one of them or
is universally quantified, so none has an instance about them), there is nothing to derive: the
honest chain is the empty one (`<steps>[]</steps>`), earned when the verifier finds countermodels
both ways (`min_steps` does not apply there, and any step is irrelevant). Wherever a premise bears on
the goal's subject, `min_steps` and the rules above stand.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from prosfi.data.problem import Problem


@dataclass(frozen=True)
class GoalScope:
    premises: frozenset[str]  # premise ids bearing on the goal
    predicates: frozenset[str]  # their predicates (and the goal's)
    constants: frozenset[str]  # the goal's constants
    required: tuple[str, ...]  # literals the chain must derive (texts)
    error: str = ""  # why no Uncertain chain can be earned here
    empty: bool = False  # no premise bears on the goal: the honest chain is the empty one


def goal_scope(problem: Problem) -> GoalScope:
    key = (problem.goal or "", tuple((p.id, p.formal) for p in problem.premises))
    return _scope(key)


@functools.lru_cache(maxsize=4096)
def _scope(key: tuple) -> GoalScope:
    from prosfi.data.fol_proof import relevant_derivation
    from prosfi.logic.relevance import goal_constants, nothing_bears, relevant_premises

    goal, premises = key
    problem = Problem.from_dict({"id": "scope", "kind": "true_false_uncertain", "goal": goal,
                                 "options": {"A": "True", "B": "False", "C": "Uncertain"}, "answer": "C",
                                 "premises": [{"id": i, "formal": f} for i, f in premises]})
    try:
        ids, preds = relevant_premises(goal, premises)
        consts = goal_constants(goal)
        if nothing_bears(goal, premises):  # nothing to derive: the empty chain, if countermodels exist both ways
            return GoalScope(ids, preds, consts, (), empty=True)
        _, required = relevant_derivation(problem)
    except Exception as exc:  # noqa: BLE001 - a premise outside what the chainer reads
        return GoalScope(frozenset(), frozenset(), frozenset(), (), f"cannot compute the relevant derivation: {exc!r}"[:200])
    return GoalScope(ids, preds, consts, tuple(dict.fromkeys(required)))


__all__ = ["GoalScope", "goal_scope"]
