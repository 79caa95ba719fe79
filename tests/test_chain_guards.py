"""The atomicity, usage, vocabulary and Uncertain guards: honest atomic steps pass, each guard
rejects what it is for with a reason that names it, and turning it off lets the step through."""

from __future__ import annotations

import pytest

from prosfi.chain import ChainBatch, ChainCheck, ChainConfig, Formulas
from prosfi.chain.facts import TOO_MANY, facts, is_fact
from prosfi.data.problem import Problem
from prosfi.logic import parse
from prosfi.trace.answer import parse_answer
from prosfi.trace.schema import Step
from prosfi.verify.config import VerifierConfig
from prosfi.verify.verifier import Verifier


@pytest.fixture(scope="module")
def verifier():
    with Verifier(VerifierConfig(backends=("z3",), workers=1, timeout_ms=2000)) as v:
        yield v


def tfu(premises, goal, answer="A"):
    return Problem.from_dict({"id": "p", "kind": "true_false_uncertain", "goal": goal, "answer": answer,
                              "options": {"A": "True", "B": "False", "C": "Uncertain"},
                              "premises": [{"id": f"h{i + 1}", "formal": f} for i, f in enumerate(premises)]})


def run(verifier, problem, spec, answer="A", config=None):
    steps = [Step(i, tuple(d), c, "r") for i, d, c in spec]
    check = ChainCheck(problem, steps, parse_answer(problem, answer), config or ChainConfig(), Formulas())
    return ChainBatch([check]).check(verifier)[0]


HONEST = {
    "modus ponens with ∀-instantiation": (["∀ x, P x → Q x", "P a"], [("s1", ["h1", "h2"], "Q a")]),
    "∧-introduction of two facts": (["P a", "Q a"], [("s1", ["h1", "h2"], "P a ∧ Q a")]),
    "∧-elimination": (["P a ∧ Q a"], [("s1", ["h1"], "Q a")]),
    "disjunctive syllogism": (["P a ∨ Q a", "¬ P a"], [("s1", ["h1", "h2"], "Q a")]),
    "⊕-elimination": (["Xor' (P a) (Q a)", "P a"], [("s1", ["h1", "h2"], "¬ Q a")]),
    "contraposition": (["∀ x, P x → Q x"], [("s1", ["h1"], "∀ x, ¬ Q x → ¬ P x")]),
    "modus tollens": (["∀ x, P x → Q x", "¬ Q a"], [("s1", ["h1", "h2"], "¬ P a")]),
    "modus ponens with a universal fact": (["∀ x, P x → Q x", "∀ x, P x"], [("s1", ["h1", "h2"], "Q a")]),
    "rule with a conjunctive antecedent": (["∀ x, (P x ∧ R x) → Q x", "P a", "R a"],
                                           [("s1", ["h1", "h2", "h3"], "Q a")]),
    "instantiating a three-fact rule": (["∀ x, P x ↔ (Q x ∧ R x)"], [("s1", ["h1"], "P a ↔ (Q a ∧ R a)")]),
    "K&K case step from one statement and an assumption": (
        ["Knight a ↔ ¬ Knight b", "Knight b ↔ (Knight a ∧ Knight b)"],
        [("s1", ["h1"], "¬ Knight a → Knight b"), ("s2", ["h2"], "¬ Knight a → ¬ Knight b"),
         ("s3", ["s1", "s2"], "Knight a")]),
    "two rules, one per step": (["∀ x, P x → Q x", "∀ x, Q x → R x", "P a"],
                                [("s1", ["h1", "h3"], "Q a"), ("s2", ["h2", "s1"], "R a")]),
    "two rules through a derived instance": (["∀ x, P x → Q x", "∀ x, Q x → R x"],
                                             [("s1", ["h1"], "P a → Q a"), ("s2", ["s1", "h2"], "P a → R a")]),
}


@pytest.mark.parametrize("name", sorted(HONEST))
def test_honest_atomic_steps_pass(verifier, name):
    premises, spec = HONEST[name]
    r = run(verifier, tfu(premises, spec[-1][2]), spec)
    assert r.chain_valid, (name, r.reason)


def test_re_deriving_the_goal_literal_for_a_false_answer(verifier):
    problem = tfu(["∀ x, P x → Q x", "P a"], "¬ Q a", "B")
    r = run(verifier, problem, [("s1", ["h1", "h2"], "Q a"), ("s2", ["s1"], "¬ (¬ Q a)")], "B")
    assert r.chain_valid, r.reason


@pytest.mark.parametrize("spec, guard, off", [
    ([("s1", ["h1", "h2", "h3"], "Q a")], "unused dependency h3 (reject_unused)", {"reject_unused": False}),
    ([("s1", ["h2"], "P a ∨ Zed a"), ("s2", ["h1", "h2"], "Q a")], "fresh symbol Zed (reject_fresh_symbols)",
     {"reject_fresh_symbols": False}),
    ([("s1", ["h2"], "P a ∨ Q zed"), ("s2", ["h1", "h2"], "Q a")], "fresh symbol zed",
     {"reject_fresh_symbols": False}),
    ([("s1", ["h2", "h4", "h5"], "P a ∧ R a ∧ S a"), ("s2", ["s1", "h1"], "Q a")], "max_conjuncts 2", {"max_conjuncts": 0}),
    ([("s1", ["h2", "h4", "h5"], "¬ (P a → ¬ (R a ∧ S a))"), ("s2", ["s1", "h1"], "Q a")], "max_conjuncts 2", {"max_conjuncts": 0}),
    ([("s1", ["h1", "h6", "h2"], "T a")], "applies 2 premise rules h1, h6 (max_rules 1)", {"max_rules": 0}),
    ([("b1", ["h1", "h2"], "(∀ x, P x → Q x) ∧ P a"), ("b2", ["h6", "h4"], "(∀ x, Q x → T x) ∧ R a"),
      ("s1", ["b1", "b2"], "T a")], "applies 2 premise rules h1, h6 (max_rules 1)", {"max_rules": 0}),
    ([("b1", ["h2", "h4"], "P a ∧ R a"), ("b2", ["h5", "h7"], "S a ∧ U a"),
      ("s1", ["b1", "b2", "h1"], "Q a")], "weight 5 (max_weight 4)", {"max_weight": 0, "reject_unused": False}),
])
def test_each_guard_names_itself_and_can_be_turned_off(verifier, spec, guard, off):
    problem = tfu(["∀ x, P x → Q x", "P a", "R b", "R a", "S a", "∀ x, Q x → T x", "U a"], spec[-1][2])
    r = run(verifier, problem, spec)
    assert not r.chain_valid and guard in r.reason, r.reason
    assert run(verifier, problem, spec, config=ChainConfig(**off)).chain_valid


def test_unused_checks_share_the_batch_and_the_cache(verifier):
    problem = tfu(["∀ x, P x → Q x", "P a"], "Q a")
    spec = [("s1", ["h1", "h2"], "Q a")]
    before = verifier.stats()["checks"] if hasattr(verifier, "stats") else None
    checks = [ChainCheck(problem, [Step(i, tuple(d), c, "r") for i, d, c in spec],
                         parse_answer(problem, "A"), ChainConfig(), Formulas()) for _ in range(8)]
    results = ChainBatch(checks).check(verifier)
    assert all(r.chain_valid for r in results)
    if before is not None:  # 8 identical chains: one step check and two unused checks, sent once
        assert verifier.stats()["checks"] - before <= 3


# ---------------------------------------------------------------- Uncertain
UNC = tfu(["∀ x, Cat x → Mammal x", "Cat tom", "∀ x, Mammal x → Pet x", "∀ x, Dog x → Pet x",
           "Cat rex", "∀ x, Blue x → Green x", "Blue tom"], "Dog tom", "C")
UNC_GOLD = [("s1", ["h1", "h2"], "Mammal tom"), ("s2", ["h3", "s1"], "Pet tom")]


def test_earned_uncertain_is_the_relevant_derivation(verifier):
    assert run(verifier, UNC, UNC_GOLD, "C").chain_valid


@pytest.mark.parametrize("spec, why", [
    (UNC_GOLD[:1], "no verified step derives Pet tom"),
    ([("s1", ["h6", "h7"], "Green tom")], "not relevant to the goal (uncertain: verify): cites h6, h7"),
    (UNC_GOLD + [("s3", ["h1", "h5"], "Mammal rex")], "says nothing about tom"),
    ([("s1", ["h2"], "Cat tom ∨ Blue tom")] + UNC_GOLD, "names Blue"),
])
def test_unearned_uncertain_stays_below_the_top(verifier, spec, why):
    r = run(verifier, UNC, spec, "C")
    assert not r.chain_valid and why in r.reason, r.reason


def test_a_step_about_another_constant_counts_when_a_relevant_step_builds_on_it(verifier):
    problem = tfu(["∀ x, Cat x → Mammal x", "Cat rex", "∀ x, Mammal x → Likes tom x", "∀ x, Dog x → Likes tom x"],
                  "Dog tom", "C")
    spec = [("s1", ["h1", "h2"], "Mammal rex"), ("s2", ["h3", "s1"], "Likes tom rex")]
    assert run(verifier, problem, spec, "C").chain_valid


@pytest.mark.parametrize("mode", ["cap", "exclude"])
def test_uncertain_cap_and_exclude(verifier, mode):
    r = run(verifier, UNC, UNC_GOLD, "C", ChainConfig(uncertain=mode))
    assert r.all_verified and not r.established and f"uncertain: {mode}" in r.reason


def test_no_premise_bearing_on_the_goal_cannot_earn_uncertain(verifier):
    r = run(verifier, tfu(["Cat tom", "∀ x, Cat x → Mammal x"], "Dog tom", "C"),
            [("s1", ["h2", "h1"], "Mammal tom")], "C")
    assert not r.chain_valid and "not relevant to the goal" in r.reason
    # nothing bears on the goal: the honest chain is the empty one (issue 21)
    r = run(verifier, tfu(["Cat tom", "∀ x, Cat x → Mammal x"], "Dog tom", "C"), [], "C")
    assert r.chain_valid, r.reason


# ---------------------------------------------------------------- shape
@pytest.mark.parametrize("text, n", [
    ("P a", 1), ("¬ P a", 1), ("P a ∧ Q a", 2), ("¬ (P a → ¬ Q a)", 2), ("¬ (¬ P a ∨ ¬ Q a)", 2),
    ("(P a ∧ Q a) ∨ (P a ∧ Q a)", 2), ("∀ x, P x ∧ Q x", 2), ("(P a ∧ Q a) → R a", 1), ("P a ↔ Q a", 2),
    ("Xor' (P a) (Q a)", 2), ("P a ↔ (¬ Q a ∧ R a)", 3), ("(P a ∧ Q a) ↔ (P a ∧ Q a)", 0),
    ("(P a ∧ Q a ∧ R a) ∨ False", 3), ("∀ x, (P x ∧ Q x) → R x ∨ S x", 1), ("(P a ∨ Q a) → R a", 2),
])
def test_facts_counts_cnf_clauses(text, n):
    assert facts(parse(text)) == n


def test_facts_stops_counting_on_a_blowup():
    text = "Xor' A (Xor' B (Xor' C (Xor' D (Xor' E (Xor' F (Xor' G (Xor' H I)))))))"
    assert facts(parse(text)) == TOO_MANY


@pytest.mark.parametrize("text, fact", [("P a", True), ("P a ∧ ¬ Q b", True), ("P a ∨ Q a", False),
                                        ("∀ x, P x", True), ("∀ x, P x ∧ ¬ Q x", True), ("P a → Q a", False),
                                        ("∀ x, P x → Q x", False), ("∀ x, P x ∨ Q x", False)])
def test_is_fact(text, fact):
    assert is_fact(parse(text)) is fact


def test_uncertain_about_a_constant_nothing_is_known_of(verifier):
    """Nothing is forced about `zed`: the relevant derivation is one relevant rule's instance at
    zed (the gold trace), while a step about `tom` alone is not relevant."""
    from prosfi.data.gold import gold_steps

    problem = tfu(["∀ x, Cat x → Dog x", "Cat tom"], "Dog zed", "C")
    gold = [(s["id"], s["dependencies"], s["conclusion"]) for s in gold_steps(problem)]
    assert gold == [("s1", ["h1"], "Cat zed → Dog zed")]
    assert run(verifier, problem, gold, "C").chain_valid
    r = run(verifier, problem, [("s1", ["h1", "h2"], "Dog tom")], "C")
    assert not r.chain_valid and "says nothing about zed" in r.reason


def test_uncertain_exclude_leaves_uncertain_problems_out_of_training_sets():
    from types import SimpleNamespace

    from prosfi.train.problems import from_script_args

    script = SimpleNamespace(dataset="proverqa_gen", dataset_size=12, dataset_seed=0, dataset_difficulty="easy",
                             dataset_path=None, dataset_exclude_uncertain=False, chain_uncertain="verify")
    assert any(p.answer_label == "Uncertain" for p in from_script_args(script))
    script.chain_uncertain = "exclude"
    problems = from_script_args(script)
    assert len(problems) == 12 and all(p.answer_label != "Uncertain" for p in problems)


# ---------------------------------------------------------------- properties of the fact-counting helpers (chain.facts)
def _formulas():
    from hypothesis import strategies as st

    atom = st.sampled_from(["P a", "Q a", "R a"])
    return st.recursive(atom, lambda sub: st.one_of(
        sub.map(lambda f: f"¬ ({f})"),
        st.tuples(sub, sub, st.sampled_from(["∧", "∨", "→", "↔"])).map(lambda t: f"({t[0]}) {t[2]} ({t[1]})"),
        st.tuples(sub, sub).map(lambda t: f"Xor' ({t[0]}) ({t[1]})")), max_leaves=7)


def _mask(text):
    from prosfi.data.kk_proof import Worlds

    return Worlds(["P a", "Q a", "R a"]).mask(parse(text)), (1 << 8) - 1


def test_facts_is_zero_exactly_for_tautologies_and_countermodels_are_real():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from prosfi.chain.facts import small_countermodel

    @settings(max_examples=300, deadline=None)
    @given(_formulas(), st.lists(_formulas(), max_size=3))
    def check(conclusion, premises):
        m, full = _mask(conclusion)
        n = facts(parse(conclusion))
        assert (n == 0) == (m == full)  # a CNF is valid iff each clause is
        if small_countermodel([parse(p) for p in premises], parse(conclusion)):
            both = full
            for p in premises:
                both &= _mask(p)[0]
            assert both & ~m & full  # a world where the premises hold and the conclusion fails

    check()
