"""Red-team review of the reward (issue 9's threat model, second pass): completions a GRPO policy
could write to earn the top reward without an honest chain, and honest chains the guards refused.

Each case is generated over several problems. A hack must score below 1.0 with the reason naming
what stopped it; an honest chain must score 1.0.
"""

from __future__ import annotations

import json

import pytest

from prosfi.data import pqa_gen
from prosfi.data.problem import Problem
from prosfi.logic import parse
from prosfi.logic.ast import Not, Pred
from prosfi.rewards import score_batch
from prosfi.verify.config import VerifierConfig
from prosfi.verify.verifier import Verifier


@pytest.fixture(scope="module")
def verifier():
    with Verifier(VerifierConfig(backends=("z3",), workers=1, timeout_ms=3000)) as v:
        yield v


def _step(sid, deps, conclusion):
    return {"id": sid, "dependencies": list(deps), "conclusion": conclusion, "rule": "redteam"}


def _render(steps, answer: str, think: str = "redteam") -> str:
    body = ",\n".join(json.dumps(s, ensure_ascii=False) for s in steps)
    return f"<think>\n{think}\n</think>\n<steps>\n[{body}]\n</steps>\n<answer>{answer}</answer>"


def _ground_literals(problem) -> list[tuple[str, str]]:
    """(premise id, text) of the problem's ground literal premises."""
    out = []
    for pid, text in problem.premise_map.items():
        f = parse(text)
        atom = f.body if isinstance(f, Not) else f
        if isinstance(atom, Pred) and "∀" not in text and "∃" not in text:
            out.append((pid, text))
    return out


def _with_goal(problem, goal: str, answer: str = "A") -> Problem:
    d = problem.to_dict()
    d.update(goal=goal, answer=answer, options={"A": "True", "B": "False", "C": "Uncertain"})
    return Problem.from_dict(d)


def _compound_goal_cases(count: int = 6):
    """Problems whose goal is a conjunction of 3 or 5 of their own literal premises (or the denial
    of a disjunction of them), with the honest chain: pairs first, then the goal."""
    cases = []
    for d in ("easy", "medium", "hard", "extra"):
        for p in pqa_gen.generate(pqa_gen.FOLGenConfig(difficulty=d), 4, 11):
            lits = _ground_literals(p)
            if len(lits) < 3:
                continue
            (i1, a), (i2, b), (i3, c) = lits[:3]
            conj3 = f"({a}) ∧ ({b}) ∧ ({c})"
            cases.append((_with_goal(p, conj3), [_step("s1", [i1, i2], f"({a}) ∧ ({b})"),
                                                 _step("s2", ["s1", i3], conj3)]))
            neg = [t[2:] if t.startswith("¬ ") else f"¬ ({t})" for t in (a, b, c)]
            nor = f"¬ (({neg[0]}) ∨ ({neg[1]}) ∨ ({neg[2]}))"
            cases.append((_with_goal(p, nor), [_step("s1", [i1, i2], f"({a}) ∧ ({b})"),
                                               _step("s2", ["s1", i3], nor)]))
            if len(lits) >= 5:
                (i4, e), (i5, g) = lits[3:5]
                conj5 = f"({a}) ∧ ({b}) ∧ ({c}) ∧ ({e}) ∧ ({g})"
                cases.append((_with_goal(p, conj5), [_step("s1", [i1, i2], f"({a}) ∧ ({b})"),
                                                     _step("s2", [i3, i4], f"({c}) ∧ ({e})"),
                                                     _step("s3", ["s1", "s2", i5], conj5)]))
    assert len(cases) >= count, "the generator no longer gives problems with 3 literal premises"
    return cases


def test_compound_goal_of_three_or_more_facts_can_be_earned(verifier):
    """False negative: a True goal stating more than max_conjuncts facts (`A ∧ B ∧ C`, `¬ (A ∨ B ∨ C)`)
    had no honest chain at all, since the step concluding it was a 'bundle'. The problem's own goal
    may state as many facts as it does."""
    cases = _compound_goal_cases()
    results = score_batch([p for p, _ in cases], [_render(s, "True") for _, s in cases], verifier)
    for (p, _), r in zip(cases, results):
        assert r.reward == 1.0, (p.goal, r.reason)


def test_compound_goal_exemption_does_not_admit_bundles(verifier):
    """The exemption is for the goal itself: the same chain concluding the goal plus one more fact,
    or a 3-fact conjunction that is not the goal, is still a bundle."""
    cases = _compound_goal_cases()
    problems, texts = [], []
    for p, steps in cases:
        last = steps[-1]
        extra = _ground_literals(p)[-1]
        problems += [p, p]
        texts.append(_render(steps[:-1] + [_step(last["id"], last["dependencies"],
                                                 f"({p.goal}) ∧ ({extra[1]})")], "True"))
        texts.append(_render(steps[:-1] + [_step(last["id"], last["dependencies"],
                                                 f"({last['conclusion']}) ∧ ({last['conclusion']} ∨ {extra[1]})")],
                             "True"))
    for r in score_batch(problems, texts, verifier):
        assert r.reward < 1.0
        assert any(s.verdict == "rejected" for s in r.steps) or "no verified step concludes" in r.reason, r.reason
