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
    """A wrong answer the way a careless reader gets one: the chain's last conclusion with its negation
    dropped (`big ann` where the rule says `¬ big ann`) and the answer that goes with it (True for False).

    Only for a True/False problem whose gold chain ends in a negated literal (None otherwise). The verifier
    rejects the last step (the premises entail its negation) and the answer is wrong, so the outcome reward
    and the process reward both pay it least: mixed into a warm-up, it leaves the policy unsure how to read
    a negated rule, which GRPO with either reward can correct (the CPU demo's headroom). `sloppy` starts from
    `sloppy_steps` instead of the gold ones.
    """
    import dataclasses

    steps = gold_steps(problem)
    true = next((k for k, v in (problem.options or {}).items() if v == "True"), None)
    if not steps or problem.answer_label != "False" or true is None:
        return None
    last = steps[-1]["conclusion"]
    if not last.startswith("¬ "):
        return None
    steps = sloppy_steps(steps) if sloppy else [dict(s) for s in steps]
    steps[-1] = {**steps[-1], "conclusion": last[2:]}
    return render_completion(dataclasses.replace(problem, answer=true), steps)
