"""Counterfactual symbolic perturbations (CSP) of logic steps: verifier-passing but ungrounded twins of
grounded steps (`LogicDomain.perturbations`; the PRM tools pair and verify them in `prosfi.prm.negatives`).

For a grounded step `chosen` after a prefix (the gold derivation's first steps), candidates are the
one-step consequences of the problem's rules `∀ x, A x → B x` (antecedents that are literals,
conjunctions or disjunctions of literals) instantiated on the problem's constants and matched
against known literals (ground premises and prefix conclusions):
- **wrong_operand**: the same rule as `chosen` on another constant (through a look-alike fact);
- **wrong_principle**: another rule (typically a distractor) applied to the same constant and facts.
`twins` keeps the candidates that are ungrounded (`prosfi.domains.logic.gold_path`), one per conclusion;
the PRM tools then keep those the reward's chain check finds `valid` as the last step of
`prefix + [candidate]` where `chosen` is valid too.

Steps that are not rule applications (K&K biconditionals, exclusive-or eliminations) get no CSP
twins; K&K problems contribute natural negatives only (`next_grounded_step`: the gold step a sampled
chain's prefix could have taken instead of a valid but ungrounded one).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

from prosfi.data.problem import Problem
from prosfi.domains.logic.gold_path import Groundedness, canonical_text
from prosfi.logic import syntax

KINDS = ("wrong_operand", "wrong_principle", "natural")  # the pair kinds of logic problems
MAX_FACTS = 3


def _parse(text: str):
    from prosfi.logic import parse

    return parse(text)


def _literal(f) -> bool:
    from prosfi.logic import Not, Pred

    return isinstance(f, Pred) or (isinstance(f, Not) and isinstance(f.body, Pred))


def _parts(f, cls) -> list:
    if isinstance(f, cls):
        return _parts(f.left, cls) + _parts(f.right, cls)
    return [f]


def rules(problem: Problem) -> list[tuple[str, str | None, Any, Any]]:
    """(premise id, variable or None, antecedent, consequent) of every rule-shaped premise: `∀ x, A → B`,
    a ground `A → B` (the rules ProverQA writes about one named person), and each of the four literal
    implications of an exclusive or `Xor' P Q` (ground or under `∀ x`): P → ¬Q, Q → ¬P, ¬P → Q, ¬Q → P."""
    from prosfi.logic import Forall, FormulaError, Implies, Xor

    out = []
    for p in problem.premises:
        try:
            f = _parse(p.formal)
        except FormulaError:
            continue
        var = None
        if isinstance(f, Forall):
            var, f = f.var, f.body
        if isinstance(f, Implies):
            out.append((p.id, var, f.left, f.right))
        elif isinstance(f, Xor) and _literal(f.left) and _literal(f.right):
            a, b = f.left, f.right
            out += [(p.id, var, a, _neg(b)), (p.id, var, b, _neg(a)), (p.id, var, _neg(a), b), (p.id, var, _neg(b), a)]
    return out


def _neg(f):
    from prosfi.logic import Not

    return f.body if isinstance(f, Not) else Not(f)


def constants(problem: Problem) -> list[str]:
    return syntax.constants([_parse(p.formal) for p in problem.premises])


def known_literals(problem: Problem, prefix: Sequence[dict[str, Any]]) -> dict[str, str]:
    """Canonical ground literal -> the premise or prefix step id that states it (first wins)."""
    from prosfi.logic import FormulaError

    known: dict[str, str] = {}
    for ident, text in [(p.id, p.formal) for p in problem.premises] + [(s["id"], s["conclusion"]) for s in prefix]:
        try:
            f = _parse(text)
        except FormulaError:
            continue
        if _literal(f) and syntax.variable_free(f):
            known.setdefault(canonical_text(text), ident)
    return known


def consequences(problem: Problem, prefix: Sequence[dict[str, Any]]) -> list[tuple[str, str, dict[str, Any]]]:
    """(rule id, constant, step) for every rule instance whose antecedent the known literals satisfy."""
    from prosfi.logic import And, Or, canonical, pretty

    known = known_literals(problem, prefix)
    next_id = _next_id(prefix)
    out = []
    for (rid, var, ante, cons), c in itertools.product(rules(problem), constants(problem)):
        if var is None:
            if c != _constant_of_formula(cons):
                continue  # a ground rule: once, under its own constant
            a, b = ante, cons
        else:
            a, b = syntax.substitute(ante, var, c), syntax.substitute(cons, var, c)
        conj = _parts(a, And)
        if len(conj) > 1:
            ids = [known.get(canonical(x)) if _literal(x) else None for x in conj]
            facts = ids if all(ids) else None
        else:
            disj = _parts(a, Or)
            facts = next(([known[canonical(x)]] for x in disj if _literal(x) and canonical(x) in known), None)
        if not facts or len(facts) > MAX_FACTS:
            continue
        out.append((rid, c, {"id": next_id, "dependencies": [rid] + list(dict.fromkeys(facts)),
                             "conclusion": _text(b, pretty), "rule": "modus_ponens"}))
    return out


def _text(f, pretty) -> str:
    """Literals written as the generators and gold traces write them (`¬ P a`), so a PRM cannot tell a
    perturbation from a gold step by its spacing; other formulas by the pretty printer."""
    from prosfi.logic import Const, Not, Pred

    body, neg = (f.body, "¬ ") if isinstance(f, Not) else (f, "")
    if isinstance(body, Pred) and all(isinstance(a, Const) for a in body.args):
        return neg + " ".join([body.name] + [a.name for a in body.args])
    return pretty(f)


def _next_id(prefix: Sequence[dict[str, Any]]) -> str:
    used = {s["id"] for s in prefix}
    n = len(prefix) + 1
    while f"s{n}" in used:
        n += 1
    return f"s{n}"


def _constant_of(conclusion: str) -> str | None:
    return _constant_of_formula(_parse(conclusion))


def _constant_of_formula(f) -> str | None:
    found = syntax.constants([f])
    return found[0] if found else None


def csp_candidates(problem: Problem, prefix: Sequence[dict[str, Any]], chosen: dict[str, Any]
                   ) -> list[tuple[str, dict[str, Any]]]:
    """(kind, step) perturbations of `chosen` before verification (see the module docstring)."""
    rule_ids = {r[0] for r in rules(problem)}
    chosen_rules = [d for d in chosen["dependencies"] if d in rule_ids]
    if not chosen_rules:
        return []
    rc = chosen_rules[0]
    c_chosen = _constant_of(chosen["conclusion"])
    facts = set(chosen["dependencies"]) - {rc}
    out, other_facts, elsewhere = [], [], []
    known = known_literals(problem, prefix)
    for rid, c, step in consequences(problem, prefix):
        if canonical_text(step["conclusion"]) in known:
            continue  # restates a premise or an earlier step
        if rid == rc and c != c_chosen:
            out.append(("wrong_operand", {**step, "rule": chosen.get("rule") or step["rule"]}))
        elif rid != rc and c == c_chosen:
            # another rule on the same constant: first those sharing a fact with `chosen`, then the rest
            # (deep in a chain the cited fact is a prefix conclusion that only the gold rule consumes)
            cand = ("wrong_principle", {**step, "rule": chosen.get("rule") or step["rule"]})
            (out if facts & set(step["dependencies"]) else other_facts).append(cand)
        elif rid != rc:
            # last: another rule on another constant (a distractor chain started instead of the gold one)
            elsewhere.append(("wrong_principle", {**step, "rule": chosen.get("rule") or step["rule"]}))
    return out + other_facts + elsewhere


def twins(problem: Problem, prefix: Sequence[dict[str, Any]], chosen: dict[str, Any], ground: Groundedness,
          per_kind: int | None = None) -> list[tuple[str, dict[str, Any]]]:
    """The CSP candidates of `chosen` in order of preference, less those on the gold path (`ground`) and
    those restating an earlier candidate's conclusion, at most `per_kind` of each kind (all when None). A
    candidate left out by the cap does not hide a later one with its conclusion."""
    out: list[tuple[str, dict[str, Any]]] = []
    seen: set[str | None] = set()
    per: dict[str, int] = {}
    for kind, cand in csp_candidates(problem, prefix, chosen):
        key = canonical_text(cand["conclusion"])
        if key in seen or ground.on_gold_path(cand["conclusion"]) or (
                per_kind is not None and per.get(kind, 0) >= per_kind):
            continue
        seen.add(key)
        per[kind] = per.get(kind, 0) + 1
        out.append((kind, cand))
    return out


def next_grounded_step(problem: Problem, prefix: Sequence[dict[str, Any]], gold: Sequence[dict[str, Any]],
                       valid: Sequence[bool] | None = None) -> dict[str, Any] | None:
    """The first gold step not yet derived whose citations the (valid steps of the) prefix can supply,
    with its dependencies rewritten to premise and prefix ids."""
    premises = set(problem.premise_map)
    have: dict[str, str] = {}
    for i, s in enumerate(prefix):
        if valid is None or valid[i]:
            key = canonical_text(s["conclusion"])
            if key is not None:
                have.setdefault(key, s["id"])
    gold_by_id = {g["id"]: g for g in gold}
    for g in gold:
        if canonical_text(g["conclusion"]) in have:
            continue
        deps = []
        for d in g["dependencies"]:
            if d in premises:
                deps.append(d)
            elif d in gold_by_id and canonical_text(gold_by_id[d]["conclusion"]) in have:
                deps.append(have[canonical_text(gold_by_id[d]["conclusion"])])
            else:
                deps = None
                break
        if deps is not None:
            return {"id": _next_id(prefix), "dependencies": deps, "conclusion": g["conclusion"],
                    "rule": g.get("rule", "")}
    return None



def written(step: dict[str, Any]) -> dict[str, Any]:
    """A logic step dict as the policy writes it: `{"id", "dependencies", "conclusion", "rule"}`, all strings."""
    return {"id": str(step.get("id", "")), "dependencies": [str(d) for d in step.get("dependencies", [])],
            "conclusion": str(step.get("conclusion", "")), "rule": str(step.get("rule", ""))}


def natural_negatives(problem: Problem, chains: Sequence[Sequence[dict[str, Any]]],
                      verdicts: Sequence[Sequence[str]], ground: Groundedness
                      ) -> list[tuple[list[dict[str, Any]], dict[str, Any], dict[str, Any]]]:
    """(prefix, gold step, rejected step) per valid but ungrounded step of the sampled `chains` (steps as
    written, with their chain-check `verdicts`): the first gold step the prefix's valid steps can cite
    (`next_grounded_step`), once per (prefix conclusions, rejected conclusion)."""
    gold = [written(s) for s in ground.gold or ()]
    out = []
    seen: set[tuple] = set()
    for chain, chain_verdicts in zip(chains, verdicts):
        for k, (step, v) in enumerate(zip(chain, chain_verdicts)):
            if ground.grounded(step["conclusion"], v) is not False:
                continue
            prefix = list(chain[:k])
            chosen = next_grounded_step(problem, prefix, gold, [x == "valid" for x in chain_verdicts[:k]])
            key = (tuple(s["conclusion"] for s in prefix), step["conclusion"])
            if chosen is None or key in seen:
                continue
            seen.add(key)
            out.append((prefix, chosen, step))
    return out


__all__ = ["KINDS", "consequences", "constants", "csp_candidates", "known_literals", "natural_negatives",
           "next_grounded_step", "rules", "twins", "written"]
