"""Gold completions: the exact completion format with atomic, verified steps and the right answer.

Used for SFT warm-up and as the reward's fixed point in tests (they score 1.0 under `prosfi`).
Knights & Knaves steps come from a propositional search (`kk_proof`); True/False ProverQA-style
problems we generated carry their derivation in `extra["proof"]`; other True/False problems (public
ProverQA) get one by forward chaining over ground instances (`fol_proof`), or None; every Uncertain
problem gets the relevant derivation (`fol_proof.derive_uncertain`: what the premises bearing on the
goal force about its constants; the empty chain when no premise bears on the goal), compound goals
included.
"""

from __future__ import annotations

import json
from typing import Any, Sequence

from prosfi.data.problem import Problem
from prosfi.verdict import Entailment, Status

MAX_STEPS = 64
MAX_DEPENDENCIES = 4


def gold_steps(problem: Problem) -> list[dict[str, Any]] | None:
    """The step array of a gold completion, or None when no derivation is known for the problem."""
    if problem.kind == "assignment":
        from prosfi.data.kk_proof import derive_assignment

        found = derive_assignment(problem.premise_map, problem.atoms, problem.assignment, MAX_DEPENDENCIES)
        if found is None:
            return None
        steps = [{"id": s.id, "dependencies": list(s.dependencies), "conclusion": s.conclusion,
                  "rule": s.rule} for s in found]
    else:
        proof = problem.extra.get("proof")
        if not proof or problem.answer_label == "Uncertain":  # Uncertain: the relevant derivation
            from prosfi.data.fol_proof import derive_label

            return derive_label(problem, MAX_STEPS)
        steps = [{"id": s["id"], "dependencies": list(s["dependencies"]), "conclusion": s["conclusion"],
                  "rule": s.get("rule", "modus_ponens")} for s in proof]
    if len(steps) > MAX_STEPS or any(len(s["dependencies"]) > MAX_DEPENDENCIES for s in steps):
        return None
    return steps


def step_entailments(problem: Problem, steps: Sequence[dict[str, Any]]) -> list[Entailment]:
    """One entailment per step: its cited formulas (premises or earlier conclusions) ⊢ its conclusion."""
    known = dict(problem.premise_map)
    out = []
    for s in steps:
        out.append(Entailment({d: known[d] for d in s["dependencies"]}, s["conclusion"], id=s["id"]))
        known[s["id"]] = s["conclusion"]
    return out


def _names(problem: Problem) -> list[str]:
    names = problem.extra.get("names")
    if isinstance(names, list) and len(names) == len(problem.atoms):
        return [str(n) for n in names]
    return [a.split()[-1].capitalize() for a in problem.atoms]


def answer_text(problem: Problem) -> str:
    """The gold `<answer>` content: an option letter, or `(1) Zoey is a knave (2) Oliver is a knight`."""
    if problem.kind == "true_false_uncertain":
        return str(problem.answer)
    from prosfi.data.kk import article, roles_of

    good, bad = roles_of(problem)  # the puzzle's own words: `(1) Chloe is a saint (2) Sophia is a sinner`
    return " ".join(f"({i + 1}) {name} is {article(good if problem.assignment[a] else bad)}"
                    for i, (name, a) in enumerate(zip(_names(problem), problem.atoms)))


def _kk_english(problem: Problem, formula: str) -> str:
    """`¬ Knight zoey → Knight oliver` -> "if Zoey is a knave, then Oliver is a knight"."""
    from prosfi.data.kk import article, roles_of

    by_atom = dict(zip(problem.atoms, _names(problem)))
    good, bad = roles_of(problem)

    def lit(text: str) -> str:
        text = text.strip()
        neg = text.startswith("¬ ")
        atom = text[2:] if neg else text
        return f"{by_atom.get(atom, atom)} is {article(bad if neg else good)}"

    if " → " in formula:
        cond, concl = formula.split(" → ")
        return f"if {' and '.join(lit(c) for c in cond.split(' ∧ '))}, then {lit(concl)}"
    return lit(formula)


def _think(problem: Problem, steps: Sequence[dict[str, Any]]) -> str:
    lines = []
    for s in steps:
        cites = ", ".join(s["dependencies"])
        if problem.kind == "assignment":
            text = _kk_english(problem, s["conclusion"])
            lines.append(f"From {cites}: {text[0].upper()}{text[1:]}.")
        else:
            lines.append(f"From {cites}: {s['conclusion']}.")
    if problem.kind == "true_false_uncertain":
        label = problem.answer_label
        if label == "Uncertain":
            lines.append(f"That is all the premises bearing on {problem.goal} force; neither it nor its "
                         "negation follows, so the statement is uncertain.")
        else:
            lines.append(f"So the statement is {label.lower()}.")
    else:
        lines.append("Every inhabitant's role is settled.")
    return "\n".join(lines)


def render_completion(problem: Problem, steps: Sequence[dict[str, Any]]) -> str:
    """The completion text in the completion format of docs/rewards.md (one step per line in the JSON array)."""
    body = ",\n".join(json.dumps(s, ensure_ascii=False) for s in steps)
    return (f"<think>\n{_think(problem, steps)}\n</think>\n<steps>\n[{body}]\n</steps>\n"
            f"<answer>{answer_text(problem)}</answer>")


def gold_completion(problem: Problem, verifier=None) -> str | None:
    """A gold completion, or None when no derivation is known, or (with a verifier) a step is not
    proved or, for Uncertain, the verifier finds no countermodel to the goal or to its negation."""
    steps = gold_steps(problem)
    if steps is None:
        return None
    if verifier is not None:
        checks = step_entailments(problem, steps)
        if problem.answer_label == "Uncertain":  # an Uncertain trace needs countermodels both ways
            premises, goal = problem.premise_map, problem.goal or ""
            checks += [Entailment(premises, goal, id="uncertain+"),
                       Entailment(premises, f"¬ ({goal})", id="uncertain-")]
        verdicts = verifier.check_many(checks)
        n = len(steps)
        if any(v.status is not Status.VALID for v in verdicts[:n]):
            return None
        if any(v.status is not Status.INVALID for v in verdicts[n:]):
            return None  # the premises entail the goal or its negation (or the verifier cannot tell)
    return render_completion(problem, steps)


def sloppy_steps(steps: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The same steps, each citing only its first id (a chain's rule, not the fact it applies to).

    What a careless model writes: the conclusions and the answer are right, but no step follows from
    what it cites, so the verifier rejects the chain (a countermodel) while an outcome reward cannot
    tell it from the gold one.
    """
    return [{**s, "dependencies": list(s["dependencies"][:1])} for s in steps]


def sloppy_completion(problem: Problem) -> str | None:
    """A completion with the gold answer and `sloppy_steps` (None where no gold steps are known)."""
    steps = gold_steps(problem)
    return render_completion(problem, sloppy_steps(steps)) if steps else None


def careless_completion(problem: Problem, sloppy: bool = False) -> str | None:
    """A wrong answer the way a careless reader gets one: it takes the goal's sign from the *last* premise that
    concludes the goal's predicate (a distractor rule whose condition nobody has, `∀ x, wet x → ¬ big x`) instead
    of the rule the chain reaches, cites that premise in the last step and answers by it.

    Only for a True/False problem whose last such premise has the opposite sign to the gold conclusion (None
    otherwise: there the careless reading gives the right answer). The verifier rejects the last step (its
    rule's condition does not hold) and the answer is wrong, so the outcome reward and the process reward both
    pay it least. Which problems it misreads follows what the prompt shows (an opposite-signed rule about the
    goal after the real one), about as often on True problems as on False ones: mixed into a warm-up, it
    leaves a policy that is wrong on some problems and right on others, never one that gives every problem
    the same answer (issue #36: a warm-up whose wrong answers were all True answered True to everything).
    `sloppy` starts from `sloppy_steps` instead of the gold ones.
    """
    import dataclasses

    steps = gold_steps(problem)
    options = problem.options or {}
    letter = {v: k for k, v in options.items()}
    if not steps or problem.answer_label not in ("True", "False") or not {"True", "False"} <= set(letter):
        return None
    last = steps[-1]
    negated = last["conclusion"].startswith("¬ ")
    atom = last["conclusion"][2:] if negated else last["conclusion"]
    misread = _last_rule_about(problem, atom.split()[0] if atom.split() else "")
    if misread is None or misread[1] == negated or misread[0] in last["dependencies"]:
        return None
    steps = sloppy_steps(steps) if sloppy else [dict(s) for s in steps]
    deps = [misread[0], *steps[-1]["dependencies"][1:]]
    steps[-1] = {**steps[-1], "dependencies": deps, "conclusion": ("¬ " if misread[1] else "") + atom}
    wrong = "True" if misread[1] is False else "False"
    return render_completion(dataclasses.replace(problem, answer=letter[wrong]), steps)


def _last_rule_about(problem: Problem, predicate: str) -> tuple[str, bool] | None:
    """(id, negated) of the last premise `∀ x, … → [¬] predicate x`, in the prompt's order, or None."""
    from prosfi.logic import ast, parse
    from prosfi.logic.errors import FormulaError

    found = None
    for premise in problem.premises:
        try:
            formula = parse(premise.formal)
        except FormulaError:
            continue
        if not (isinstance(formula, ast.Forall) and isinstance(formula.body, ast.Implies)):
            continue
        head = formula.body.right
        negated = isinstance(head, ast.Not)
        head = head.body if negated else head
        if isinstance(head, ast.Pred) and head.name == predicate:
            found = (premise.id, negated)
    return found