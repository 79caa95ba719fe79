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


# --- zero-fact bundles: binders that share a name -------------------------------------------------

def _zero_fact_bundle(problem):
    """Accumulate every statement into `(∀ x, x = c) ∨ (∀ x, ¬ (x = c)) ∨ (S1 ∧ … ∧ Sk)`, one premise per
    step. Read by name, each CNF clause holds `x = c` and `¬ x = c`, so the bundle looked like it
    stated 0 facts: citing it was free, and one last step per literal (bundle + one statement that
    rules out a one-element domain) did the whole puzzle."""
    c0 = problem.atoms[0].split()[1]
    dis = f"(∀ x, x = {c0}) ∨ (∀ x, ¬ (x = {c0}))"
    steps, acc, prev = [], [], None
    for pid, text in problem.premise_map.items():
        acc.append(f"({text})")
        sid = f"b{len(steps) + 1}"
        steps.append(_step(sid, ([prev] if prev else []) + [pid], f"{dis} ∨ ({' ∧ '.join(acc)})"))
        prev = sid
    return steps


def test_a_bundle_disguised_by_shared_binder_names_is_counted(verifier):
    from prosfi.chain import ChainConfig
    from prosfi.data import kk
    from prosfi.data.gold import answer_text

    problems, texts = [], []
    for p in kk.generate(kk.KKConfig(people=4), 3, 21):
        bundle = _zero_fact_bundle(p)
        lits = [a if p.assignment[a] else f"¬ {a}" for a in p.atoms]
        for e in p.premise_map:  # the statement that rules out a one-element domain
            finals = [_step(f"g{i}", [bundle[-1]["id"], e], lit) for i, lit in enumerate(lits)]
            problems.append(p)
            texts.append(_render(bundle + finals, answer_text(p)))
    no_count = ChainConfig(max_conjuncts=0, max_weight=0, max_rules=0)  # used, fresh, … stay on
    assert any(r.reward == 1.0 for r in score_batch(problems, texts, verifier, chain_config=no_count)), \
        "the hack is malformed: it must be a verified chain once fact counting is off"
    for r in score_batch(problems, texts, verifier):
        assert r.reward < 1.0
        assert "max_conjuncts" in r.reason or "max_weight" in r.reason or "max_rules" in r.reason, r.reason


@pytest.mark.parametrize("text, at_least", [
    ("(∀ x, P x) ∨ (∀ x, ¬ P x) ∨ (A ∧ B ∧ C)", 3),
    ("(∃ x, P x) ∧ ((∀ x, P x) ∨ A) ∧ ((∀ x, P x) ∨ B)", 3),
    ("(∀ x, x = a) ∨ (∀ x, ¬ (x = a)) ∨ (Q a ∧ Q b)", 2),
])
def test_facts_do_not_conflate_binders_that_share_a_name(text, at_least):
    from prosfi.chain.facts import facts

    assert facts(parse(text)) >= at_least
    assert facts(parse("∀ x, P x ∨ ¬ P x ∨ Q a")) == 0  # one binder: a real tautology


# --- soundness of the in-process truth tables, against an independent Z3 encoding -------------------

def _random_check(rng):
    """(premise texts, conclusion text, z3 premises, z3 conclusion) over P/0, Q/1, R/1, S/2, constants
    a, b, c, equality, ⊤/⊥, every connective, and binders that reuse names (`∀ a, …` shadows `a`)."""
    import z3

    U = z3.DeclareSort("U")
    consts = {c: z3.Const(f"k_{c}", U) for c in "abc"}
    preds = {"P": z3.Bool("p_P"), "Q": z3.Function("p_Q", U, z3.BoolSort()),
             "R": z3.Function("p_R", U, z3.BoolSort()), "S": z3.Function("p_S", U, U, z3.BoolSort())}
    arity = {"P": 0, "Q": 1, "R": 1, "S": 2}

    def term(env):
        name = rng.choice(list(env) + list("abc")) if env and rng.random() < 0.7 else rng.choice("abc")
        return name, env.get(name, consts.get(name))

    def gen(depth, env):
        r = rng.random()
        if depth <= 0 or r < 0.3:
            k = rng.random()
            if k < 0.08:
                return ("True", z3.BoolVal(True)) if rng.random() < 0.5 else ("False", z3.BoolVal(False))
            if k < 0.2:
                (s, x), (t, y) = term(env), term(env)
                return f"{s} = {t}", x == y
            p = rng.choice("PQRS")
            args = [term(env) for _ in range(arity[p])]
            return " ".join([p] + [a for a, _ in args]), (preds[p](*[z for _, z in args]) if args else preds[p])
        if r < 0.4:
            t, z = gen(depth - 1, env)
            return f"¬ ({t})", z3.Not(z)
        if r < 0.55:
            v, q = rng.choice("xya"), rng.choice("∀∃")
            zv = z3.Const(f"v{rng.random()}", U)
            t, z = gen(depth - 1, {**env, v: zv})
            return f"{q} {v}, ({t})", (z3.ForAll if q == "∀" else z3.Exists)([zv], z)
        (a, za), (b, zb) = gen(depth - 1, env), gen(depth - 1, env)
        op = rng.choice(["∧", "∨", "→", "↔", "xor"])
        if op == "xor":
            return f"Xor' ({a}) ({b})", z3.Xor(za, zb)
        f = {"∧": z3.And, "∨": z3.Or, "→": z3.Implies, "↔": lambda x, y: x == y}[op]
        return f"({a}) {op} ({b})", f(za, zb)

    def prenex():  # ∀ x y, quantifier-free body: what the universal-instance path uses
        vs = ["x", "y"][: rng.randint(0, 2)]
        env = {v: z3.Const(f"v{rng.random()}", U) for v in vs}
        while True:
            t, z = gen(rng.randint(1, 3), env)
            if "∀" not in t and "∃" not in t:
                break
        for v in reversed(vs):
            t, z = f"∀ {v}, ({t})", z3.ForAll([env[v]], z)
        return t, z

    premises = [prenex() if rng.random() < 0.5 else gen(rng.randint(0, 3), {}) for _ in range(rng.randint(0, 3))]
    conclusion = gen(rng.randint(0, 2), {})
    return premises, conclusion


def test_truth_table_verdicts_agree_with_an_independent_z3_encoding():
    """`valid` and `invalid` from the truth-table paths (ground, and ∀-instances over the constants)
    must agree with Z3 on a separate encoding, over random checks that mix ∀/∃, equality and
    binders that shadow constants."""
    import random

    import z3

    from prosfi.logic.signature import check_signature
    from prosfi.verify import truth_table

    rng = random.Random(20261201)
    decided = 0
    for _ in range(250):
        premises, (ctext, cz) = _random_check(rng)
        ps, c = [parse(t) for t, _ in premises], parse(ctext)
        try:
            signature = check_signature([*ps, c])
        except Exception:  # noqa: BLE001 - e.g. a constant that is also bound: not a check the chain sends
            continue
        v = truth_table.decide(ps, c, signature)
        if v is None or v.status.value not in ("valid", "invalid"):
            continue
        solver = z3.Solver()
        solver.set("timeout", 5000)
        solver.add(*[z for _, z in premises], z3.Not(cz))
        truth = solver.check()
        if truth == z3.unknown:
            continue
        decided += 1
        assert (v.status.value == "valid") == (truth == z3.unsat), ([t for t, _ in premises], ctext, v.detail)
    assert decided >= 150
